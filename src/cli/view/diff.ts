/**
 * A unified diff of one file change, as the live view and the approval prompt show it
 * (README "The live view"). The `diff` library computes the hunks; it is loaded on the first
 * diff, so runs that change no file never pay for it. Every line is redacted and its control
 * characters neutralised before it is coloured: file content is untrusted text.
 */
import type * as DiffLib from "diff";
import { lazyRequire } from "../../lazy.js";
import { redact } from "../../store/redact.js";
import { terminalText } from "../terminal-text.js";
import { makeStyle } from "./style.js";

const diffLib = lazyRequire<typeof DiffLib>("diff");

/** Lines of context around each change. */
export const DIFF_CONTEXT_LINES = 3;
/** At most this many diff lines are shown; the rest is counted. */
export const DIFF_MAX_LINES = 120;

export function renderUnifiedDiff(
  path: string,
  before: string | null,
  after: string | null,
  opts: { color: boolean },
): string {
  const s = makeStyle(opts.color);
  const patch = diffLib().structuredPatch(
    before === null ? "/dev/null" : `a/${path}`,
    after === null ? "/dev/null" : `b/${path}`,
    before ?? "",
    after ?? "",
    undefined,
    undefined,
    { context: DIFF_CONTEXT_LINES },
  );
  const clean = (line: string) => terminalText(redact(line));
  const lines: string[] = [
    s.bold(clean(`--- ${patch.oldFileName}`)),
    s.bold(clean(`+++ ${patch.newFileName}`)),
  ];
  let body = 0;
  let hidden = 0;
  for (const hunk of patch.hunks) {
    const all = [
      s.cyan(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`),
      ...hunk.lines.map((l) => {
        const text = clean(l);
        if (l.startsWith("+")) return s.green(text);
        if (l.startsWith("-")) return s.red(text);
        if (l.startsWith("\\")) return s.dim(text);
        return text;
      }),
    ];
    for (const line of all) {
      if (body < DIFF_MAX_LINES) lines.push(line);
      else hidden += 1;
      body += 1;
    }
  }
  if (hidden > 0) lines.push(s.dim(`… ${hidden} more diff line${hidden === 1 ? "" : "s"}`));
  return `${lines.join("\n")}\n`;
}
