/**
 * Hostile inputs round two, items 2 and 3, through the built CLI with real processes:
 *
 * - three `daemon run` started together on one home, many times, from a clean home and with a
 *   stale pid file and state: exactly one becomes the owner every time, the other is refused;
 * - after the daemon was SIGKILLed and its pid "reused" (a real `sleep` now holds the pid the
 *   state names), `daemon stop` signals nothing and says why; the sleep survives.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lockHome } from "../../src/schedule/home-lock.js";
import { removeDir, runCli, spawnCli, tempDir } from "../helpers/cli.js";

/**
 * Trials per case, in rounds of PARALLEL homes: 24 races over the two cases. It was 20 per case
 * (123 CLI processes, the suite's largest share of CPU in one file); the lock itself is the
 * kernel's (flock), and its exclusion is also checked directly below ("the home lock").
 */
const TRIALS = 12;
/** Daemons started together per trial: more than two widens the race the lock must win. */
const STARTERS = 3;
/** Homes raced at once; the trials run in rounds of this many to keep the run short. */
const PARALLEL = 4;

const homes: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  children.length = 0;
  for (const h of homes) removeDir(h);
  homes.length = 0;
});

function newHome(): string {
  const home = tempDir("scoot-h2-daemon-");
  homes.push(home);
  fs.writeFileSync(path.join(home, "config.toml"), "[schedule]\nenabled = true\npoll_ms = 50\n");
  return home;
}

interface Outcome {
  child: ChildProcess;
  started: boolean;
  refused: boolean;
  stderr: string;
}

/** Resolves once the daemon has either announced itself as started or exited. */
function decision(child: ChildProcess): Promise<Outcome> {
  return new Promise((resolve) => {
    let stderr = "";
    let done = false;
    const finish = (started: boolean) => {
      if (done) return;
      done = true;
      resolve({ child, started, refused: /another daemon .*is running on this home/.test(stderr), stderr });
    };
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (stderr.includes("daemon started")) finish(true);
    });
    child.stdout!.resume();
    // "close", not "exit": stderr may still hold the refusal when the process has exited.
    child.on("close", () => finish(false));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.on("exit", () => resolve()));
}

async function race(home: string): Promise<Outcome[]> {
  const started = Array.from({ length: STARTERS }, () => spawnCli(["daemon", "run"], { home }));
  children.push(...started);
  const outcomes = await Promise.all(started.map(decision));
  const owners = outcomes.filter((o) => o.started);
  // Check the files while the owner runs, then stop everything that started.
  if (owners.length === 1) {
    const pidText = fs.readFileSync(path.join(home, "state", "daemon.pid"), "utf8").trim();
    expect(Number(pidText)).toBe(owners[0]!.child.pid);
  }
  for (const o of owners) o.child.kill("SIGTERM");
  await Promise.all(outcomes.map((o) => exited(o.child)));
  return outcomes;
}

function staleFiles(home: string, pid: number): void {
  fs.mkdirSync(path.join(home, "state"), { recursive: true });
  fs.writeFileSync(path.join(home, "state", "daemon.pid"), `${pid}\n`);
  fs.writeFileSync(
    path.join(home, "state", "daemon.json"),
    JSON.stringify({
      status: "running",
      pid,
      started_at: "2026-01-01T00:00:00.000Z",
      stopped_at: null,
      stop_reason: null,
      jobs: [],
      poll_ms: 50,
      fired: 0,
      failed: 0,
    }),
  );
}

async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  await new Promise((r) => p.on("exit", r));
  return p.pid!;
}

async function trials(prepare: (home: string) => Promise<void>): Promise<void> {
  const owners: number[] = [];
  for (let round = 0; round < TRIALS / PARALLEL; round++) {
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        const home = newHome();
        await prepare(home);
        return race(home);
      }),
    );
    for (const outcomes of results) {
      const started = outcomes.filter((o) => o.started);
      owners.push(started.length);
      if (started.length === 1) {
        for (const loser of outcomes.filter((o) => !o.started)) {
          expect(loser.refused, loser.stderr).toBe(true);
          expect(loser.child.exitCode).toBe(1);
        }
      }
    }
  }
  expect(owners).toEqual(Array.from({ length: TRIALS }, () => 1));
}

describe.skipIf(process.platform !== "linux")("item 2: one daemon per home, always", () => {
  it(`${TRIALS} trials of ${STARTERS} daemons started together on a clean home`, async () => {
    await trials(async () => {});
  }, 180_000);

  it(`${TRIALS} trials with a stale pid file and a stale running state`, async () => {
    const dead = await deadPid();
    await trials(async (home) => staleFiles(home, dead));
  }, 180_000);
});

describe.skipIf(process.platform !== "linux")("item 2: the home lock", () => {
  it("is exclusive, and the kernel drops it when the holder is SIGKILLed", async () => {
    const home = newHome();
    const first = await lockHome(home);
    expect(first.ok).toBe(true);
    const second = await lockHome(home);
    expect(second).toMatchObject({ ok: false, busy: true });
    if (first.ok) await first.value.release();
    const third = await lockHome(home);
    expect(third.ok).toBe(true);
    if (third.ok) await third.value.release();

    const daemon = spawnCli(["daemon", "run"], { home });
    children.push(daemon);
    expect((await decision(daemon)).started).toBe(true);
    expect(await lockHome(home)).toMatchObject({ ok: false, busy: true });
    daemon.kill("SIGKILL");
    await exited(daemon);
    // No clean-up ran, yet the lock is free again: the kernel released it with the process.
    const after = await lockHome(home);
    expect(after.ok).toBe(true);
    if (after.ok) await after.value.release();
  }, 60_000);
});

describe.skipIf(process.platform !== "linux")("item 3: daemon stop never signals a reused pid", () => {
  it("the daemon was SIGKILLed and a sleep now holds the pid its state names", async () => {
    const home = newHome();
    const daemon = spawnCli(["daemon", "run"], { home });
    children.push(daemon);
    expect((await decision(daemon)).started).toBe(true);
    daemon.kill("SIGKILL");
    await exited(daemon);

    // A real process standing in for the new holder of the pid: the state and pid file now
    // name it, with the dead daemon's recorded start time.
    const sleeper = spawn("sleep", ["300"], { stdio: "ignore" });
    children.push(sleeper);
    const stateFile = path.join(home, "state", "daemon.json");
    const state = JSON.parse(fs.readFileSync(stateFile, "utf8")) as { pid: number; start_time?: string };
    expect(state.start_time).toMatch(/^\d+$/);
    state.pid = sleeper.pid!;
    fs.writeFileSync(stateFile, JSON.stringify(state));
    fs.writeFileSync(path.join(home, "state", "daemon.pid"), `${sleeper.pid}\n`);

    const stop = await runCli(["daemon", "stop"], { home });
    expect(stop.code).toBe(1);
    expect(stop.stderr).toContain(`pid ${sleeper.pid} now belongs to another process`);
    expect(stop.stderr).toContain("nothing was signalled");
    expect(sleeper.exitCode).toBeNull();
    expect(sleeper.signalCode).toBeNull();
    process.kill(sleeper.pid!, 0);

    const status = await runCli(["daemon", "status", "--json"], { home });
    expect(JSON.parse(status.stdout)).toMatchObject({ pid_alive: false });

    // And a new daemon takes the home over without being fooled by the live pid.
    const next = spawnCli(["daemon", "run"], { home });
    children.push(next);
    const o = await decision(next);
    expect(o.started, o.stderr).toBe(true);
    next.kill("SIGTERM");
    await exited(next);
    expect(sleeper.exitCode).toBeNull();
  }, 60_000);
});
