/**
 * Output helpers: answers to stdout, everything else to stderr, always redacted and with
 * control characters neutralised (README "Hostile inputs": one function for every writer).
 */
import { redact } from "../store/redact.js";
import { terminalText } from "./terminal-text.js";

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => {
    process.stdout.write(terminalText(redact(text)));
  },
  err: (text) => {
    process.stderr.write(terminalText(redact(text)));
  },
};

/** Exit codes from SPEC 4. */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;
