/**
 * Output helpers: answers to stdout, everything else to stderr, always redacted and with
 * control characters neutralised (docs/safety.md "Hostile inputs": one function for every writer).
 * On a terminal the process's own streams wrap between words at its width (docs/keyboard.md
 * "Lines on a terminal"); on a pipe or in a file they carry the text as written.
 */
import { redact } from "../core/redact.js";
import { terminalText } from "../core/terminal-text.js";
import { LineWrap, MIN_WRAP_WIDTH } from "./view/wrap.js";

/** Columns a terminal is taken to have when it does not say. */
const DEFAULT_COLUMNS = 80;

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
  /**
   * The width text written to `stream` is wrapped at, when it is wrapped (a terminal); undefined
   * when it goes out as written. A table sized to it fits rather than wraps.
   */
  wrapWidth?(stream: "out" | "err"): number | undefined;
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

/**
 * The width a terminal's text wraps at: a column short of its edge, as the live view's lines
 * (a line that fills the last column leaves some terminals waiting to wrap).
 */
export function terminalWrapWidth(stream: NodeJS.WriteStream): number | undefined {
  if (!stream.isTTY) return undefined;
  return Math.max(MIN_WRAP_WIDTH, (stream.columns || DEFAULT_COLUMNS) - 1);
}

/**
 * Writes to `stream`, wrapped between words at its width while `wrapped` and a terminal. The
 * column is followed from one write to the next; each write is shown whole (nothing is held).
 */
function streamWriter(stream: NodeJS.WriteStream, wrapped: boolean): (text: string) => void {
  const lines = new LineWrap({ hang: true });
  return (text) => {
    const width = wrapped ? terminalWrapWidth(stream) : undefined;
    if (width === undefined) stream.write(text);
    else stream.write(lines.feed(text, width) + lines.flush(width));
  };
}

/** The process's own streams; stdout wrapped on a terminal unless it carries data. */
function processStreamsIo(wrapOut: boolean): Io {
  const write = { out: streamWriter(process.stdout, wrapOut), err: streamWriter(process.stderr, true) };
  return {
    processStreams: true,
    ...neutralisedIo(write),
    wrapWidth: (stream) => {
      if (stream === "err") return terminalWrapWidth(process.stderr);
      return wrapOut ? terminalWrapWidth(process.stdout) : undefined;
    },
    drain: drainStdout,
  };
}

function drainStdout(): Promise<boolean> {
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
}

export const processIo: Io = processStreamsIo(true);
/** The same, with stdout left as written even on a terminal: for a command whose stdout is data. */
const processDataIo: Io = processStreamsIo(false);

/**
 * `io` with stdout left as written, for a command whose stdout is data (JSON, records, a
 * protocol): wrapped lines would not copy back as what was written. A test's writers are as they are.
 */
export function dataStdout(io: Io): Io {
  return io === processIo ? processDataIo : io;
}

/**
 * Exit codes (docs/commands.md "Commands"). `rejected` is `audit export`'s own: everything was
 * sent, but the collector refused or rejected records for good (sending again would not help;
 * they are recorded in state/telemetry-rejected.jsonl), unlike `failed` (try again later).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, rejected: 3, interrupted: 130 } as const;
