/**
 * Disk-full drill: the Scoot home lives on a 256 KiB tmpfs, pre-filled so only a little space is
 * left; the model asks for bash step after bash step, each appending one line to a file in the
 * project (which is *not* on the tmpfs) and printing `seq 1 2000`, so the transcript and the
 * audit log fill the disk. Iron rule 7 says: if an audit record cannot be written, no further
 * tool runs. So:
 *
 * - the run stops with exit 1 and one clear error naming the audit log or transcript and the
 *   full disk;
 * - every bash that ran has its `tool_call` record on disk (lines in the project file = complete
 *   `tool_call bash` events), and the model was not asked for a step after the failing one;
 * - every file on the tmpfs still parses as JSONL (a torn last line tolerated);
 * - once space is freed, a new run in the same home works, and starts on a fresh line.
 *
 * Needs root (mount). Without it the drill is skipped with the reason.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempWriterPid } from "../../src/core/stale-temps.js";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";
import { allAuditEvents, checkJsonl, drillRng, jsonlFiles, whyNoTmpfs } from "./lib.js";

const TMPFS_SIZE = "256k";
/**
 * Space left after the filler: room for the start (config, system prompt, first records) and a
 * handful of turns — each turn writes about 4.5 KiB (a ~2 KiB clipped observation to both the
 * transcript and the audit log, plus the step), so the disk fills within a dozen turns.
 */
const LEFT_BYTES_MIN = 28 * 1024;
const LEFT_BYTES_MAX = 44 * 1024;
/** Far more bash steps than can fit: the run must stop on the full disk, not on the script's end. */
const BASH_STEPS = 80;
const RUN_GUARD_MS = 60_000;

const cannotMount = whyNoTmpfs();
if (cannotMount) console.log(`[drill disk-full] skipped: ${cannotMount}`);

let base: string;
let mnt: string;
let mounted = false;
let home: string;
let project: string;
let server: ScriptedServer | undefined;

