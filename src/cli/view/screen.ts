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
const UP_AND_ERASE = "\x1b[1A\x1b[2K";
const DEFAULT_COLUMNS = 80;

/** Cuts a line to `width` visible characters; colour escapes do not count and are kept. */
function cutVisible(line: string, width: number): string {
  let visible = 0;
  let out = "";
  for (const part of line.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith("\x1b[")) {
      out += part;
      continue;
    }
    for (const ch of part) {
      if (visible >= width) return `${out}\x1b[0m`;
      out += ch;
      visible += 1;
    }
  }
  return out;
}

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
  /**
   * Sets (or removes) lines drawn under the status line, erased and drawn again with it (the
   * REPL's echo of what is typed during a run). Only on a terminal.
   */
  footer(lines: string[] | undefined): void;
  /** Whether the status line can be drawn (stderr is a terminal). */
  readonly live: boolean;
}

export function makeScreen(io: Io, rawErr?: (text: string) => void): Screen {
  let outOpen = false;
  let errOpen = false;
  let statusLine: string | undefined;
  let footerLines: string[] = [];
  /** Rows of the block (status and footer) on screen now; 0: nothing drawn. */
  let drawn = 0;
  const waiting: { text: string; styled: boolean }[] = [];

  const erase = () => {
    if (drawn > 0 && rawErr) rawErr(ERASE_LINE + UP_AND_ERASE.repeat(drawn - 1));
    drawn = 0;
  };
  const draw = () => {
    const block = [...(statusLine === undefined ? [] : [statusLine]), ...footerLines];
    if (!rawErr || block.length === 0 || outOpen || errOpen) return;
    const width = (process.stderr.columns || DEFAULT_COLUMNS) - 1;
    // A block line that wrapped would leave a row behind when erased: each is cut to the width.
    rawErr(`${ERASE_LINE}${block.map((l) => cutVisible(l, width)).join("\n")}`);
    drawn = block.length;
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
      erase();
      statusLine = line;
      draw();
    },
    footer(lines) {
      erase();
      footerLines = lines ?? [];
      draw();
    },
  };
}
