/**
 * What the live view says about one tool call: its key argument (`bash  npm test`,
 * `file_edit  src/calc.py`, `http_request  GET https://…`) and a short preview of what it
 * returned (docs/keyboard.md "The live view"). The key argument is the tool's own (its
 * presentation in the call's record); a call without a record is shown as the model wrote it.
 * A command's preview is its last lines with the true size of everything it printed, and what
 * the model saw of it when that was less.
 */
import type { OutputSummary } from "../../tools/output-tally.js";
import type { Presentation } from "../../tools/types.js";

/** The key argument is cut to this many characters. */
export const KEY_ARG_MAX_CHARS = 100;
/** A preview shows the first this many lines of a result (a command's output: the last)... */
export const PREVIEW_LINES = 3;
/** ...each cut to this many characters. */
export const PREVIEW_LINE_CHARS = 110;

function shorten(text: string, max: number): string {
  const one = text.replace(/\s*\n\s*/g, " ⏎ ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** The argument that says what a call does, on one line: its tool's own presentation. */
export function keyArgument(call: { presentation: Presentation }): string {
  return shorten(call.presentation.keyArgument, KEY_ARG_MAX_CHARS);
}

/** The first lines of a result and how many more there are. */
export function preview(text: string): { lines: string[]; more: number } {
  const all = text.replace(/\s+$/, "").split("\n");
  if (all.length === 1 && all[0] === "") return { lines: [], more: 0 };
  const lines = all.slice(0, PREVIEW_LINES).map((l) => {
    const t = l.replace(/\t/g, "  ");
    return t.length > PREVIEW_LINE_CHARS ? `${t.slice(0, PREVIEW_LINE_CHARS - 1)}…` : t;
  });
  return { lines, more: Math.max(0, all.length - PREVIEW_LINES) };
}

/**
 * A count with thousands separators: `199,997`. Written out rather than `Intl.NumberFormat`,
 * whose locale data costs every run several megabytes of memory (bench/before.mjs, peak RSS).
 */
export function thousands(n: number): string {
  const [whole, fraction] = String(Math.abs(n)).split(".");
  const grouped = whole!.replace(/\B(?=(\d{3})+$)/g, ",");
  return `${n < 0 ? "-" : ""}${grouped}${fraction === undefined ? "" : `.${fraction}`}`;
}

const UNITS = ["B", "KB", "MB", "GB", "TB"] as const;

/** A size in decimal units (1 KB = 1000 bytes), one decimal below 10: `980 B`, `2 KB`, `1.3 MB`. */
export function humanBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  let unit = 0;
  let v = n;
  while (v >= 1000 && unit < UNITS.length - 1) {
    v /= 1000;
    unit += 1;
  }
  let shown = v < 10 ? Number(v.toFixed(1)) : Math.round(v);
  // 999,999 bytes reads 1 MB, not 1000 KB.
  if (shown >= 1000 && unit < UNITS.length - 1) {
    unit += 1;
    shown = Number((shown / 1000).toFixed(1));
  }
  return `${shown} ${UNITS[unit]}`;
}

/**
 * The last lines of a command's output (trailing blank lines left out) and the line that says
 * how much more there was: `… 199,997 more lines (1.3 MB; the model saw 2 KB)`. The size and
 * what the model saw are said only when the model did not see it all (`model.all`).
 */
export function outputTail(
  o: OutputSummary,
  model: { bytes: number; all: boolean },
): { lines: string[]; note: string | undefined } {
  const tail = [...o.tail];
  while (tail.length > 0 && tail[tail.length - 1]!.trim() === "") tail.pop();
  const lines = tail.slice(-PREVIEW_LINES).map((l) => l.replace(/\t/g, "  "));
  const more = Math.max(0, o.lines - lines.length);
  const size = model.all ? undefined : `${humanBytes(o.bytes)}; the model saw ${humanBytes(model.bytes)}`;
  let note: string | undefined;
  if (more > 0) note = `… ${thousands(more)} more line${more === 1 ? "" : "s"}${size ? ` (${size})` : ""}`;
  else if (size) note = `… ${humanBytes(o.bytes)} in all; the model saw ${humanBytes(model.bytes)}`;
  return { lines, note };
}
