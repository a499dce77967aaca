/**
 * What one more step costs the real CLI, file by file (docs/architecture.md "A step, file by
 * file"): the per-module build (`dist/main.js`, the same code as the bundled bin, one file per
 * source file) runs a scenario twice under `NODE_V8_COVERAGE` — with the step once and twice —
 * and a source file counts when any of its functions ran more often in the second run. Start-up,
 * shutdown and whatever a run does once cancel out; what is left is the work of a step, with the
 * backend, the stores and the front end included.
 */
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT, removeDir, tempDir } from "./cli.js";

/** The per-module entry: its files map one to one onto src/. */
export const MAIN = path.join(REPO_ROOT, "dist", "main.js");
const DIST_URL = `file://${path.join(REPO_ROOT, "dist")}/`;

/** Call counts by source file, then by function (name and offset: unique in a file). */
type Counts = Map<string, Map<string, number>>;

interface V8Coverage {
  result: {
    url: string;
    functions: { functionName: string; ranges: { startOffset: number; count: number }[] }[];
  }[];
}

/** Reads every coverage file a process (and its children) wrote into `dir`. */
function readCounts(dir: string): Counts {
  const counts: Counts = new Map();
  for (const name of fs.readdirSync(dir)) {
    const data = JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")) as V8Coverage;
    for (const script of data.result) {
      if (!script.url.startsWith(DIST_URL) || !script.url.endsWith(".js")) continue;
      const file = `src/${script.url.slice(DIST_URL.length).replace(/\.js$/, ".ts")}`;
      const fns = counts.get(file) ?? new Map<string, number>();
      for (const f of script.functions) {
        const key = `${f.functionName}@${f.ranges[0]!.startOffset}`;
        fns.set(key, (fns.get(key) ?? 0) + f.ranges[0]!.count);
      }
      counts.set(file, fns);
    }
  }
  return counts;
}

/**
 * A scenario run once with `steps` steps, its coverage written to `env.NODE_V8_COVERAGE`. `env`
 * also unsets the suite's shared compile cache: code read from a cache another run wrote counts
 * in V8's coverage as if it had run.
 */
export type Scenario = (
  steps: number,
  env: { NODE_V8_COVERAGE: string; SCOOT_COMPILE_CACHE: undefined },
) => Promise<void>;

export interface Walk {
  /** Source files whose code ran more often with one more step, sorted. */
  perStep: string[];
  /** Source files the two-step run loaded at all. */
  loaded: string[];
}

/** Runs `scenario` with one step and with two, and compares. */
export async function stepWalk(scenario: Scenario): Promise<Walk> {
  const dirs = [tempDir("scoot-walk-cov1-"), tempDir("scoot-walk-cov2-")];
  try {
    await scenario(1, { NODE_V8_COVERAGE: dirs[0]!, SCOOT_COMPILE_CACHE: undefined });
    await scenario(2, { NODE_V8_COVERAGE: dirs[1]!, SCOOT_COMPILE_CACHE: undefined });
    const [one, two] = dirs.map(readCounts) as [Counts, Counts];
    const perStep: string[] = [];
    for (const [file, fns] of two) {
      const before = one.get(file);
      for (const [key, n] of fns) {
        if (n > (before?.get(key) ?? 0)) {
          perStep.push(file);
          break;
        }
      }
    }
    return { perStep: perStep.sort(), loaded: [...two.keys()].sort() };
  } finally {
    for (const d of dirs) removeDir(d);
  }
}