beforeAll(() => {
  if (cannotMount) return;
  base = tempDir("scoot-drill-disk-");
  mnt = path.join(base, "mnt");
  project = path.join(base, "project");
  fs.mkdirSync(mnt);
  fs.mkdirSync(project);
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS_SIZE},mode=0700`, "tmpfs", mnt], {
    stdio: "pipe",
  });
  mounted = true;
  home = path.join(mnt, "home");
});

afterAll(async () => {
  await server?.close();
  if (mounted) {
    try {
      execFileSync("umount", [mnt], { stdio: "pipe" });
    } catch {
      execFileSync("umount", ["-l", mnt], { stdio: "pipe" });
    }
  }
  if (base) removeDir(base);
});

function freeBytes(dir: string): number {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Every file under the home, recursively. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? filesUnder(p) : [p];
  });
}

function bashToolCalls(): number {
  return allAuditEvents(home).filter((e) => e.kind === "tool_call" && e.msg.startsWith("bash ")).length;
}

describe("disk-full drill", () => {
  it.skipIf(cannotMount !== undefined)(
    "stops with a clear error, audits every effect, parses afterwards and recovers",
    async () => {
      const rng = drillRng("disk-full");
      const ranFile = path.join(project, "ran.txt");
      // Create the home and its first files with a quick run, then fill the disk around them.
      server = await startScriptedServer([step("final", "warm")]);
      const warm = await runCli(["-e", "warm up", "--session-id", "warm"], {
        home,
        cwd: project,
        env: { SCOOT_BACKEND_BASE_URL: server.url },
      });
      expect(warm.code, warm.stderr).toBe(0);
      await server.close();

      const left = rng.int(LEFT_BYTES_MIN, LEFT_BYTES_MAX);
      const filler = path.join(mnt, "filler.bin");
      fs.writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(mnt) - left)));
      console.log(`[drill disk-full] free after filler: ${freeBytes(mnt)} bytes (asked for ${left})`);

      // Thoughts of random length shift where each file's pages fill, so across seeds the
      // failing write is sometimes the transcript, sometimes the audit record before the effect.
      const script = Array.from({ length: BASH_STEPS }, (_, i) =>
        step("bash", `echo step-${i + 1} >> ${ranFile}; seq 1 2000`, "t".repeat(rng.int(1, 1500))),
      );
      server = await startScriptedServer([...script, step("final", "should not get here")]);
      const r = await runCli(["-e", "fill the disk", "--session-id", "full"], {
        home,
        cwd: project,
        env: {
          SCOOT_BACKEND_BASE_URL: server.url,
          SCOOT_AGENT_MAX_TURNS: String(BASH_STEPS + 10),
          // Keep every observation in the history: the drill is about the disk, not the budget.
          SCOOT_AGENT_CONTEXT_BUDGET_BYTES: "0",
        },
        timeoutMs: RUN_GUARD_MS,
      });

      // Stopped on the full disk, with one clear error that names what could not be written.
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/cannot write the (audit log|session transcript)/);
      expect(r.stderr).toMatch(/ENOSPC|no space left/i);
      expect(r.stderr).toMatch(/no tool runs without an audit record/);

      // Every bash that ran has its tool_call record on disk, and nothing ran after the failure.
      const ran = fs.existsSync(ranFile) ? fs.readFileSync(ranFile, "utf8").split("\n").filter(Boolean) : [];
      console.log(
        `[drill disk-full] bash steps that ran: ${ran.length}; requests: ${server.completions().length}; ` +
          `stderr: ${r.stderr.trim()}`,
      );
      expect(ran.length).toBeGreaterThan(0);
      expect(ran.length).toBeLessThan(BASH_STEPS);
      expect(ran).toEqual(ran.map((_, i) => `step-${i + 1}`));
      expect(bashToolCalls()).toBe(ran.length);
      // The failing turn's request is the last one: either its tool never ran (n + 1 requests) or
      // it ran and recording its result failed (n requests). No step after it was asked for.
      expect([ran.length, ran.length + 1]).toContain(server.completions().length);
      await server.close();

      // Every file on the tmpfs still parses (a torn last line tolerated).
      const torn = new Map<string, string>();
      for (const f of jsonlFiles(home)) {
        const c = checkJsonl(f);
        expect(c.bad, `${f} has damaged lines in the middle`).toEqual([]);
        if (c.torn !== undefined) torn.set(f, c.torn);
      }
      for (const f of filesUnder(home).filter((f) => f.endsWith(".json"))) {
        expect(() => JSON.parse(fs.readFileSync(f, "utf8")), f).not.toThrow();
      }
      if (torn.size > 0) console.log(`[drill disk-full] torn last lines: ${[...torn.keys()].join(", ")}`);
      // No temp file of a write the full disk failed is left behind (issue: temp litter).
      expect(filesUnder(home).filter((f) => tempWriterPid(path.basename(f)) !== undefined)).toEqual([]);

      // Freed space: a new run in the same home works, and a tear stays confined to its line.
      const sizes = new Map(jsonlFiles(home).map((f) => [f, fs.statSync(f).size]));
      fs.rmSync(filler);
      server = await startScriptedServer([step("glob", { pattern: "*.txt" }), step("final", "recovered")]);
      const again = await runCli(["-e", "after the disk was freed", "--session-id", "recovered"], {
        home,
        cwd: project,
        env: { SCOOT_BACKEND_BASE_URL: server.url },
        timeoutMs: RUN_GUARD_MS,
      });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe("recovered\n");
      for (const f of jsonlFiles(home)) {
        const c = checkJsonl(f);
        const fragment = torn.get(f);
        const appended = fs.statSync(f).size > (sizes.get(f) ?? 0);
        if (fragment !== undefined && appended) {
          // The next writer started on a fresh line: the fragment is alone on its line.
          expect(c.torn, f).toBeUndefined();
          expect(
            c.bad.map((b) => b.text),
            f,
          ).toEqual([fragment.slice(0, 200)]);
        } else {
          expect(c.torn, f).toBe(fragment);
          expect(c.bad, f).toEqual([]);
        }
      }
      const recovered = allAuditEvents(home).filter((e) => e.session_id === "recovered");
      expect(recovered.map((e) => e.kind)).toEqual([
        "run",
        "thought",
        "tool_call",
        "observation",
        "thought",
        "final",
      ]);
      const full = await runCli(["audit", "show", "full"], { home });
      expect(full.code).toBe(0);
      expect(full.stdout.trim().split("\n").length).toBeGreaterThan(ran.length);
    },
  );
});
