/**
 * A Scoot killed while it launches a sandboxed command leaves nothing running (docs/safety.md
 * "Stopping a command"). bubblewrap arms `--die-with-parent` a few ms after it starts; a Scoot
 * killed before that used to leave the sandbox running the command. The start gate
 * (src/sandbox/gate.ts) runs the command only once Scoot says `go`, which it says only after
 * the gate runs inside the armed sandbox. Under CPU load (a busy process when nothing else loads
 * the machine, and three other launches on two cores), Scoot is SIGKILLed at spread delays
 * around the spawn, ≥ 100 times: no process of the command survives. (Once, in CI, bwrap's init, the gate's shell and the command did: init arms
 * after it forks the shell, and the gate now waits for it, test/sandbox/gate-init-wait.test.ts.)
 */
import { type ChildProcess, spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, removeDir, tempDir } from "../helpers/cli.js";
import { bwrapWorks, processesWith, processLine, uniqueSleepArg } from "../helpers/procs.js";

const BWRAP = bwrapWorks();
if (!BWRAP) console.log("launch-kill: skipped, bwrap cannot run here (apt-get install bubblewrap)");

const TRIES = 100;
/** Victims at a time: the kills overlap the launches of the others, as load does. */
const PARALLEL = 4;
/** Delays after `launching`, spread over the spawn and bubblewrap's setup. */
const MAX_DELAY_MS = 25;
/**
 * How long the processes of a killed launch may take to end on their own: a bubblewrap orphaned
 * before it armed `--die-with-parent` finishes its setup, finds Scoot gone and exits, which on a
 * loaded CI machine took more than 3 s once. Waited only while something is left.
 */
const SETTLE_MS = 15_000;
const VICTIM = path.join(REPO_ROOT, "test", "helpers", "launch-victim.mjs");

let project: string;
let burners: ChildProcess[] = [];
beforeAll(() => {
  project = tempDir("scoot-launch-kill-");
  // The load is the point, not the burner: in the full suite the other workers keep both cores
  // busy already, and a burner there only took a core's share from them for this file's 20-odd
  // seconds. So it runs when the machine is otherwise idle (this file alone).
  const load = os.loadavg()[0]!;
  const cores = os.availableParallelism();
  if (load < cores) burners = [spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" })];
  console.log(
    `launch-kill: ${burners.length > 0 ? "a CPU burner adds load" : "no CPU burner, the machine is loaded already"} (load average ${load.toFixed(1)} on ${cores} cores)`,
  );
});
afterAll(() => {
  for (const b of burners) b.kill("SIGKILL");
  removeDir(project);
});

/** One launch killed after `delay` ms; the tag's processes still alive once they had time to end. */
async function killDuringLaunch(delay: number): Promise<string[]> {
  const tag = uniqueSleepArg(300);
  const victim = spawn(process.execPath, [VICTIM, project, `sleep ${tag}`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    victim.stdout!.setEncoding("utf8").on("data", (d: string) => {
      if (d.includes("launching")) resolve();
    });
    victim.once("exit", () => reject(new Error("the victim exited before launching")));
  });
  await new Promise((r) => setTimeout(r, delay));
  victim.kill("SIGKILL");
  await new Promise((r) => victim.once("exit", r));
  const until = Date.now() + SETTLE_MS;
  let left = processesWith(tag);
  while (left.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    left = processesWith(tag);
  }
  // What each survivor is, so a failure says which of bwrap's processes outlived Scoot.
  const seen = left.map((pid) => `${pid} ${processLine(pid).slice(0, 60)}`);
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  return seen;
}

describe("SIGKILL during a sandboxed launch", () => {
  it.skipIf(!BWRAP)(
    `leaves no process of the command (${TRIES} kills under load)`,
    async () => {
      const survivors: { delay: number; pids: string[] }[] = [];
      for (let i = 0; i < TRIES; i += PARALLEL) {
        const delays = Array.from({ length: PARALLEL }, (_, k) => ((i + k) * 7) % (MAX_DELAY_MS + 1));
        const results = await Promise.all(delays.map((d) => killDuringLaunch(d)));
        results.forEach((pids, k) => {
          if (pids.length > 0) survivors.push({ delay: delays[k]!, pids });
        });
      }
      expect(survivors).toEqual([]);
    },
    180_000,
  );
});
