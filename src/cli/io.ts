/** Output helpers: answers to stdout, everything else to stderr, always redacted. */
import { redact } from "../store/redact.js";

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Resolves once written output has drained, so a long stream never piles up in memory. */
  drain?(): Promise<void>;
}

export const processIo: Io = {
  out: (text) => {
    process.stdout.write(redact(text));
  },
  err: (text) => {
    process.stderr.write(redact(text));
  },
  drain: () =>
    process.stdout.writableNeedDrain
      ? new Promise((resolve) => process.stdout.once("drain", () => resolve()))
      : Promise.resolve(),
};

/** Exit codes from SPEC 4. */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;
