/**
 * The order test files start in: the longest first, so no long file starts last and keeps the
 * run waiting while the other workers idle. Vitest does this from its own cache of timings, but
 * a fresh clone (CI) has none and Vitest then starts the biggest files first: there the soak,
 * launch-kill and cancel drills (small files, 18-43 s each) started among the last. Without
 * Vitest's timing of a file, its committed one (test/durations.json, written by
 * scripts/test-durations.mjs) is used, else a guess from its size.
 */
import fs from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Seconds per byte of test source, for a file with no timing: about what the quick files show. */
const SECONDS_PER_BYTE = 1 / 20_000;

function committedDurations(root: string): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, "test", "durations.json"), "utf8")) as Record<
      string,
      number
    >;
  } catch {
    return {};
  }
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const committed = committedDurations(root);
    const estimate = new Map<TestSpecification, number>();
    for (const spec of files) {
      const rel = path.relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${rel}`);
      let seconds = cached ? cached.duration / 1000 : committed[rel];
      if (seconds === undefined) {
        const size = this.ctx.cache.getFileStats(`${spec.project.name}:${rel}`)?.size ?? 0;
        seconds = size * SECONDS_PER_BYTE;
      }
      // A file that failed last time goes first, as Vitest's own order does.
      estimate.set(spec, cached?.failed ? Number.POSITIVE_INFINITY : seconds);
    }
    return [...files].sort((a, b) => (estimate.get(b) ?? 0) - (estimate.get(a) ?? 0));
  }
}
