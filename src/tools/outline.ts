/**
 * `outline`: a compact skeleton of one file (definitions and signatures, Markdown
 * headings, each with its line number) so the model can map a file before reading
 * windows of it.
 *
 * Code is parsed with real tree-sitter grammars where Scoot ships one (loaded lazily, on
 * the first file that needs it); Markdown has exact heading rules; anything else gets a
 * keyword heuristic. A grammar that fails to load, or a parse that runs out of time,
 * degrades to the heuristic, and the header line says so, rather than failing the call.
 */
import * as fs from "node:fs";
import { clip } from "../core/clip.js";
import type { Effects, Result, Target } from "../core/types.js";
import { CLIP } from "./clip.js";
import { declareInput, type InputOf, str } from "./declare.js";
import { checkOpenedFile, judgedPath, OPEN_JUDGED_READ, SWAPPED_FOR_SYMLINK } from "./fs-util.js";
import type { Collected } from "./outline/entry.js";
import { outlineInHelper } from "./outline/grammar-process.js";
import { outlineHeuristic } from "./outline/heuristic.js";
import { isMarkdown, languageFor } from "./outline/languages.js";
import { outlineMarkdown } from "./outline/markdown.js";
import { done, failed, stoppedBy } from "./result.js";
import type { Presentation, Tool, ToolContext, ToolResult } from "./types.js";

/** Entries listed at most (seed: 400); the rest are counted in a closing marker. */
export const MAX_OUTLINE_ENTRIES = 400;
/** Largest file outlined; bigger files are refused with a pointer to `grep`. */
export const MAX_OUTLINE_FILE_BYTES = 1024 * 1024;
/** Leading bytes checked for NUL to call a file binary (the same window git uses). */
const BINARY_SNIFF_BYTES = 8000;
/** Longest a parse may run (a 1 MiB file parses in about a second) before the heuristic takes over. */
const MAX_PARSE_MS = 10_000;
/** Share of the tool deadline a parse may use when the deadline is short. */
const PARSE_SHARE_OF_TIMEOUT = 0.7;
/** Indentation per nesting level in the listing. */
const INDENT = "  ";
/** The input, declared once: type, validation (the same messages as every file tool), prompt shape. */
const INPUT = declareInput("outline", { path: str('"..."', { example: '"src/main.ts"' }) }, (input) =>
  input.path.includes("\0")
    ? { ok: false, error: 'outline: "path" must not contain a NUL byte' }
    : { ok: true, value: input },
);
export type OutlineInput = InputOf<typeof INPUT.fields>;

const parse = INPUT.parse;

function effects(input: OutlineInput): Effects {
  return { capability: "read", readPaths: [input.path] };
}

function present(input: OutlineInput): Presentation {
  return { title: `Outline ${input.path}`, keyArgument: input.path, locations: [{ path: input.path }] };
}

async function run(input: OutlineInput, ctx: ToolContext, target: Target): Promise<ToolResult> {
  if (ctx.signal.aborted) return failed("error: outline aborted", stoppedBy(ctx.signal));
  const judged = judgedPath(target.read, "outline");
  if (!judged.ok) return failed(`error: ${judged.error}`);
  const source = readSource(judged.value, input.path, ctx);
  if (!source.ok) return failed(`error: ${source.error}`);
  // The parse gets most of the tool's time, leaving room to fall back to the heuristic.
  const budget = Math.min(MAX_PARSE_MS, Math.floor(ctx.timeoutMs * PARSE_SHARE_OF_TIMEOUT));
  const text = await outlineSource(input.path, source.value, { deadlineAt: Date.now() + budget });
  // A grammar that failed or a parse out of time still outlines, by the heuristic: done.
  return done(clip(text, CLIP.outline));
}

