/**
 * The one writer of a run's console (docs/keyboard.md "The live view"): the answer on stdout, every
 * other line on stderr, and on a terminal one status line (the spinner) that is erased
 * before anything else is written and drawn again after.
 *
 * A stderr line never lands inside a streamed stdout line: while the answer's current line
 * is open, stderr lines wait and follow once it ends.
 */
import type { Io } from "../io.js";

const ERASE_LINE = "\r\x1b[2K";

export interface Screen {
  /** Answer text, as it streams (redacted and neutralised by `io.out`). */
  out(text: string): void;
  /** Plain text for stderr (redacted and neutralised by `io.err`). */
  err(text: string): void;
  /**
   * Text for stderr that the caller has already redacted and neutralised and may have
   * coloured; on a terminal it goes out as it is.
   */
  styled(text: string): void;
  /** Sets (or, undefined, removes) the status line; drawn only on a terminal. */
  status(line: string | undefined): void;
  /** Whether the status line can be drawn (stderr is a terminal). */
  readonly live: boolean;
}

export function makeScreen(io: Io, rawErr?: (text: string) => void): Screen {
  let outOpen = false;
  let errOpen = false;
  let statusLine: string | undefined;
  let drawn = false;
  const waiting: { text: string; styled: boolean }[] = [];

  const erase = () => {
    if (drawn && rawErr) rawErr(ERASE_LINE);
    drawn = false;
  };
  const draw = () => {
    if (!rawErr || statusLine === undefined || outOpen || errOpen) return;
    rawErr(`${ERASE_LINE}${statusLine}`);
    drawn = true;
  };
  const writeErr = (text: string, styled: boolean) => {
    if (text === "") return;
    erase();
    if (styled && rawErr) rawErr(text);
    else io.err(text);
    errOpen = !text.endsWith("\n");
    draw();
  };
  const flushWaiting = () => {
    while (waiting.length > 0 && !outOpen) {
      const w = waiting.shift()!;
      writeErr(w.text, w.styled);
    }
  };
  const toErr = (text: string, styled: boolean) => {
    if (outOpen) waiting.push({ text, styled });
    else writeErr(text, styled);
  };

  return {
    live: rawErr !== undefined,
    out(text) {
      if (text === "") return;
      erase();
      if (errOpen) {
        // A streamed thought line ends before the answer starts below it.
        io.err("\n");
        errOpen = false;
      }
      io.out(text);
      outOpen = !text.endsWith("\n");
      if (!outOpen) flushWaiting();
      draw();
    },
    err: (text) => toErr(text, false),
    styled: (text) => toErr(text, true),
    status(line) {
      statusLine = line;
      if (line === undefined) erase();
      else draw();
    },
  };
}
