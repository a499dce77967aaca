/**
 * Soak drill: the daemon (`scoot daemon run --ticks N`) polls every POLL_MS for several hundred
 * ticks with one `every_sec = 1` job whose every firing is a real agent run against the scripted
 * model server. Meanwhile the drill samples the daemon's resident memory (VmRSS) from /proc.
 * It fails if:
 *
 * - memory grows without bound: the median of the last quarter of samples exceeds the median
 *   of the second quarter by more than MEMORY_FACTOR plus MEMORY_SLACK (see there for why);
 * - a firing was lost: the daemon's own count (`fired` in state/daemon.json) must equal its
 *   "fired" log lines, the `run` and `final` audit events of `job-soak`, and the requests the
 *   model server received; and it must account for every 1 s slot of the job's grid between
 *   its first and last firing (`since` and `last_fire` in state/schedule.json), except slots
 *   that coalesced by design because the loop itself was late (a gap of ≥ 1.5 s between two
 *   firings), and no slot may fire twice.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, removeDir, spawnCli, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";
import { allAuditEvents, drillRng, median, rssKiB, sleep } from "./lib.js";

/**
 * Poll period and tick count: 400 × 100 ms ≈ 40 s plus the firings' own time. A longer soak
 * (slower leaks need one) is `SCOOT_DRILL_SOAK_TICKS=3000 npx vitest run test/drills/soak.test.ts`.
 */
const POLL_MS = 100;
const TICKS = Number(process.env.SCOOT_DRILL_SOAK_TICKS) || 400;
const JOB_ID = "soak";
const SAMPLE_MS = 200;
/**
 * Each firing's final answer: large enough that a leak of the firing's conversation (its
 * session, history or backend buffers) adds up to tens of MiB over the drill, past the allowance
 * (the audit log clips it; the transcript rotates at its 8 MiB cap).
 */
const REPLY_BYTES = 1024 * 1024;
/**
 * Memory allowance, last quarter against second quarter. The first quarter is warm-up (lazy
 * modules, JIT, V8 growing its heap to its working size) and is ignored. Measured here: with
 * 1 MiB replies the daemon still settles during the second quarter (about 75 → 95 MiB) and then
 * stays flat (100–115 MiB over 2,500 firings, single samples spiking to 150 MiB while V8 delays
 * a collection). Medians absorb the spikes; the factor covers the late settling on a noisy shared
 * machine. What it still catches: growth of ≥ ~2 MiB per firing — say, every firing's
 * conversation (its 1 MiB reply held as body, parsed text and history) kept alive — which adds
 * ~40–60 MiB over the ~20 firings between the two medians. Slower leaks need a longer soak.
 */
const MEMORY_FACTOR = 1.5;
const MEMORY_SLACK_KIB = 8 * 1024;
/** A gap this long between two firings means the loop itself was late: slots may coalesce. */
const LATE_GAP_MS = 1500;
const GUARD_MS = 150_000;

let base: string;
let home: string;
let project: string;
let server: ScriptedServer | undefined;

beforeAll(() => {
  base = tempDir("scoot-drill-soak-");
  home = path.join(base, "home");
  project = path.join(base, "project");
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(home, "config.toml"),
    [
      "[schedule]",
      "enabled = true",
      `poll_ms = ${POLL_MS}`,
      "[[schedule.jobs]]",
      `id = "${JOB_ID}"`,
      'goal = "report that the soak drill is alive"',
      "every_sec = 1",
      "",
    ].join("\n"),
  );
});

afterAll(async () => {
  await server?.close();
  removeDir(base);
});

