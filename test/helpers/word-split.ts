/**
 * Words the terminal broke at its edge (docs/keyboard.md "Lines on a terminal"): Scoot wraps
 * its lines a column short of the edge, so a row that fills the whole width was wrapped by the
 * terminal itself — and when that row ends in a letter or digit and the next row starts with
 * one, a word was cut in two. Rows are as `capture-pane` gives them without `-J` (one per
 * screen row, trailing spaces dropped).
 */
import { textWidth } from "../../src/cli/view/width.js";

export interface SplitWord {
  /** The index of the row that ends in the first part. */
  row: number;
  /** The two rows around the split. */
  rows: [string, string];
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

function lastChar(row: string): string {
  return [...row].at(-1) ?? "";
}

function firstChar(row: string): string {
  return [...row][0] ?? "";
}

/** Every place in `rows` where a word runs over the edge of a `width`-column screen. */
export function splitWords(rows: readonly string[], width: number): SplitWord[] {
  const found: SplitWord[] = [];
  for (let i = 0; i + 1 < rows.length; i++) {
    const row = rows[i]!;
    const next = rows[i + 1]!;
    if (textWidth(row) !== width) continue;
    if (WORD_CHAR.test(lastChar(row)) && WORD_CHAR.test(firstChar(next)))
      found.push({ row: i, rows: [row, next] });
  }
  return found;
}
