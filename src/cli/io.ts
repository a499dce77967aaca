/**
 * Output helpers: answers to stdout, everything else to stderr, always redacted and with
 * control characters neutralised (docs/safety.md "Hostile inputs": one function for every writer).
 */
import { redact } from "../core/redact.js";
import { terminalText } from "../core/terminal-text.js";

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /**
   * Resolves once written output has drained, so a long stream never piles up in memory; false
   * when the reader has gone (`scoot audit show id | head`): the caller stops reading.
   */
  drain?(): Promise<boolean>;
  /**
   * These writers are the process's own stdout and stderr, so a terminal there may be drawn on
   * directly (the live view); a test's writers are not.
   */
  processStreams?: true;
}

let stdoutGone = false;
let watchingStdout = false;

/**
 * Streaming commands write many times; once the reader closes the pipe each write
 * fails with EPIPE, which would crash the process with a stack trace. Watched from the first
 * drain(), so commands that write once keep Node's default handling.
 */
function watchStdout(): void {
  if (watchingStdout) return;
  watchingStdout = true;
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
    stdoutGone = true;
  });
}

/** Writers that get every text redacted and with control characters neutralised. */
export function neutralisedIo(write: { out(text: string): void; err(text: string): void }): Io {
  return {
    out: (text) => write.out(terminalText(redact(text))),
    err: (text) => write.err(terminalText(redact(text))),
  };
}

export const processIo: Io = {
  processStreams: true,
  ...neutralisedIo({
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  }),
  drain: () => {
    watchStdout();
    if (stdoutGone) return Promise.resolve(false);
    if (!process.stdout.writableNeedDrain) return Promise.resolve(true);
    return new Promise((resolve) => {
      // A failed write destroys the stream: "close" comes instead of "drain".
      const done = () => {
        process.stdout.off("drain", done);
        process.stdout.off("close", done);
        resolve(!stdoutGone && !process.stdout.destroyed);
      };
      process.stdout.once("drain", done);
      process.stdout.once("close", done);
    });
  },
};

/**
 * Exit codes (docs/commands.md "Commands"). `rejected` is `audit export`'s own: everything was
 * sent, but the collector refused or rejected records for good (sending again would not help;
 * they are recorded in state/telemetry-rejected.jsonl), unlike `failed` (try again later).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, rejected: 3, interrupted: 130 } as const;
