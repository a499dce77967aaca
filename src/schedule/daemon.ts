/**
 * The daemon's lifecycle files: `state/daemon.json` (what it is doing, for `daemon status`)
 * and `state/daemon.pid` (the ownership lock of the home).
 *
 * - The pid file is created with O_EXCL only after a stale one was cleared, so two daemons
 *   starting at once cannot both win.
 * - A pid is "live" when signal 0 reaches it. After a reboot a recorded pid may belong to an
 *   unrelated process, so the state also records the kernel's boot id (Linux) and a pid from
 *   another boot counts as dead.
 * - `daemon stop` signals only when the state file and the pid file name the same live pid;
 *   anything else is explained, never guessed at.
 */
import fs from "node:fs";
import type { HomePaths } from "../config/home.js";
import { atomicWriteFile } from "../core/atomic-write.js";
import { readHomeFile } from "../core/safe-open.js";
import type { Result } from "../core/types.js";
import { canVerifyIdentity, sameProcess } from "./proc-identity.js";

const STATE_FILE_MODE = 0o600;
/** daemon.json is a few hundred bytes; anything near this is not Scoot's. */
const STATE_MAX_BYTES = 1024 * 1024;
const BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id";

export interface DaemonState {
  status: "running" | "stopped";
  pid: number;
  started_at: string;
  stopped_at: string | null;
  stop_reason: string | null;
  /** Ids of the valid jobs this daemon schedules. */
  jobs: string[];
  poll_ms: number;
  /** Firings since start, and how many of them did not end with a final answer. */
  fired: number;
  failed: number;
  boot_id?: string;
  /** The daemon's start time from /proc/<pid>/stat (Linux): tells it from a later holder of its pid. */
  start_time?: string;
  /** Set when this daemon replaced the state of one that died without stopping. */
  previous_unclean_stop?: { pid: number; started_at: string };
}