// The drill lasts at least TICKS × POLL_MS by design; its own guard (GUARD_MS) bounds it, so the
// test runner's default 60 s must not cut it short on a loaded machine.
describe("soak drill", { timeout: GUARD_MS + 30_000 }, () => {
  it(`the daemon runs ${TICKS} ticks with flat memory and loses no firing`, async () => {
    const rng = drillRng("soak");
    const answer = (n: number) => `alive ${n} ${"x".repeat(REPLY_BYTES)}`;
    let served = 0;
    // One item per possible firing, and then some: every firing is one final step.
    server = await startScriptedServer(
      Array.from({ length: TICKS }, () => () => step("final", answer(++served), "all good")),
    );
    const child = spawnCli(["daemon", "run", "--ticks", String(TICKS)], {
      home,
      cwd: project,
      env: { SCOOT_BACKEND_BASE_URL: server.url },
    });
    const done = collect(child, { timeoutMs: GUARD_MS });
    const pid = child.pid!;
    const samples: number[] = [];
    let exited = false;
    void done.finally(() => {
      exited = true;
    });
    // Jitter the sampling phase a little (seeded) so samples do not lock onto the poll period.
    await sleep(rng.int(0, SAMPLE_MS));
    while (!exited) {
      const kib = rssKiB(pid);
      if (kib !== undefined) samples.push(kib);
      await sleep(SAMPLE_MS);
    }
    const r = await done;
    expect(r.code, r.stderr.slice(-2000)).toBe(0);

    // Memory: flat after warm-up.
    const q = Math.floor(samples.length / 4);
    expect(q, "too few memory samples").toBeGreaterThanOrEqual(10);
    const second = median(samples.slice(q, 2 * q));
    const last = median(samples.slice(3 * q));
    console.log(
      `[drill soak] ${samples.length} RSS samples: first ${samples[0]} KiB, 2nd-quarter median ${second} KiB, ` +
        `last-quarter median ${last} KiB, max ${Math.max(...samples)} KiB`,
    );
    expect(last, "the daemon's memory grows").toBeLessThanOrEqual(second * MEMORY_FACTOR + MEMORY_SLACK_KIB);

    // Firings: the daemon's own records, the audit log and the model server agree.
    const daemon = JSON.parse(fs.readFileSync(path.join(home, "state", "daemon.json"), "utf8"));
    expect(daemon).toMatchObject({ status: "stopped", stop_reason: `completed ${TICKS} tick(s)`, failed: 0 });
    const fired: number = daemon.fired;
    const firedLines = r.stderr.split("\n").filter((l) => l.includes(`job ${JOB_ID} fired`));
    const events = allAuditEvents(home).filter((e) => e.session_id === `job-${JOB_ID}`);
    const runs = events.filter((e) => e.kind === "run");
    expect(firedLines).toHaveLength(fired);
    expect(runs).toHaveLength(fired);
    expect(events.filter((e) => e.kind === "final")).toHaveLength(fired);
    expect(events.filter((e) => e.kind === "system_error")).toEqual([]);
    expect(server.completions()).toHaveLength(fired);

    // Against the job's 1 s grid: every slot from the first firing to the last fired once,
    // except slots that coalesced while the loop itself was late.
    const schedule = JSON.parse(fs.readFileSync(path.join(home, "state", "schedule.json"), "utf8"));
    const entry = schedule.jobs[JOB_ID] as { since: number; last_fire: number; last_status: string };
    expect(entry.last_status).toBe("final");
    // The grid starts at the first firing, at the first tick after `since` (within one poll).
    const slots = Math.floor((entry.last_fire - entry.since) / 1000) + 1;
    const times = firedLines.map((l) => Date.parse(/\[([^\]]+)\]/.exec(l)![1]!));
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    const coalescible = gaps.reduce((n, g) => n + (g >= LATE_GAP_MS ? Math.round(g / 1000) - 1 : 0), 0);
    console.log(
      `[drill soak] fired ${fired} of ${slots} grid slots; gaps ${Math.min(...gaps)}..${Math.max(...gaps)} ms; ` +
        `${coalescible} slot(s) may coalesce`,
    );
    expect(fired).toBeLessThanOrEqual(slots);
    expect(slots - fired, `lost firings; gaps between firings (ms): ${gaps.join(",")}`).toBeLessThanOrEqual(
      coalescible,
    );
    // Several hundred ticks at POLL_MS cover dozens of seconds: the job fired throughout.
    expect(fired).toBeGreaterThanOrEqual(Math.floor((TICKS * POLL_MS) / 1000 / 2));
  });
});
