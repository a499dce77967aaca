/** Atomic file replacement lives in core (src/core/atomic-write.ts); re-exported for tools. */
export { type AtomicWriteOptions, atomicWriteFile } from "../core/atomic-write.js";
