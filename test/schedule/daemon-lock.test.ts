/** The daemon's ownership lock and stop rules, with real processes for live and dead pids. */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ensureDir, type HomePaths, homePaths } from "../../src/config/home.js";
import {
  acquireDaemonLock,
  type DaemonState,
  planStop,
  readPidFile,
  recordedPidAlive,
  releaseDaemonLock,
  writeDaemonState,
} from "../../src/schedule/daemon.js";
import { procStartTime } from "../../src/schedule/proc-identity.js";

let home: string;
let paths: HomePaths;
let sleeper: ChildProcess;
let deadPid: number;

beforeAll(async () => {
  sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 600000)"], { stdio: "ignore" });
  const done = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  deadPid = done.pid!;
  await new Promise((r) => done.on("exit", r));
});
afterAll(() => {
  sleeper.kill("SIGKILL");
});
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-lock-"));
  paths = homePaths(home);
  ensureDir(paths.state);
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

function state(over: Partial<DaemonState>): DaemonState {
  return {
    status: "running",
    pid: 1,
    started_at: "2025-01-01T00:00:00.000Z",
    stopped_at: null,
    stop_reason: null,
    jobs: [],
    poll_ms: 1000,
    fired: 0,
    failed: 0,
    ...over,
  };
}

describe("acquiring the home", () => {
  it("creates the pid file with this pid, and release removes it", () => {
    const r = acquireDaemonLock(paths);
    expect(r).toEqual({ ok: true, value: { warnings: [] } });
    expect(readPidFile(paths.daemonPid)).toEqual({ kind: "pid", pid: process.pid });
    expect(fs.statSync(paths.daemonPid).mode & 0o777).toBe(0o600);
    releaseDaemonLock(paths);
    expect(fs.existsSync(paths.daemonPid)).toBe(false);
  });

  it("refuses while another live process owns the pid file, and changes nothing", () => {
    fs.writeFileSync(paths.daemonPid, `${sleeper.pid}\n`);
    const r = acquireDaemonLock(paths);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error).toMatch(new RegExp(`another daemon \\(pid ${sleeper.pid}\\) is running on this home`));
    expect(fs.readFileSync(paths.daemonPid, "utf8")).toBe(`${sleeper.pid}\n`);
  });

  it("replaces a stale pid file and a stale running state with one warning", () => {
    fs.writeFileSync(paths.daemonPid, `${deadPid}\n`);
    writeDaemonState(paths.daemonJson, state({ pid: deadPid }));
    const r = acquireDaemonLock(paths);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.warnings).toHaveLength(1);
    expect(r.value.warnings[0]).toMatch(
      new RegExp(`previous daemon \\(pid ${deadPid}, .*\\) stopped uncleanly`),
    );
    expect(r.value.previousUnclean).toEqual({ pid: deadPid, started_at: "2025-01-01T00:00:00.000Z" });
    expect(readPidFile(paths.daemonPid)).toEqual({ kind: "pid", pid: process.pid });
  });

  it.each([
    ["a dead pid", () => `${deadPid}\n`, /pid \d+ is not running/],
    ["garbage", () => "not-a-pid\n", /holds "not-a-pid"/],
  ])("clears a stale pid file holding %s with a warning", (_name, content, warning) => {
    fs.writeFileSync(paths.daemonPid, content());
    const r = acquireDaemonLock(paths);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.warnings.join("\n")).toMatch(warning);
  });

  it("refuses when the state names a live pid but the pid file is gone", () => {
    writeDaemonState(paths.daemonJson, state({ pid: sleeper.pid! }));
    const r = acquireDaemonLock(paths);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/daemon\.pid is missing/);
    expect(fs.existsSync(paths.daemonPid)).toBe(false);
  });

  it("a live pid recorded in another boot counts as dead", () => {
    const s = state({ pid: sleeper.pid!, boot_id: "another-boot" });
    expect(recordedPidAlive(sleeper.pid!, s, "this-boot")).toBe(false);
    expect(recordedPidAlive(sleeper.pid!, { ...s, boot_id: undefined }, "this-boot")).toBe(true);
    expect(recordedPidAlive(sleeper.pid!, { ...s, boot_id: "this-boot" }, "this-boot")).toBe(true);
  });
});

describe("daemon stop signals only when state and pid file agree on a live pid", () => {
  it.each<[string, () => void, RegExp | number]>([
    ["no state at all", () => {}, /no daemon has run on this home/],
    [
      "a pid file without state",
      () => fs.writeFileSync(paths.daemonPid, `${process.pid}\n`),
      /no state\/daemon\.json; they do not agree/,
    ],
    [
      "a stopped state",
      () =>
        writeDaemonState(
          paths.daemonJson,
          state({ status: "stopped", stopped_at: "x", stop_reason: "SIGTERM" }),
        ),
      /not running \(pid 1 stopped at x: SIGTERM\)/,
    ],
    [
      "running state, no pid file",
      () => writeDaemonState(paths.daemonJson, state({ pid: sleeper.pid! })),
      /there is no pid file/,
    ],
    [
      "different pids",
      () => {
        writeDaemonState(paths.daemonJson, state({ pid: sleeper.pid! }));
        fs.writeFileSync(paths.daemonPid, `${process.pid}\n`);
      },
      /names pid \d+ but the pid file names \d+; they do not agree/,
    ],
    [
      "a dead pid",
      () => {
        writeDaemonState(paths.daemonJson, state({ pid: deadPid }));
        fs.writeFileSync(paths.daemonPid, `${deadPid}\n`);
      },
      /is not alive: it stopped uncleanly/,
    ],
    [
      "agreement on a live pid whose start time matches",
      () => {
        writeDaemonState(
          paths.daemonJson,
          state({ pid: sleeper.pid!, start_time: procStartTime(sleeper.pid!) }),
        );
        fs.writeFileSync(paths.daemonPid, `${sleeper.pid}\n`);
      },
      0,
    ],
    [
      "a live pid with another start time (a reused pid)",
      () => {
        writeDaemonState(paths.daemonJson, state({ pid: sleeper.pid!, start_time: "1" }));
        fs.writeFileSync(paths.daemonPid, `${sleeper.pid}\n`);
      },
      /pid \d+ now belongs to another process .*nothing was signalled/,
    ],
    [
      "a live pid and a state without a start time",
      () => {
        writeDaemonState(paths.daemonJson, state({ pid: sleeper.pid! }));
        fs.writeFileSync(paths.daemonPid, `${sleeper.pid}\n`);
      },
      /cannot verify that pid \d+ is the daemon/,
    ],
  ])("%s", (_name, arrange, expected) => {
    arrange();
    const plan = planStop(paths);
    if (expected === 0) {
      expect(plan).toEqual({ ok: true, pid: sleeper.pid });
    } else {
      expect(plan.ok).toBe(false);
      expect(plan.reason).toMatch(expected as RegExp);
    }
  });
});
