/**
 * `glob {pattern, root?="."}`: the paths under `root` that match a glob, sorted.
 *
 * The walk is driven by the pattern: each directory is visited with the set of pattern
 * positions still alive there, so a literal prefix (`src/tools/*.ts`) goes straight to its
 * directory without listing anything else and a directory no alternative can match is never
 * opened. `.git` is never entered; `node_modules` only when the pattern names it. Symlinks are
 * listed when they match but never followed. Directories that match are listed with a
 * trailing "/". Paths are relative to `root`, with "/" separators.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { canJudgeDescriptors, realPathOf } from "../core/fd-path.js";
import type { Result } from "../core/types.js";
import { OPENED_ELSEWHERE } from "../policy/opened.js";
import { hiddenPlacePaths } from "../sandbox/launch.js";
import { CLIP } from "./clip.js";
import { declareInput, optStr, str } from "./declare.js";
import { judgedPath, statPath } from "./fs-util.js";
import { compileGlob, type GlobPath, matchSegment } from "./glob-pattern.js";
import { done, failed, stoppedBy } from "./result.js";
import type { Tool } from "./types.js";

/** Paths listed at most; the rest are counted. */
export const MAX_GLOB_RESULTS = 1000;
/** Directories never entered. */
export const SKIPPED_DIRS: readonly string[] = [".git"];
/** Directories skipped unless the pattern mentions them by name: they bury real results. */
export const NOISE_DIRS: readonly string[] = ["node_modules"];
/** The walk is synchronous per directory; it yields this often so the deadline can fire. */
const YIELD_EVERY_MS = 20;
/** A state is alternative × STRIDE + segment index (patterns are at most 1000 characters). */
const STRIDE = 4096;

export interface GlobInput {
  pattern: string;
  root: string;
  alternatives: GlobPath[];
}

/** The input, declared once: validation, prompt shape and example; `GlobInput` adds the compiled pattern. */
const INPUT = declareInput(
  "glob",
  {
    pattern: str('"src/**/*.ts"', { example: '"src/**/*.ts"' }),
    root: optStr('"."', { example: '"."' }),
  },
  (input): Result<GlobInput> => {
    const alternatives = compileGlob(input.pattern.trim());
    if (!alternatives.ok) return { ok: false, error: `glob: ${alternatives.error}` };
    return {
      ok: true,
      value: { pattern: input.pattern, root: input.root ?? ".", alternatives: alternatives.value },
    };
  },
);

export const globTool: Tool<GlobInput> = {
  name: "glob",
  describe:
    'List paths under root (default ".") matching a glob: * ? [] stay within one directory level, ** spans levels, {a,b} alternatives. Sorted; directories end in /; .git and node_modules are skipped unless named.',
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.glob,
  preferOverShell: true,
  /** Read-only: may run as a `parallel` child. */
  parallelChild: () => undefined,

  parse: INPUT.parse,

  effects(input) {
    return { capability: "read", readPaths: [input.root] };
  },

  present: (input) => {
    const where = input.root !== "." ? ` in ${input.root}` : "";
    return {
      title: `Find ${input.pattern}${where}`,
      keyArgument: `${input.pattern}${where}`,
      locations: [{ path: input.root }],
      search: true,
    };
  },

  async run(input, ctx, target) {
    const shownRoot = JSON.stringify(input.root);
    const judged = judgedPath(target.read, "glob");
    if (!judged.ok) return failed(judged.error);
    // The judged root has every symlink resolved; below it the walk never follows one.
    const rootAbs = judged.value;
    const st = statPath(rootAbs);
    if (!st.ok) return failed(`glob: cannot read root ${shownRoot}: ${st.error}`);
    if (!st.value.isDirectory()) return failed(`glob: root ${shownRoot} is not a directory`);
    const skipped = new Set([...SKIPPED_DIRS, ...NOISE_DIRS.filter((d) => !input.pattern.includes(d))]);
    // Protected places are skipped as the sandbox hides them: their names are not listed.
    const hidden =
      ctx.mode === "unrestricted" ? new Set<string>() : new Set(hiddenPlacePaths(ctx).map(foldPath));
    const walked = await walk(rootAbs, input.alternatives, skipped, ctx.signal, hidden);
    if (walked.rootElsewhere) return failed(`glob: cannot read root ${shownRoot}: ${OPENED_ELSEWHERE}`);
    const found = walked.found.sort();
    const notes: string[] = [];
    if (found.length > MAX_GLOB_RESULTS) notes.push(`... and ${found.length - MAX_GLOB_RESULTS} more`);
    if (walked.protectedSkipped > 0)
      notes.push(
        `[${walked.protectedSkipped} protected places were skipped (Scoot's own, secrets, credential stores)]`,
      );
    if (walked.unreadable > 0) notes.push(`[${walked.unreadable} directories could not be read]`);
    if (walked.elsewhere > 0)
      notes.push(
        `[${walked.elsewhere} directories were swapped for a symlink during the walk and were not listed]`,
      );
    if (walked.stopped) notes.push("[stopped early: the tool deadline was reached; the list is incomplete]");
    const text =
      found.length === 0
        ? [`no paths match ${JSON.stringify(input.pattern)} under ${shownRoot}`, ...notes].join("\n")
        : [...found.slice(0, MAX_GLOB_RESULTS), ...notes].join("\n");
    // An empty list is an answer; a walk the deadline cut short is not a whole one.
    if (!walked.stopped) return done(text);
    return failed(text, stoppedBy(ctx.signal));
  },
};

type Kind = "dir" | "link" | "other";

