/**
 * How much of Scoot a step walks (docs/architecture.md "A step, file by file"): the source
 * files whose code runs while the real loop takes one file_read step and a final answer, read
 * from V8's precise coverage (call counts), with the stores in memory and no front end. A
 * change that drags more of the house into every step shows up here as a longer list.
 */
import fs from "node:fs";
import inspector from "node:inspector/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { loopHarness } from "../helpers/loop.js";
import { step } from "../helpers/scripted-server.js";

/**
 * The aim: a read step (and the answer after it) runs code in at most this many files. 31 since
 * every call is decided by src/agent/decide.ts (the one decision), a file of its own.
 */
const READ_STEP_MAX_FILES = 31;

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-walk-")));
fs.writeFileSync(path.join(project, "a.txt"), "hello\n");
afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

/** The files of src/ whose functions ran during `work`. */
async function filesRunBy(work: () => Promise<unknown>): Promise<string[]> {
  const session = new inspector.Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
    // Taking the coverage resets the counts: what follows is the work alone.
    await session.post("Profiler.takePreciseCoverage");
    await work();
    const { result } = await session.post("Profiler.takePreciseCoverage");
    const files = new Set<string>();
    for (const script of result) {
      const at = script.url.indexOf("/src/");
      if (at === -1 || !script.url.startsWith("file:")) continue;
      // The module's own top level (the range from offset 0) ran when it loaded, not in the step.
      const ran = script.functions.some((f) => f.ranges[0]!.startOffset > 0 && f.ranges[0]!.count > 0);
      if (ran) files.add(script.url.slice(at + 1));
    }
    return [...files].sort();
  } finally {
    session.disconnect();
  }
}

it(`a file_read step and a final answer run code in at most ${READ_STEP_MAX_FILES} files`, async () => {
  const script = () => [step("file_read", { path: "a.txt" }), step("final", "done")];
  // Warm: every module loaded and every lazy part made before the measured run.
  await loopHarness(script(), { cwd: project }).run("warm up");
  const h = loopHarness(script(), { cwd: project });
  const files = await filesRunBy(() => h.run("read a.txt"));
  expect(h.events.some((e) => e.type === "final")).toBe(true);
  // The walk must at least pass the phases a read goes through, or the measure is broken.
  for (const phase of [
    "src/agent/loop.ts",
    "src/agent/calls.ts",
    "src/policy/gate.ts",
    "src/tools/file_read.ts",
  ])
    expect(files).toContain(phase);
  expect(files.length, files.join("\n")).toBeLessThanOrEqual(READ_STEP_MAX_FILES);
});
