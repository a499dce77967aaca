/**
 * Crash drill: SIGKILL the CLI at random points of real runs — at start-up, while it waits on a
 * slow backend reply, while a `bash sleep` runs, and in the middle of rapid file_read turns —
 * with a 2 KiB `audit.max_file_bytes` so the audit log rotates every turn or two and some kills
 * land mid-rotation. Then check what a crash may and may not leave behind:
 *
 * - every transcript and audit file still parses (only a torn *last* line is tolerated), and the
 *   next writer starts on a fresh line, so a tear never swallows a later record;
 * - `scoot audit show <id>` works for every session;
 * - no audit generation number is ever reused (retired + evicted numbers are unique, a number
 *   never names two different files over time) and `audit.jsonl.gen` stays above all of them;
 * - a lock left by a killed writer never blocks later writers;
 * - a SIGTERM (as opposed to SIGKILL) stops the run cleanly: exit 130, `system_error
 *   interrupted`, and the tool's whole process group is gone.
 *
 * What a SIGKILLed parent cannot do: clean up its tool's process group. Scoot starts every
 * tool in its own group precisely so one signal can end all of it; the drill proves that by
 * killing the leftover's group itself and asserting nothing of it keeps running.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAuditEvents } from "../../src/store/audit-readers.js";
import { verifyAudit } from "../../src/store/audit-verify.js";
import { createAuditLog } from "../../src/store/audit-writer.js";
import { type CliResult, collect, REPO_ROOT, removeDir, runCli, spawnCli, tempDir } from "../helpers/cli.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";
import {
  allAuditEvents,
  auditLive,
  checkJsonl,
  drillRng,
  jsonlFiles,
  killGroupOf,
  mapLimit,
  notRunning,
  processGroupOf,
  procState,
  sessionsDir,
  sleep,
  waitFor,
} from "./lib.js";

/** How many runs get a SIGKILL (the brief asks for 20+; a few may finish before their kill). */
const KILL_RUNS = 24;
/** At least this many of them must really have been killed by the signal. */
const MIN_KILLED = 20;
/** Small enough that every turn or two retires a generation. */
const AUDIT_MAX_FILE_BYTES = 2048;
/** Small enough that evictions (and so gap records) happen during the drill. */
const AUDIT_RETAINED = 3;
/** File read each rapid turn: about half an audit file per observation. */
const NOTE_BYTES = 900;
/** Audit writers SIGKILLed inside a rotation. */
const ROTATION_KILLS = 12;
const AUDIT_WRITER = path.join(REPO_ROOT, "test", "helpers", "audit-writer.mjs");
/** Generous guard against a hung CLI; the drill never waits on it in the normal case. */
const RUN_GUARD_MS = 30_000;

const rng = drillRng("crash");

let base: string;
let home: string;
let project: string;
/** Pids of SIGKILLed CLIs: certainly dead afterwards, used to plant a stale lock. */
const deadCliPids: number[] = [];
/** Session ids the drill created. */
const sessionIds: string[] = [];
/** Each retired generation's first line as first seen: a number must never name another file. */
const generationIdentity = new Map<number, string>();
const leftovers: number[] = [];

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SCOOT_BACKEND_BASE_URL: url,
    SCOOT_AUDIT_MAX_FILE_BYTES: String(AUDIT_MAX_FILE_BYTES),
    SCOOT_AUDIT_MAX_RETAINED_GENERATIONS: String(AUDIT_RETAINED),
    SCOOT_AGENT_MAX_TURNS: "400",
    SCOOT_TOOLS_TIMEOUT_MS: "20000",
    // This drill pins what a crash leaves behind with host pids read from inside bash; a
    // sandboxed bash reports PID-namespace pids and dies with Scoot instead, which
    // test/e2e/sandbox.test.ts covers. So bash runs unsandboxed here.
    SCOOT_TOOLS_SANDBOX: "off",
    ...extra,
  };
}

