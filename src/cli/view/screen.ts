/**
 * The one writer of a run's console (docs/keyboard.md "The live view"): the answer on stdout, every
 * other line on stderr, and on a terminal a block of lines at the bottom — the status lines (the
 * spinner and a running command's newest output) and under them the footer (what another part
 * of Scoot sets, such as the REPL's echo of what is typed ahead) — erased before anything else
 * is written and drawn again after, each line cut to the terminal's width so it never wraps.
 *
 * A stderr line never lands inside a streamed stdout line: while the answer's current line
 * is open, stderr lines wait and follow once it ends. The block may still be drawn then, on the
 * rows below that line, with the cursor put back where the line goes on.
 *
 * On a terminal, text wraps between words at the width (wrap.ts), the column tracked across
 * streamed pieces; on a pipe it goes out byte for byte.
 */
import { redact } from "../../core/redact.js";
import { terminalText } from "../../core/terminal-text.js";
import type { Io } from "../io.js";
import { cutToWidth, textWidth } from "./width.js";
import { LineWrap } from "./wrap.js";

/** Columns when the terminal does not say. */
export const DEFAULT_COLUMNS = 80;

const ERASE_LINE = "\x1b[2K";
const UP = (n: number) => `\x1b[${n}A`;
const DOWN = (n: number) => `\x1b[${n}B`;
/** Moves to a column (1-based) of the current row. */
const COLUMN = (n: number) => `\x1b[${n}G`;

export interface Screen {
  /** Answer text, as it streams (redacted and neutralised here). */
  out(text: string): void;
  /** Plain text for stderr (redacted and neutralised here). */
  err(text: string): void;
  /**
   * Text for stderr that the caller has already redacted and neutralised and may have
   * coloured; on a terminal it goes out as it is (wrapped at words).
   */
  styled(text: string): void;
  /**
   * Sets (or, undefined or empty, removes) the status lines: the first block at the bottom of
   * the terminal. Each line must already be redacted and neutralised and may be coloured; it
   * is cut to the width. Drawn only when `live`.
   */
  status(lines: readonly string[] | undefined): void;
  /**
   * Sets (or, undefined or empty, removes) the footer: lines drawn below the status lines,
   * erased and drawn again with them; same rules as `status`. Drawn only when `live`.
   */
  footer(lines: readonly string[] | undefined): void;
  /**
   * Erases the block and keeps it off the screen (its lines stay set) until `resume`: for a
   * writer that draws on the terminal itself (the approval question, an interrupt notice), which
   * would otherwise write after the block's last row and leave the block's rows miscounted.
   */
  suspend(): void;
  /** Draws the block again after `suspend`, below whatever was written meanwhile. */
  resume(): void;
  /** Whether the block (status and footer) can be drawn (the live view is on a terminal). */
  readonly live: boolean;
  /** The terminal's width in columns (DEFAULT_COLUMNS when it does not say). */
  columns(): number;
}

export interface ScreenTerminal {
  /** Writes to stderr as it is; present when stderr is a terminal. */
  err?: (text: string) => void;
  /** Writes to stdout as it is; present when stdout is a terminal (the answer then wraps). */
  out?: (text: string) => void;
  /** Whether the block is drawn (the live view is on; with `--trace` it is not). */
  live?: boolean;
  /** The terminal's width, read at every write (it follows a resize). */
  columns?: () => number | undefined;
}

/**
 * Where the block sits: at the cursor, or below a line still open at column `col`; the width of
 * each of its lines and the terminal's columns when it was drawn.
 */
type Drawn = { widths: number[]; columns: number } & ({ below: false } | { below: true; col: number });

/**
 * The rows the block takes now. A terminal that was made narrower since rewraps each line wider
 * than it onto more rows (tmux and most terminals do), and the cursor moves with the text: the
 * block is erased whole, so no stale spinner line stays behind (docs/keyboard.md "The live view").
 */
function rowsNow(d: Drawn, columns: number): number {
  if (columns >= d.columns) return d.widths.length;
  return d.widths.reduce((n, w) => n + Math.max(1, Math.ceil(w / columns)), 0);
}

/** The column (0-based) the cursor of a line open at `col` is at once the terminal has `columns`. */
function columnNow(col: number, columns: number): number {
  return col <= columns ? col : col - columns * Math.floor((col - 1) / columns);
}

/**
 * The width of the terminal `stream` writes to, asked of the terminal itself (TIOCGWINSZ through
 * the stream's handle) at each read. Node updates `stream.columns` only once it handles the
 * SIGWINCH a resize sends, and its loop runs due timers first: a spinner tick between a resize
 * and that signal erased the block by the old width, and a terminal that had rewrapped it kept a
 * row of it (docs/keyboard.md "The live view"). The handle is asked without the stream's own
 * refresh, which would emit 'resize' in the middle of a draw. `stream.columns` when it cannot say.
 */