export function currentBootId(): string | undefined {
  try {
    return fs.readFileSync(BOOT_ID_FILE, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Signal 0 probes without touching: EPERM still means someone is there. */
export function isPidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid < 1) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export type PidFile = { kind: "missing" } | { kind: "pid"; pid: number } | { kind: "garbage"; text: string };

export function readPidFile(file: string): PidFile {
  const read = readHomeFile(file, { noFollow: true, maxBytes: 64 });
  if (!read.ok && read.missing) return { kind: "missing" };
  if (!read.ok) return { kind: "garbage", text: read.error.slice(0, 40) };
  const text = read.text;
  const t = text.trim();
  if (!/^\d{1,10}$/.test(t) || Number(t) < 1) return { kind: "garbage", text: t.slice(0, 40) };
  return { kind: "pid", pid: Number(t) };
}

function isDaemonState(v: unknown): v is DaemonState {
  const s = v as DaemonState;
  return (
    typeof s === "object" &&
    s !== null &&
    (s.status === "running" || s.status === "stopped") &&
    typeof s.pid === "number" &&
    typeof s.started_at === "string"
  );
}

export type StateRead =
  | { kind: "missing" }
  | { kind: "state"; state: DaemonState }
  | { kind: "bad"; error: string };

export function readDaemonState(file: string): StateRead {
  const read = readHomeFile(file, { noFollow: true, maxBytes: STATE_MAX_BYTES });
  if (!read.ok && read.missing) return { kind: "missing" };
  if (!read.ok) return { kind: "bad", error: `cannot read ${read.error}` };
  const text = read.text;
  try {
    const data: unknown = JSON.parse(text);
    if (isDaemonState(data)) return { kind: "state", state: data };
    return { kind: "bad", error: `${file} is not a daemon state record` };
  } catch (e) {
    return { kind: "bad", error: `${file} is not valid JSON: ${(e as Error).message}` };
  }
}

export function writeDaemonState(file: string, state: DaemonState): Result<true> {
  const r = atomicWriteFile(file, `${JSON.stringify(state, null, 2)}\n`, { mode: STATE_FILE_MODE });
  return r.ok ? { ok: true, value: true } : { ok: false, error: `cannot write ${file}: ${r.error}` };
}

/**
 * Whether the recorded daemon `pid` is a live process of this boot. A state from another boot
 * (boot ids differ) is dead whatever process holds that pid now.
 */
export function recordedPidAlive(
  pid: number,
  state: DaemonState | undefined,
  bootId = currentBootId(),
): boolean {
  if (state && state.pid === pid && state.boot_id && bootId && state.boot_id !== bootId) return false;
  // A pid now held by a process that started at another time is not the daemon.
  if (state && state.pid === pid && state.start_time !== undefined) {
    const who = sameProcess(pid, state.start_time);
    if (who === "other" || who === "gone") return false;
  }
  return isPidAlive(pid);
}

export interface Acquired {
  warnings: string[];
  previousUnclean?: { pid: number; started_at: string };
}

/**
 * Takes ownership of the home for this process: refuses while another live daemon holds it,
 * clears a stale pid file (with a warning), then creates the pid file exclusively.
 */
export function acquireDaemonLock(paths: HomePaths, pid = process.pid): Result<Acquired> {
  const warnings: string[] = [];
  const read = readDaemonState(paths.daemonJson);
  const state = read.kind === "state" ? read.state : undefined;
  if (read.kind === "bad") warnings.push(`${read.error}; it will be replaced`);
  const pidFile = readPidFile(paths.daemonPid);
  let previousUnclean: Acquired["previousUnclean"];

  if (pidFile.kind === "pid" && pidFile.pid !== pid) {
    if (recordedPidAlive(pidFile.pid, state)) {
      return {
        ok: false,
        error:
          `another daemon (pid ${pidFile.pid}) is running on this home (${paths.daemonPid}); ` +
          `stop it with "scoot daemon stop", or if pid ${pidFile.pid} is not a Scoot daemon, remove that file`,
      };
    }
  }
  if (state?.status === "running" && state.pid !== pid) {
    const alive = recordedPidAlive(state.pid, state);
    if (alive && pidFile.kind === "missing") {
      return {
        ok: false,
        error:
          `${paths.daemonJson} says a daemon (pid ${state.pid}) is running and that pid is alive, but ` +
          `${paths.daemonPid} is missing; stop that daemon, or if pid ${state.pid} is not a Scoot daemon, remove ${paths.daemonJson}`,
      };
    }
    if (!alive) {
      previousUnclean = { pid: state.pid, started_at: state.started_at };
      warnings.push(
        `the previous daemon (pid ${state.pid}, started ${state.started_at}) stopped uncleanly ` +
          "(its state still says running); replacing its state",
      );
    }
  }
  if (pidFile.kind !== "missing") {
    const what = pidFile.kind === "pid" ? `pid ${pidFile.pid} is not running` : `it holds "${pidFile.text}"`;
    if (!previousUnclean || pidFile.kind !== "pid" || pidFile.pid !== previousUnclean.pid) {
      warnings.push(`removing the stale pid file ${paths.daemonPid} (${what})`);
    }
    try {
      fs.unlinkSync(paths.daemonPid);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") {
        return {
          ok: false,
          error: `cannot remove the stale pid file ${paths.daemonPid}: ${(e as Error).message}`,
        };
      }
    }
  }
  try {
    const fd = fs.openSync(paths.daemonPid, "wx", 0o600);
    try {
      fs.writeSync(fd, `${pid}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") {
      const other = readPidFile(paths.daemonPid);
      const who = other.kind === "pid" ? ` (pid ${other.pid})` : "";
      return {
        ok: false,
        error: `another daemon${who} started on this home at the same moment; not starting`,
      };
    }
    return { ok: false, error: `cannot create the pid file ${paths.daemonPid}: ${(e as Error).message}` };
  }
  return { ok: true, value: { warnings, ...(previousUnclean ? { previousUnclean } : {}) } };
}

/** Removes the pid file if it is still ours. */
export function releaseDaemonLock(paths: HomePaths, pid = process.pid): void {
  const current = readPidFile(paths.daemonPid);
  if (current.kind === "pid" && current.pid === pid) {
    try {
      fs.unlinkSync(paths.daemonPid);
    } catch {
      // Already gone: nothing to release.
    }
  }
}

/** A live daemon other than `self` owns the home (used by `schedule run` to avoid double firings). */
export function liveDaemonPid(paths: HomePaths, self = process.pid): number | undefined {
  const pidFile = readPidFile(paths.daemonPid);
  if (pidFile.kind !== "pid" || pidFile.pid === self) return undefined;
  const read = readDaemonState(paths.daemonJson);
  return recordedPidAlive(pidFile.pid, read.kind === "state" ? read.state : undefined)
    ? pidFile.pid
    : undefined;
}

export interface StopPlan {
  ok: boolean;
  pid?: number;
  /** Why there is nothing to signal (when not ok). */
  reason?: string;
}

/** Decides whether `daemon stop` may signal: state and pid file must agree on one live pid. */
export function planStop(paths: HomePaths): StopPlan {
  const read = readDaemonState(paths.daemonJson);
  const pidFile = readPidFile(paths.daemonPid);
  if (read.kind === "bad") return { ok: false, reason: `${read.error}; not signalling anything` };
  if (read.kind === "missing") {
    if (pidFile.kind === "missing")
      return { ok: false, reason: "no daemon has run on this home (no state/daemon.json)" };
    return {
      ok: false,
      reason: `there is a pid file (${paths.daemonPid}) but no state/daemon.json; they do not agree, so nothing was signalled`,
    };
  }
  const state = read.state;
  if (state.status === "stopped") {
    return {
      ok: false,
      reason: `the daemon is not running (pid ${state.pid} stopped at ${state.stopped_at ?? "?"}: ${state.stop_reason ?? "?"})`,
    };
  }
  if (pidFile.kind !== "pid") {
    return {
      ok: false,
      reason: `state/daemon.json says pid ${state.pid} is running but ${
        pidFile.kind === "missing" ? "there is no pid file" : "the pid file is unreadable"
      }; they do not agree, so nothing was signalled`,
    };
  }
  if (pidFile.pid !== state.pid) {
    return {
      ok: false,
      reason: `state/daemon.json names pid ${state.pid} but the pid file names ${pidFile.pid}; they do not agree, so nothing was signalled`,
    };
  }
  const who = sameProcess(state.pid, state.start_time);
  if (who === "other") {
    return {
      ok: false,
      reason: `pid ${state.pid} now belongs to another process (its start time is not the daemon's): the daemon stopped uncleanly and its pid was reused; nothing was signalled`,
    };
  }
  if (who === "unknown" && canVerifyIdentity() && isPidAlive(state.pid)) {
    return {
      ok: false,
      reason: `cannot verify that pid ${state.pid} is the daemon (state/daemon.json has no start time); nothing was signalled. If it is, stop it with kill ${state.pid}`,
    };
  }
  if (!recordedPidAlive(state.pid, state)) {
    return {
      ok: false,
      reason: `the daemon (pid ${state.pid}) is not alive: it stopped uncleanly; the next "scoot daemon run" recovers its state`,
    };
  }
  return { ok: true, pid: state.pid };
}