function logsDir(): string {
  return path.dirname(auditLive(home));
}

function retired(): number[] {
  if (!fs.existsSync(logsDir())) return [];
  return fs
    .readdirSync(logsDir())
    .map((n) => /^audit\.jsonl\.(\d+)$/.exec(n)?.[1])
    .filter((g): g is string => g !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

function gapNumbers(): number[] {
  const file = `${auditLive(home)}.gaps.jsonl`;
  if (!fs.existsSync(file)) return [];
  const out: number[] = [];
  for (const g of checkJsonl(file).records) {
    for (let n = Number(g.gap_from); n <= Number(g.gap_to); n++) out.push(n);
  }
  return out;
}

/** Remembers which file each generation number names; a different file under an old number is reuse. */
function recordGenerations(): void {
  for (const g of retired()) {
    let first: string;
    try {
      first = fs.readFileSync(`${auditLive(home)}.${g}`, "utf8").split("\n")[0]!;
    } catch {
      continue; // evicted between readdir and read
    }
    const seen = generationIdentity.get(g);
    if (seen === undefined) generationIdentity.set(g, first);
    else expect(first, `generation ${g} now names a different file: the number was reused`).toBe(seen);
  }
}

type Kind = "startup" | "backend" | "bash" | "rapid";

interface Outcome {
  kind: Kind;
  result: CliResult;
  delayMs: number;
}

/** A script of `n` rapid file_read turns and a final. */
function rapidReads(n: number): ScriptItem[] {
  return [
    ...Array.from({ length: n }, () => step("file_read", { path: "notes.txt" })),
    step("final", "read"),
  ];
}

async function killedRun(i: number, kind: Kind): Promise<Outcome> {
  const id = `crash-${i}`;
  sessionIds.push(id);
  let slowArrived = false;
  const pidFile = path.join(project, `sleeper-${i}.pid`);
  let script: ScriptItem[];
  switch (kind) {
    case "startup":
      script = rapidReads(200);
      break;
    case "backend":
      // A few quick turns, then a reply that takes far longer than the kill delay.
      script = [
        ...rapidReads(rng.int(0, 3)).slice(0, -1),
        () => {
          slowArrived = true;
          const slow = step("final", "too late") as { reply: object };
          return { ...slow, delayMs: 10_000 };
        },
      ];
      break;
    case "bash":
      script = [step("bash", `sleep 300 & echo $! > ${pidFile}; wait`), step("final", "slept")];
      break;
    case "rapid":
      script = rapidReads(200);
      break;
  }
  const server = await startScriptedServer(script);
  try {
    const child = spawnCli(["-e", `crash drill ${i}`, "--session-id", id], {
      home,
      cwd: project,
      env: env(server.url),
    });
    const done = collect(child, { timeoutMs: RUN_GUARD_MS });
    let delayMs: number;
    switch (kind) {
      case "startup":
        // Start-up (config, home, first records) takes a few tens of ms: most kills land there or
        // in the first turns.
        delayMs = rng.int(0, 150);
        await sleep(delayMs);
        break;
      case "backend":
        delayMs = rng.int(0, 300);
        await waitFor("the slow backend call", () => slowArrived || child.exitCode !== null);
        await sleep(delayMs);
        break;
      case "bash":
        delayMs = rng.int(0, 200);
        await waitFor(
          "the bash step's pid file",
          () => (fs.existsSync(pidFile) && fs.statSync(pidFile).size > 0) || child.exitCode !== null,
        );
        await sleep(delayMs);
        break;
      case "rapid":
        delayMs = rng.int(30, 900);
        await waitFor(
          "the first backend call",
          () => server.completions().length > 0 || child.exitCode !== null,
        );
        await sleep(delayMs);
        break;
    }
    if (child.pid !== undefined) deadCliPids.push(child.pid);
    child.kill("SIGKILL");
    const result = await done;
    if (kind === "bash" && fs.existsSync(pidFile)) {
      const sleeper = Number(fs.readFileSync(pidFile, "utf8"));
      if (Number.isInteger(sleeper) && sleeper > 0) leftovers.push(sleeper);
    }
    return { kind, result, delayMs };
  } finally {
    await server.close();
  }
}

beforeAll(() => {
  base = tempDir("scoot-drill-crash-");
  home = path.join(base, "home");
  project = path.join(base, "project");
  fs.mkdirSync(project, { recursive: true });
  const line = "a line of notes for the crash drill, long enough to matter\n";
  fs.writeFileSync(path.join(project, "notes.txt"), line.repeat(Math.ceil(NOTE_BYTES / line.length)));
});

afterAll(() => {
  for (const pid of leftovers) killGroupOf(pid);
  removeDir(base);
});

// Dozens of real runs killed and restarted: each is bounded by RUN_GUARD_MS, so the whole drill
// gets more than the runner's default 60 s on a loaded machine.
describe("crash drill", { timeout: 180_000 }, () => {
  it(`survives ${KILL_RUNS} SIGKILLs at random points, mid-rotation included`, async () => {
    const kinds: Kind[] = ["startup", "backend", "bash", "rapid", "rapid"];
    const outcomes: Outcome[] = [];
    for (let i = 0; i < KILL_RUNS; i++) {
      const kind = rng.pick(kinds);
      outcomes.push(await killedRun(i, kind));
      recordGenerations();
    }
    const summary = outcomes.map((o) => `${o.kind}+${o.delayMs}ms:${o.result.signal ?? o.result.code}`);
    console.log(`[drill crash] runs: ${summary.join(" ")}`);
    const killed = outcomes.filter((o) => o.result.signal === "SIGKILL").length;
    expect(killed, summary.join(" ")).toBeGreaterThanOrEqual(MIN_KILLED);
    // Runs that beat their kill must have ended normally.
    for (const o of outcomes) if (o.result.signal === null) expect(o.result.code, o.result.stderr).toBe(0);
    expect(
      retired().length + gapNumbers().length,
      "the drill must have rotated the audit log",
    ).toBeGreaterThan(3);

    const litter = fs.readdirSync(logsDir()).filter((n) => /\.tmp$|\.lock$/.test(n));
    if (litter.length > 0) console.log(`[drill crash] left by kills mid-rotation: ${litter.join(", ")}`);

    // An eviction a kill interrupted (its gap record written first, by design, its file not yet
    // removed) is finished by the next rotation: one clean writer rotates once before the checks.
    const finisher = createAuditLog({
      file: auditLive(home),
      level: "info",
      toFile: true,
      maxRetained: AUDIT_RETAINED,
      maxFileBytes: AUDIT_MAX_FILE_BYTES,
    });
    const before = retired().join(",");
    for (let i = 0; i < 200 && retired().join(",") === before; i++) {
      expect(finisher.emit("crash-drill-finisher", "run", "x".repeat(100)).ok).toBe(true);
    }
    finisher.close();

    // 1. Every file parses; only a torn last line is tolerated.
    const files = jsonlFiles(home);
    expect(files.length).toBeGreaterThan(KILL_RUNS / 2);
    const torn: string[] = [];
    for (const f of files) {
      const c = checkJsonl(f);
      expect(c.bad, `${f} has damaged lines in the middle`).toEqual([]);
      if (c.torn !== undefined) torn.push(f);
    }
    if (torn.length > 0) console.log(`[drill crash] torn last lines (tolerated): ${torn.join(", ")}`);

    // 2. `audit show` works for every session.
    const shows = await mapLimit(sessionIds, 3, (id) => runCli(["audit", "show", id], { home }));
    shows.forEach((r, i) => {
      expect(r.code, `audit show ${sessionIds[i]}: ${r.stderr}`).toBe(0);
      for (const line of r.stdout.split("\n").filter((l) => l !== "")) {
        const e = JSON.parse(line) as { session_id: string };
        expect(e.session_id).toBe(sessionIds[i]);
      }
    });

    // 3. No generation number is reused; the sidecar is above every one of them.
    const numbers = [...retired(), ...gapNumbers()];
    expect(new Set(numbers).size, `retired ${retired()} gaps ${gapNumbers()}`).toBe(numbers.length);
    const sidecar = Number(fs.readFileSync(`${auditLive(home)}.gen`, "utf8").split("\n")[0]);
    for (const n of [...numbers, ...generationIdentity.keys()]) expect(sidecar).toBeGreaterThan(n);
    // Evicted numbers are gone from disk for good.
    for (const n of gapNumbers()) expect(fs.existsSync(`${auditLive(home)}.${n}`)).toBe(false);
    // 5. The hash chain survived every kill: only retention gaps, never-used
    //    numbers and tears are reported, never a break.
    const chain = verifyAudit(auditLive(home));
    expect(chain.ok, `${JSON.stringify(chain.break)} ${chain.notes.join("; ")}`).toBe(true);
    for (const n of chain.notes) expect(n).toMatch(/removed by retention|never used|torn/);
  });

  it("a SIGKILLed bash tool's process group is left behind, and one group signal ends all of it", async () => {
    // The drill above collected the sleepers of every SIGKILLed bash run (if it picked any); make
    // sure there is at least one.
    const i = KILL_RUNS;
    const before = leftovers.length;
    await killedRun(i, "bash");
    expect(leftovers.length).toBe(before + 1);
    for (const pid of leftovers) {
      const pgid = processGroupOf(pid);
      if (pgid !== undefined) {
        // The tool's shell leads its own group: never the test runner's group.
        expect(pgid).not.toBe(processGroupOf(process.pid));
      }
      killGroupOf(pid);
    }
    for (const pid of leftovers) {
      await waitFor(`sleeper ${pid} to stop after its group was killed`, () => notRunning(pid), 5_000);
    }
  });

  it.each([
    ["owned by a SIGKILLed CLI", "dead-pid"],
    ["empty and old: its writer died between creating it and writing its pid", "empty-old"],
  ] as const)("a lock %s does not block the next run, which rotates and removes it", async (_what, how) => {
    const lock = `${auditLive(home)}.lock`;
    if (fs.existsSync(lock)) console.log("[drill crash] a kill left audit.jsonl.lock behind");
    // Plant one for certain.
    if (how === "dead-pid") {
      const deadPid = deadCliPids.find((p) => procState(p) === "gone");
      expect(deadPid).toBeDefined();
      fs.writeFileSync(lock, String(deadPid));
    } else {
      fs.writeFileSync(lock, "");
      const old = new Date(Date.now() - 60_000);
      fs.utimesSync(lock, old, old);
    }
    const id = `crash-after-lock-${how}`;
    const gensBefore = Number(fs.readFileSync(`${auditLive(home)}.gen`, "utf8").split("\n")[0]);
    const server = await startScriptedServer([...rapidReads(4)]);
    try {
      const r = await runCli(["-e", "after the crashes", "--session-id", id], {
        home,
        cwd: project,
        env: env(server.url),
        timeoutMs: RUN_GUARD_MS,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("read\n");
    } finally {
      await server.close();
    }
    expect(fs.existsSync(lock)).toBe(false);
    expect(Number(fs.readFileSync(`${auditLive(home)}.gen`, "utf8").split("\n")[0])).toBeGreaterThan(
      gensBefore,
    );
    const events = allAuditEvents(home).filter((e) => e.session_id === id);
    expect(events.at(-1)).toMatchObject({ kind: "final", msg: "read" });
  });

  it("a torn last line is repaired: the next writer starts on a fresh line", async () => {
    // A SIGKILL cannot split one small append(2), so the tear is made by hand, exactly as a
    // writer dying mid-line (or a full disk) would leave it.
    const id = "crash-repair";
    const transcript = path.join(sessionsDir(home), `${id}.jsonl`);
    const fragment = '{"role":"assistant","content":"cut off in the mid';
    fs.writeFileSync(transcript, `${JSON.stringify({ role: "user", content: "before" })}\n${fragment}`);
    const live = auditLive(home);
    const auditFragment = '{"seq":7,"ts":1,"session_id":"crash-repair","kind":"thou';
    fs.appendFileSync(live, `${fs.readFileSync(live, "utf8").endsWith("\n") ? "" : "\n"}${auditFragment}`);
    expect(checkJsonl(live).torn).toBe(auditFragment);
    expect(checkJsonl(transcript).torn).toBe(fragment);

    const server = await startScriptedServer([step("final", "repaired")]);
    try {
      // A large rotation threshold so the torn live file is appended to, not retired.
      const r = await runCli(["-e", "repair", "--session-id", id], {
        home,
        cwd: project,
        env: env(server.url, { SCOOT_AUDIT_MAX_FILE_BYTES: String(1024 * 1024) }),
        timeoutMs: RUN_GUARD_MS,
      });
      expect(r.code, r.stderr).toBe(0);
    } finally {
      await server.close();
    }
    for (const [file, frag] of [
      [live, auditFragment],
      [transcript, fragment],
    ] as const) {
      const c = checkJsonl(file);
      expect(c.torn).toBeUndefined();
      // The fragment sits alone on its line; everything after it parses.
      expect(c.bad.map((b) => b.text)).toEqual([frag]);
      const lines = fs.readFileSync(file, "utf8").split("\n");
      const at = lines.indexOf(frag);
      expect(at).toBeGreaterThanOrEqual(0);
      expect(lines.length - 1 - at).toBeGreaterThan(1);
    }
    const show = await runCli(["audit", "show", id], { home });
    expect(show.code).toBe(0);
    expect(show.stderr).toMatch(/skipped a line that is not valid JSON/);
    const kinds = show.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).kind);
    expect(kinds).toEqual(["run", "thought", "final"]);
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "%s during a bash sleep: exit 130, system_error interrupted, the whole child group gone",
    async (signal) => {
      const id = `crash-${signal.toLowerCase()}`;
      const pidFile = path.join(project, `${signal}.pid`);
      const server = await startScriptedServer([
        step("bash", `sleep 300 & echo $! > ${pidFile}; wait`),
        step("final", "never"),
      ]);
      try {
        const child = spawnCli(["-e", "terminate me", "--session-id", id], {
          home,
          cwd: project,
          env: env(server.url),
        });
        const done = collect(child, { timeoutMs: RUN_GUARD_MS });
        await waitFor(
          "the bash step's pid file",
          () => fs.existsSync(pidFile) && fs.statSync(pidFile).size > 0,
        );
        const sleeper = Number(fs.readFileSync(pidFile, "utf8"));
        leftovers.push(sleeper);
        await sleep(rng.int(0, 200));
        child.kill(signal);
        const r = await done;
        expect(r.code, r.stderr).toBe(130);
        // Scoot waited for the group before exiting: nothing of it runs on.
        expect(notRunning(sleeper), `sleeper ${sleeper}: ${procState(sleeper)}`).toBe(true);
        const events = allAuditEvents(home).filter((e) => e.session_id === id);
        expect(events.at(-1)).toMatchObject({ kind: "system_error", msg: "interrupted" });
        // The model was never asked for another step.
        expect(server.completions()).toHaveLength(1);
      } finally {
        await server.close();
      }
    },
  );

  it("SIGKILL at seeded points inside rotation: audit verify reports only legitimate gaps or a torn last line", async () => {
    // Writers (test/helpers/audit-writer.mjs) kill themselves at the n-th time a rotation
    // reaches a step: after the sidecar, before the link, between link and unlink, before the
    // gap record, between the gap record and the deletion. Each dies holding the audit lock.
    const dir = path.join(base, "rotation-kills");
    fs.mkdirSync(dir);
    const file = path.join(dir, "audit.jsonl");
    const steps = ["sidecar", "link", "unlink", "gap", "evict"] as const;
    const plan: string[] = [];
    for (let i = 0; i < ROTATION_KILLS; i++) {
      const killAt = `${rng.pick(steps)}:${rng.int(1, 4)}`;
      const child = spawn(
        process.execPath,
        [AUDIT_WRITER, file, String(i), "120", "1024", "3", "0", killAt],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      const r = await collect(child, { timeoutMs: RUN_GUARD_MS });
      plan.push(`${killAt}=${r.signal ?? r.code}`);
      expect(r.signal === "SIGKILL" || r.code === 0, r.stderr).toBe(true);
    }
    // A clean writer after all the kills: it takes over the dead lock and finishes the work.
    const last = await collect(
      spawn(process.execPath, [AUDIT_WRITER, file, "final", "5", "1024", "3"], {
        stdio: ["ignore", "ignore", "pipe"],
      }),
      { timeoutMs: RUN_GUARD_MS },
    );
    expect(last.code, last.stderr).toBe(0);
    console.log(`[drill crash] rotation kills: ${plan.join(" ")}`);
    expect(plan.filter((p) => p.endsWith("=SIGKILL")).length).toBeGreaterThanOrEqual(ROTATION_KILLS / 2);
    const report = verifyAudit(file);
    expect(report.ok, `${JSON.stringify(report.break)} ${report.notes.join("; ")}`).toBe(true);
    // What verify may report: retention gaps, numbers a killed rotation never used, tears.
    for (const n of report.notes) expect(n).toMatch(/removed by retention|never used|torn/);
    // No event twice (an interrupted rotation is finished, never retired a second time).
    const msgs = readAuditEvents(file).events.map((e) => e.msg);
    expect(new Set(msgs).size).toBe(msgs.length);
    expect(msgs.filter((m) => m.startsWith("final:"))).toHaveLength(5);
  });

  it("concurrent writers, some SIGKILLed inside rotations while others write on: one valid chain", async () => {
    const dir = path.join(base, "concurrent-rotation-kills");
    fs.mkdirSync(dir);
    const file = path.join(dir, "audit.jsonl");
    const steps = ["sidecar", "link", "unlink", "gap", "evict"] as const;
    const run = (args: string[]) =>
      collect(
        spawn(process.execPath, [AUDIT_WRITER, file, ...args], { stdio: ["ignore", "ignore", "pipe"] }),
        {
          timeoutMs: RUN_GUARD_MS,
        },
      );
    const plan: string[] = [];
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(
        [0, 1, 2, 3].map((w) => {
          const killAt = w < 2 ? `${rng.pick(steps)}:${rng.int(1, 3)}` : "";
          if (killAt) plan.push(killAt);
          return run([`${round}-${w}`, "150", "900", String(w === 3 ? 2 : 100), "0", killAt]);
        }),
      );
      for (const r of results) expect(r.signal === "SIGKILL" || r.code === 0, r.stderr).toBe(true);
    }
    expect((await run(["final", "5", "900", "100"])).code).toBe(0);
    console.log(`[drill crash] concurrent rotation kills: ${plan.join(" ")}`);
    const report = verifyAudit(file);
    expect(report.ok, `${JSON.stringify(report.break)} ${report.notes.join("; ")}`).toBe(true);
    for (const n of report.notes) expect(n).toMatch(/removed by retention|never used|torn/);
    const inodes = fs
      .readdirSync(dir)
      .filter((n) => /^audit\.jsonl\.\d+$/.test(n))
      .map((n) => fs.statSync(path.join(dir, n)).ino);
    expect(new Set(inodes).size, "an inode retired under two numbers").toBe(inodes.length);
  });
});
