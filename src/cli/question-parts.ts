/**
 * The pieces of a keyboard question (the approval, the plan review): its lines as screen rows,
 * folded to fit the screen and paged through on `d`, and a line typed key by key on the
 * question's own line (a refusal's reason, feedback for a new plan). Keys come from the REPL's key router, so only keys pressed after
 * the question is on screen answer it.
 */
import { terminalText } from "../core/terminal-text.js";
import { type DiffLine, paintDiffLine } from "../core/unified-diff.js";
import { PASTED_NEWLINE } from "./repl/paste.js";

/** A folded view still shows at least this many lines. */
const MIN_SHOWN_LINES = 6;
/** The narrowest row a long line is broken into (a terminal narrower than this wraps it). */
const MIN_ROW_CHARS = 20;
/** Marks a row that continues the line above it. */
const CONTINUED = "↪ ";

export interface QuestionIo {
  /**
   * The next single key; undefined when input closed or the signal fired. `text`: a key of a
   * line typed for the question (a reason, feedback), which may come fast or pasted.
   */
  key(signal: AbortSignal, kind?: "answer" | "text"): Promise<string | undefined>;
  /** The question's prompt line is now `text` (the REPL shows a typed-ahead line after it). */
  promptShown?(text: string): void;
  write(text: string): void;
  color: boolean;
  size(): { rows: number; columns: number };
}

/**
 * A line typed after `prompt`, echoed as it is typed, until Enter; Backspace erases. Esc, or the
 * end of input, ends it too: with `esc = "keep"` what was typed stands (an optional reason),
 * with `"discard"` it is dropped (feedback the person thought better of). At most `maxChars`
 * characters are kept. Returns the trimmed text, or undefined when nothing was given.
 */
export async function readKeyedLine(
  io: Pick<QuestionIo, "key" | "write">,
  signal: AbortSignal,
  prompt: string,
  maxChars: number,
  esc: "keep" | "discard" = "keep",
): Promise<string | undefined> {
  io.write(prompt);
  let text = "";
  for (;;) {
    const key = await io.key(signal, "text");
    if (key === undefined || key === "\u001b") {
      if (esc === "discard") text = "";
      break;
    }
    if (key === "\r" || key === "\n") break;
    if (key === "\u007f" || key === "\b") {
      if (text.length > 0) {
        text = [...text].slice(0, -1).join("");
        io.write("\b \b");
      }
      continue;
    }
    // A pasted line break is a space here: the line is one answer.
    const typed = key === PASTED_NEWLINE ? " " : key;
    if (/^[\u0000-\u001f]$/.test(typed) || typed.startsWith("\u001b") || text.length >= maxChars) continue;
    text += typed;
    io.write(terminalText(typed));
  }
  io.write("\n");
  return text.trim() || undefined;
}

/** Pages through every line, a screen at a time; any key but space, Enter or d goes back. */
export async function pageLines(io: QuestionIo, lines: DiffLine[], signal: AbortSignal): Promise<void> {
  const { rows: height, columns } = io.size();
  const per = Math.max(MIN_SHOWN_LINES, height - 2);
  const all = screenRows(lines, columns);
  const pages = Math.ceil(all.length / per);
  for (let p = 0; p < pages; p++) {
    const chunk = all.slice(p * per, (p + 1) * per);
    io.write(`${chunk.map((l) => paintDiffLine(l, io.color)).join("\n")}\n`);
    if (p === pages - 1) break;
    io.write(`-- page ${p + 1} of ${pages} · space: next page · q: back to the question --`);
    const key = await io.key(signal);
    io.write("\r\u001b[2K");
    if (key === undefined || !(key === " " || key === "\r" || key === "d")) break;
  }
}

/**
 * Lines as screen rows: a line wider than the screen is broken into rows (the rows after the
 * first marked `↪`), never cut, so nothing past the edge hides — a command padded with spaces
 * shows its tail. Folding then counts rows, so what is shown fits the screen.
 */
export function screenRows(lines: DiffLine[], columns: number): DiffLine[] {
  const width = Math.max(MIN_ROW_CHARS, columns - 1);
  const rows: DiffLine[] = [];
  for (const line of lines) {
    const chars = [...line.text];
    if (chars.length <= width) {
      rows.push(line);
      continue;
    }
    rows.push({ ...line, text: chars.slice(0, width).join("") });
    for (let at = width; at < chars.length; at += width - CONTINUED.length) {
      rows.push({ ...line, text: `${CONTINUED}${chars.slice(at, at + width - CONTINUED.length).join("")}` });
    }
  }
  return rows;
}

/**
 * The lines that fit under `rows`: all of them, or the first and the last with one fold line
 * between that says how many are folded and how to see them (`how`: the question's `d`).
 */
export function foldLines(
  lines: DiffLine[],
  rows: number,
  how = "press d to page through all of them",
): { shown: DiffLine[]; folded: number } {
  const budget = Math.max(MIN_SHOWN_LINES, rows);
  if (lines.length <= budget) return { shown: lines, folded: 0 };
  const room = budget - 1;
  const head = Math.ceil(room / 2);
  const tail = room - head;
  const folded = lines.length - head - tail;
  return {
    shown: [
      ...lines.slice(0, head),
      {
        style: "note",
        text: `  ┄┄ ${folded} of ${lines.length} lines folded · ${how} ┄┄`,
      },
      ...lines.slice(lines.length - tail),
    ],
    folded,
  };
}
