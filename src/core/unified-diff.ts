/**
 * A unified diff of one file change for the terminal (docs/safety.md "Approval", "Undo"): `---`/`+++`
 * headers (`/dev/null` for a file that did not or will not exist), `@@` hunks with three
 * lines of context, `-old` and `+new` lines, coloured when asked.
 *
 * The text comes from the model and the files: every line is redacted and its control
 * characters neutralised here, before any colour is added, because this output goes to the
 * terminal as it is (colour escapes cannot pass the ordinary `Io` writers).
 *
 * The `diff` package is loaded on first use, so runs that never show a diff never pay for it.
 */
import { lazyRequire } from "./lazy.js";
import { redact } from "./redact.js";
import { terminalText } from "./terminal-text.js";

/** Lines of unchanged context around each change. */
const CONTEXT_LINES = 3;
/** A diff longer than this many lines is cut, with a count of the rest. */
export const DIFF_MAX_LINES = 400;
/** Content larger than this (either side) is summarised, not diffed: a diff of it helps nobody. */
export const DIFF_MAX_INPUT_BYTES = 1024 * 1024;
/** The diff algorithm gives up after this long on pathological input (then: a summary). */
const DIFF_TIMEOUT_MS = 1000;

const loadDiff = lazyRequire<typeof import("diff")>("diff");

const STYLE = {
  removed: "\u001b[31m",
  added: "\u001b[32m",
  hunk: "\u001b[36m",
  header: "\u001b[1m",
  note: "\u001b[2m",
  reset: "\u001b[0m",
} as const;

function lineCount(text: string | null): number {
  if (text === null || text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function isBinary(text: string | null): boolean {
  return text?.includes("\u0000") ?? false;
}

/** One line of a diff before any colour: its style and its (redacted, neutralised) text. */
export interface DiffLine {
  style?: keyof typeof STYLE;
  text: string;
}

/** A diff as lines, with what it adds and removes; `note` set when it is a summary, not a diff. */
export interface DiffLines {
  header: DiffLine[];
  body: DiffLine[];
  added: number;
  removed: number;
  note?: string;
}

/** First and last lines of content too large to diff that an approval still shows. */
export const LARGE_WRITE_SHOWN_LINES = 20;

/**
 * The diff of one change as lines (headers, hunks, `+`/`-`/context lines).
 * `exact`: the diff is of what will be written, for someone to approve it: content with NUL
 * bytes is diffed as the text it is (each NUL shown escaped), never summed up as "binary",
 * and content too large to diff still shows its first and last lines, with how many lie between.
 */
export function diffLines(
  path: string,
  before: string | null,
  after: string | null,
  opts: { exact?: boolean } = {},
): DiffLines {
  const safe = (text: string): string => terminalText(redact(text));
  // `a/` and `b/` go before a relative name; an absolute one (a file outside the root) is
  // written as git writes it, `a/tmp/x`, never `a//tmp/x`.
  const name = path.replace(/^\/+/, "");
  const header: DiffLine[] = [
    { style: "header", text: safe(`--- ${before === null ? "/dev/null" : `a/${name}`}`) },
    { style: "header", text: safe(`+++ ${after === null ? "/dev/null" : `b/${name}`}`) },
  ];
  const counts = { added: lineCount(after), removed: lineCount(before) };
  const summary = (why: string, body: DiffLine[] = []): DiffLines => {
    const note = `${why}: ${lineCount(before)} lines -> ${lineCount(after)} lines`;
    return { header, body: [{ style: "note", text: `(${note})` }, ...body], ...counts, note };
  };
  if (!opts.exact && (isBinary(before) || isBinary(after))) return summary("binary content");
  const size = Math.max(Buffer.byteLength(before ?? ""), Buffer.byteLength(after ?? ""));
  if (size > DIFF_MAX_INPUT_BYTES) {
    if (!opts.exact || after === null) return summary("too large to show as a diff");
    return summary("too large to show as a diff", edgesOf(after, safe));
  }
  const patch = loadDiff().structuredPatch(path, path, before ?? "", after ?? "", undefined, undefined, {
    context: CONTEXT_LINES,
    timeout: DIFF_TIMEOUT_MS,
  });
  if (!patch) return summary("too many changes to show as a diff");
  if (patch.hunks.length === 0) return { ...summary("no change"), added: 0, removed: 0 };
  const body: DiffLine[] = [];
  let added = 0;
  let removed = 0;
  for (const h of patch.hunks) {
    // An empty side starts at the line before it, as diff(1) writes it: a new file is `-0,0`.
    const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
    const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
    body.push({ style: "hunk", text: `@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@` });
    for (const line of h.lines) {
      const text = safe(line);
      if (line.startsWith("-")) {
        removed += 1;
        body.push({ style: "removed", text });
      } else if (line.startsWith("+")) {
        added += 1;
        body.push({ style: "added", text });
      } else if (line.startsWith("\\")) body.push({ style: "note", text });
      else body.push({ text });
    }
  }
  return { header, body, added, removed };
}

/** The first and last lines of new content too large to diff, and how many lie between. */
function edgesOf(after: string, safe: (t: string) => string): DiffLine[] {
  const lines = after.split("\n");
  if (after.endsWith("\n")) lines.pop();
  const n = LARGE_WRITE_SHOWN_LINES;
  const plus = (l: string): DiffLine => ({ style: "added", text: safe(`+${l}`) });
  if (lines.length <= 2 * n) return lines.map(plus);
  return [
    ...lines.slice(0, n).map(plus),
    { style: "note", text: `… ${lines.length - 2 * n} lines not shown …` },
    ...lines.slice(-n).map(plus),
  ];
}

/** Paints diff lines for a terminal (or leaves them plain). */
export function paintDiffLine(line: DiffLine, color: boolean): string {
  return color && line.style ? `${STYLE[line.style]}${line.text}${STYLE.reset}` : line.text;
}

/** A diff as text for the terminal; longer than DIFF_MAX_LINES, it is cut with a count of the rest. */
export function renderUnifiedDiff(
  path: string,
  before: string | null,
  after: string | null,
  opts: { color: boolean; exact?: boolean },
): string {
  const d = diffLines(path, before, after, opts);
  const body = d.body.slice(0, DIFF_MAX_LINES);
  if (d.body.length > DIFF_MAX_LINES)
    body.push({ style: "note", text: `… ${d.body.length - DIFF_MAX_LINES} more diff lines` });
  return `${[...d.header, ...body].map((l) => paintDiffLine(l, opts.color)).join("\n")}\n`;
}
