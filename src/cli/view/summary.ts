/**
 * What the live view says about one tool call: its key argument (`bash  npm test`,
 * `file_edit  src/calc.py`, `http_request  GET https://…`) and a short preview of what it
 * returned (docs/keyboard.md "The live view"). The key argument is the tool's own (its
 * presentation in the call's record); a call without a record is shown as the model wrote it.
 */
import type { Presentation } from "../../tools/types.js";

/** The key argument is cut to this many characters. */
export const KEY_ARG_MAX_CHARS = 100;
/** A preview shows the first this many lines of a result... */
export const PREVIEW_LINES = 3;
/** ...each cut to this many characters. */
export const PREVIEW_LINE_CHARS = 110;

function shorten(text: string, max: number): string {
  const one = text.replace(/\s*\n\s*/g, " ⏎ ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** The argument that says what a call does, on one line: its tool's own presentation. */
export function keyArgument(call: { presentation: Presentation } | undefined, raw: string): string {
  return shorten(call?.presentation.keyArgument ?? raw, KEY_ARG_MAX_CHARS);
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
