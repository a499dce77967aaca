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

export function renderUnifiedDiff(
  path: string,
  before: string | null,
  after: string | null,
  /**
   * `exact`: the diff is of what will be written, for someone to approve it: content with NUL
   * bytes is diffed as the text it is (each NUL shown escaped), never summed up as "binary".
   */
  opts: { color: boolean; exact?: boolean },
): string {
  const paint = (style: keyof typeof STYLE, line: string): string =>
    opts.color ? `${STYLE[style]}${line}${STYLE.reset}` : line;
  const safe = (text: string): string => terminalText(redact(text));
  // `a/` and `b/` go before a relative name; an absolute one (a file outside the root) is
  // written as git writes it, `a/tmp/x`, never `a//tmp/x`.
  const name = path.replace(/^\/+/, "");
  const out: string[] = [
    paint("header", safe(`--- ${before === null ? "/dev/null" : `a/${name}`}`)),
    paint("header", safe(`+++ ${after === null ? "/dev/null" : `b/${name}`}`)),
  ];
  const summary = (why: string) =>
    `${out.join("\n")}\n${paint("note", `(${why}: ${lineCount(before)} lines -> ${lineCount(after)} lines)`)}\n`;
  if (!opts.exact && (isBinary(before) || isBinary(after))) return summary("binary content");
  const size = Math.max(Buffer.byteLength(before ?? ""), Buffer.byteLength(after ?? ""));
  if (size > DIFF_MAX_INPUT_BYTES) return summary("too large to show as a diff");
  const patch = loadDiff().structuredPatch(path, path, before ?? "", after ?? "", undefined, undefined, {
    context: CONTEXT_LINES,
    timeout: DIFF_TIMEOUT_MS,
  });
  if (!patch) return summary("too many changes to show as a diff");
  if (patch.hunks.length === 0) return summary("no change");
  const body: string[] = [];
  for (const h of patch.hunks) {
    body.push(paint("hunk", `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`));
    for (const line of h.lines) {
      const text = safe(line);
      if (line.startsWith("-")) body.push(paint("removed", text));
      else if (line.startsWith("+")) body.push(paint("added", text));
      else if (line.startsWith("\\")) body.push(paint("note", text));
      else body.push(text);
    }
  }
  if (body.length > DIFF_MAX_LINES) {
    const rest = body.length - DIFF_MAX_LINES;
    body.length = DIFF_MAX_LINES;
    body.push(paint("note", `… ${rest} more diff lines`));
  }
  return `${[...out, ...body].join("\n")}\n`;
}