/** The file as text, or why it cannot be outlined (missing, directory, too large, binary). */
function readSource(file: string, shown: string, ctx: Pick<ToolContext, "services">): Result<string> {
  let fd: number;
  try {
    // The judged path, opened without following a symlink swapped in since the decision.
    fd = fs.openSync(file, OPEN_JUDGED_READ);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, error: `no such file: ${shown}` };
    if (code === "ELOOP") return { ok: false, error: `cannot read ${shown}: ${SWAPPED_FOR_SYMLINK}` };
    return { ok: false, error: `cannot read ${shown}: ${code ?? String(e)}` };
  }
  try {
    const checked = checkOpenedFile(fd, file, ctx, "outline", shown, {
      directory: "outline takes one file (use glob to list files)",
      protectedShown: JSON.stringify(shown),
    });
    // Outline's errors are worded without the tool's name.
    if (!checked.ok) return { ok: false, error: checked.error.replace(/^outline: /, "") };
    const st = checked.value;
    if (st.size > MAX_OUTLINE_FILE_BYTES) {
      return {
        ok: false,
        error: `${shown} is too large to outline (${st.size} bytes; the limit is ${MAX_OUTLINE_FILE_BYTES}); use grep to find definitions`,
      };
    }
    let data: Buffer;
    try {
      data = fs.readFileSync(fd);
    } catch (e) {
      return { ok: false, error: `cannot read ${shown}: ${(e as NodeJS.ErrnoException).code ?? String(e)}` };
    }
    // The file may have grown since stat.
    if (data.length > MAX_OUTLINE_FILE_BYTES) {
      return { ok: false, error: `${shown} is too large to outline (over ${MAX_OUTLINE_FILE_BYTES} bytes)` };
    }
    if (data.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
      return { ok: false, error: `${shown} is a binary file (${data.length} bytes); nothing to outline` };
    }
    return { ok: true, value: data.toString("utf8").replace(/^\uFEFF/, "") };
  } finally {
    fs.closeSync(fd);
  }
}

export interface OutlineOptions {
  /** Epoch ms after which parsing gives up and the heuristic answers instead. */
  deadlineAt: number;
  /** Grammar directory override (tests use it to make a grammar fail). */
  grammarDir?: string;
  /** Entry cap override (defaults to MAX_OUTLINE_ENTRIES). */
  limit?: number;
}

/** The outline text of `text`, which came from the file named `shown`. */
export async function outlineSource(shown: string, text: string, opts: OutlineOptions): Promise<string> {
  const limit = opts.limit ?? MAX_OUTLINE_ENTRIES;
  if (isMarkdown(shown)) return render(shown, "Markdown headings", outlineMarkdown(text, limit), "headings");
  const spec = languageFor(shown, text);
  if (!spec) return render(shown, "keyword heuristic, best effort", outlineHeuristic(text, limit));
  const parsed = await outlineInHelper(text, spec, {
    limit,
    deadlineAt: opts.deadlineAt,
    grammarDir: opts.grammarDir,
  });
  if (parsed.ok) {
    // Preprocessor-split braces and newer syntax than the grammar knows also land here,
    // so this says what happened without calling the file wrong.
    const note = parsed.hasError ? "; parts did not parse, entries may be incomplete" : "";
    return render(shown, `${spec.name}, tree-sitter${note}`, parsed.collected);
  }
  const why =
    parsed.reason === "deadline"
      ? `the ${spec.name} parse did not finish in time`
      : `the ${spec.name} grammar failed to load: ${parsed.error}`;
  return render(shown, `keyword heuristic, because ${why}`, outlineHeuristic(text, limit));
}

function render(shown: string, how: string, found: Collected, noun = "definitions"): string {
  const head = `outline of ${shown} (${how})`;
  if (found.total === 0) return `${head}: no ${noun} found`;
  const lines = [`${head}: ${found.total} ${found.total === 1 ? "entry" : "entries"}`];
  for (const e of found.entries) lines.push(`${INDENT.repeat(e.depth)}L${e.line}: ${e.text}`);
  const rest = found.total - found.entries.length;
  if (rest > 0) lines.push(`... ${rest} more (outline capped at ${found.entries.length} entries)`);
  return lines.join("\n");
}

export const outlineTool: Tool<OutlineInput> = {
  name: "outline",
  describe:
    "Skeleton of one file: functions, classes and types with their signature lines, or Markdown " +
    "headings, each with its line number (L<n>). Use it to map a file, then file_read a window. " +
    "Read-only.",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.outline,
  preferOverShell: true,
  /** Read-only: may run as a `parallel` child. */
  parallelChild: () => undefined,
  parse,
  effects,
  present,
  run,
};