interface Walked {
  found: string[];
  unreadable: number;
  /** Directories whose opened descriptor was not the path walked to (swapped meanwhile). */
  elsewhere: number;
  /** The root itself was reached elsewhere: nothing is listed. */
  rootElsewhere: boolean;
  stopped: boolean;
  /** Entries that are protected places, left out unnamed. */
  protectedSkipped: number;
}

/** Case folded, as the gate compares protected places. */
function foldPath(p: string): string {
  return p.toLowerCase();
}

async function walk(
  rootAbs: string,
  alts: GlobPath[],
  skipped: Set<string>,
  signal: AbortSignal,
  hidden: ReadonlySet<string>,
): Promise<Walked> {
  let protectedSkipped = 0;
  const found: string[] = [];
  let unreadable = 0;
  let elsewhere = 0;
  const start: number[] = [];
  for (let a = 0; a < alts.length; a++) addState(alts, start, a * STRIDE);
  const stack: { rel: string; states: number[] }[] = [{ rel: "", states: start }];
  const next: number[] = [];
  let lastYield = Date.now();
  while (stack.length > 0) {
    if (Date.now() - lastYield >= YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      lastYield = Date.now();
    }
    if (signal.aborted)
      return { found, unreadable, elsewhere, rootElsewhere: false, stopped: true, protectedSkipped };
    const { rel, states } = stack.pop()!;
    const dirAbs = rel === "" ? rootAbs : path.join(rootAbs, rel);
    const readable = eachEntry(dirAbs, literalNames(alts, states), (name, kind) => {
      if (kind === "dir" && skipped.has(name)) return;
      if (hidden.size > 0 && hidden.has(foldPath(path.join(dirAbs, name)))) {
        protectedSkipped++;
        return;
      }
      step(alts, states, name, next);
      if (next.length === 0) return;
      const relPath = rel === "" ? name : `${rel}/${name}`;
      if (reachesEnd(alts, next)) found.push(kind === "dir" ? `${relPath}/` : relPath);
      if (kind === "dir" && canGoDeeper(alts, next)) stack.push({ rel: relPath, states: [...next] });
    });
    if (readable === "elsewhere" && rel === "")
      return { found: [], unreadable, elsewhere, rootElsewhere: true, stopped: false, protectedSkipped };
    if (readable === "elsewhere") elsewhere++;
    else if (readable === "unreadable") unreadable++;
  }
  return { found, unreadable, elsewhere, rootElsewhere: false, stopped: false, protectedSkipped };
}

/**
 * Calls `visit` for each entry of the directory. When every live position is a literal name,
 * only those names are looked up (no listing at all).
 *
 * The directory is opened first (no-follow) and, where /proc can tell, its descriptor must be
 * the very path walked to (docs/safety.md "What was opened"): the root's path has every symlink
 * resolved and the walk never descends a link, so anything else means a directory on the way
 * was swapped for a symlink after it was seen; it is then not listed. Names are read through
 * the descriptor, so a swap after the check changes nothing either.
 */
function eachEntry(
  dirAbs: string,
  names: string[] | undefined,
  visit: (name: string, kind: Kind) => void,
): "read" | "unreadable" | "elsewhere" {
  let fd: number;
  try {
    fd = fs.openSync(dirAbs, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW);
  } catch {
    return "unreadable";
  }
  try {
    const judged = canJudgeDescriptors();
    if (judged && realPathOf(fd) !== dirAbs) return "elsewhere";
    const base = judged ? `/proc/self/fd/${fd}` : dirAbs;
    if (names) {
      for (const name of names) {
        const st = fs.lstatSync(path.join(base, name), { throwIfNoEntry: false });
        if (st) visit(name, st.isDirectory() ? "dir" : st.isSymbolicLink() ? "link" : "other");
      }
      return "read";
    }
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(base, { withFileTypes: true });
    } catch {
      return "unreadable";
    }
    for (const d of entries) visit(d.name, d.isDirectory() ? "dir" : d.isSymbolicLink() ? "link" : "other");
    return "read";
  } finally {
    fs.closeSync(fd);
  }
}

/** The literal names the live positions want, or undefined if any position has a wildcard or `**`. */
function literalNames(alts: GlobPath[], states: number[]): string[] | undefined {
  const names: string[] = [];
  for (const st of states) {
    const seg = alts[Math.floor(st / STRIDE)]![st % STRIDE];
    if (seg === undefined) continue; // a finished alternative wants nothing more here
    if (seg.kind !== "literal") return undefined;
    if (!names.includes(seg.text)) names.push(seg.text);
  }
  return names;
}

/** Positions after consuming `name` from `states`, into `out`. */
function step(alts: GlobPath[], states: number[], name: string, out: number[]): void {
  out.length = 0;
  for (const st of states) {
    const seg = alts[Math.floor(st / STRIDE)]![st % STRIDE];
    if (seg === undefined) continue;
    if (seg.kind === "globstar") addState(alts, out, st);
    else if (seg.kind === "literal" ? seg.text === name : matchSegment(seg.tokens, name))
      addState(alts, out, st + 1);
  }
}

/** Adds a position and, since `**` may match zero segments, the one after each `**`. */
function addState(alts: GlobPath[], out: number[], st: number): void {
  if (out.includes(st)) return;
  out.push(st);
  if (alts[Math.floor(st / STRIDE)]![st % STRIDE]?.kind === "globstar") addState(alts, out, st + 1);
}

function reachesEnd(alts: GlobPath[], states: number[]): boolean {
  return states.some((st) => st % STRIDE === alts[Math.floor(st / STRIDE)]!.length);
}

function canGoDeeper(alts: GlobPath[], states: number[]): boolean {
  return states.some((st) => st % STRIDE < alts[Math.floor(st / STRIDE)]!.length);
}
