/**
 * Help text on a terminal narrower than its lines (docs/commands.md): each long line is broken
 * between words, its continuation rows indented under the line's description column (the text
 * after the first run of two spaces), so `scoot --help` reads at 80 columns. Piped help stays
 * as written.
 */

/** A description column further right than this share of the width is not kept for continuations. */
const MAX_HANGING_SHARE = 0.5;

function hangingIndent(line: string, width: number): number {
  const column = /^(\s*\S.*?\s{2,})\S/.exec(line)?.[1]?.length;
  if (column !== undefined && column <= width * MAX_HANGING_SHARE) return column;
  return (/^\s*/.exec(line)?.[0].length ?? 0) + 2;
}

function wrapLine(line: string, width: number): string {
  if (line.length <= width) return line;
  const indent = " ".repeat(hangingIndent(line, width));
  const rows: string[] = [];
  let rest = line;
  while (rest.length > width) {
    const at = rest.lastIndexOf(" ", width);
    // A word longer than the row is left whole rather than split.
    const cut = at > indent.length ? at : rest.indexOf(" ", width);
    if (cut < 0) break;
    rows.push(rest.slice(0, cut).trimEnd());
    rest = indent + rest.slice(cut + 1).trimStart();
  }
  rows.push(rest);
  return rows.join("\n");
}

export function wrapHelp(text: string, width: number | undefined): string {
  if (!width) return text;
  return text
    .split("\n")
    .map((l) => wrapLine(l, width))
    .join("\n");
}
