/**
 * TLS-capable builtins loaded on first use. `node:https` pulls in `tls` and costs a fresh
 * process ~25 ms; a run against a local http backend that never fetches an https URL
 * should not pay it.
 */
import { lazyRequire } from "./lazy.js";

export const httpsModule = lazyRequire<typeof import("node:https")>("node:https");
export const tlsModule = lazyRequire<typeof import("node:tls")>("node:tls");

/** Child processes: only runs that use bash (or a token command) pay ~15 ms to load it. */
export const childProcessModule = lazyRequire<typeof import("node:child_process")>("node:child_process");