export function columnsNow(stream: NodeJS.WriteStream): number | undefined {
  const handle = (stream as { _handle?: { getWindowSize?: (size: number[]) => number } })._handle;
  const size: number[] = [];
  try {
    if (typeof handle?.getWindowSize === "function" && handle.getWindowSize(size) === 0 && (size[0] ?? 0) > 0)
      return size[0];
  } catch {
    // Not a terminal's handle after all: the stream's own figure.
  }
  return stream.columns;
}

export function makeScreen(io: Io, term: ScreenTerminal = {}): Screen {
  const rawErr = term.err;
  const rawOut = term.out;
  const live = Boolean(rawErr && term.live);
  const columns = () => term.columns?.() || DEFAULT_COLUMNS;
  // Lines stop a column short of the edge: a line that fills the last column leaves some
  // terminals waiting to wrap, and the block's cursor arithmetic would be a row off.
  const width = () => columns() - 1;
  const outWrap = rawOut ? new LineWrap() : undefined;
  const errWrap = rawErr ? new LineWrap() : undefined;
  let outOpen = false;
  let errOpen = false;
  let statusLines: readonly string[] = [];
  let footerLines: readonly string[] = [];
  let drawn: Drawn | undefined;
  let suspended = false;
  const waiting: { text: string; styled: boolean }[] = [];

  /** What erases the block, leaving the cursor where it was before the block was drawn. */
  const erase = (): string => {
    const d = drawn;
    drawn = undefined;
    if (!d) return "";
    const now = columns();
    const rows = rowsNow(d, now);
    let s = "";
    if (d.below) s += DOWN(rows);
    s += `\r${ERASE_LINE}`;
    for (let i = 1; i < rows; i++) s += `${UP(1)}${ERASE_LINE}`;
    if (d.below) s += `${UP(1)}${COLUMN((now < d.columns ? columnNow(d.col, now) : d.col) + 1)}`;
    return s;
  };
  /** What draws the block, if it may be drawn now. */
  const draw = (): string => {
    if (!live || drawn || suspended) return "";
    const lines = [...statusLines, ...footerLines];
    if (lines.length === 0) return "";
    // Below an open answer line only when its column is known (stdout is this terminal).
    let openCol: number | undefined;
    if (outOpen) {
      if (!outWrap) return "";
      openCol = outWrap.column;
    } else if (errOpen) openCol = errWrap!.column;
    const w = width();
    const cut = lines.map((l) => cutToWidth(l, w));
    const block = cut.join("\n");
    const widths = cut.map(textWidth);
    if (openCol === undefined) {
      drawn = { widths, columns: columns(), below: false };
      return block;
    }
    drawn = { widths, columns: columns(), below: true, col: openCol };
    return `\n${block}${UP(lines.length)}${COLUMN(openCol + 1)}`;
  };
  const redraw = () => {
    if (!rawErr) return;
    const s = erase() + draw();
    if (s !== "") rawErr(s);
  };

  const writeErr = (text: string, styled: boolean) => {
    if (text === "") return;
    if (!rawErr || !errWrap) {
      io.err(text);
      errOpen = !text.endsWith("\n");
      return;
    }
    const safe = styled ? text : terminalText(redact(text));
    const before = erase();
    const wrapped = errWrap.feed(safe, width());
    errOpen = errWrap.open;
    rawErr(before + wrapped + draw());
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
    live,
    columns,
    out(text) {
      if (text === "") return;
      const before = erase();
      if (before !== "") rawErr?.(before);
      if (errOpen) {
        // A streamed thought line ends before the answer starts below it.
        if (rawErr && errWrap) rawErr(errWrap.feed("\n", width()));
        else io.err("\n");
        errOpen = false;
      }
      if (rawOut && outWrap) {
        rawOut(outWrap.feed(terminalText(redact(text)), width()));
        outOpen = outWrap.open;
      } else {
        io.out(text);
        outOpen = !text.endsWith("\n");
      }
      if (!outOpen) flushWaiting();
      const after = draw();
      if (after !== "") rawErr?.(after);
    },
    err: (text) => toErr(text, false),
    styled: (text) => toErr(text, true),
    suspend() {
      suspended = true;
      redraw();
    },
    resume() {
      suspended = false;
      redraw();
    },
    status(lines) {
      // Nothing to erase or draw: the spinner's stop comes with most events.
      if (statusLines.length === 0 && (lines?.length ?? 0) === 0) return;
      statusLines = lines ?? [];
      redraw();
    },
    footer(lines) {
      footerLines = lines ?? [];
      redraw();
    },
  };
}
