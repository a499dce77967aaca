/**
 * The per-project effect lock (docs/editors.md "Writes through the editor"): no command of any
 * Scoot session or process runs in a project while a write through the editor is in flight
 * there. The editor writes by path; a command running meanwhile (a second session of the same
 * model, a background job of this one) could swap the target or its directory for a symlink
 * between Scoot's check and the editor's write.
 *
 * A readers-writer lock made of files in `<home>/state/locks/<project digest>/`, out of every
 * sandbox's reach (the home is hidden from bash):
 *
 * - a command holds a *share*: it creates `run-<pid>-<start time>-<nonce>` and then looks for the writer
 *   lock; when a live writer holds it, it removes its share and waits;
 * - an editor write takes the writer lock (core/lock.ts: one holder, stale holders broken) and
 *   then waits until no live share is left.
 *
 * Each side writes its name before it looks for the other's, so of a command and a write that
 * start together at least one sees the other, and the one that sees waits: never both run.
 * The writer waits for running commands at most EDITOR_WRITE_WAIT_MS, then fails naming them;
 * commands wait for a write as long as their own deadline allows (a write through the editor
 * ends within its own deadline). A share of a dead process (pid gone, or reused: its start
 * time differs) is removed by whoever finds it.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type HeldLock, tryLock } from "../core/lock.js";
import { onProcessEnd } from "../core/process-end.js";
import { abortableSleep } from "../core/sleep.js";
import type { Result } from "../core/types.js";

/** How long an editor write waits for the commands running in its project to end. */
export const EDITOR_WRITE_WAIT_MS = 30_000;
/** How often a waiting side looks again. */
const EFFECT_LOCK_POLL_MS = 10;
const WRITER_NAME = "write";
const SHARE_PREFIX = "run-";
const DIR_MODE = 0o700;

/** The lock's directory for a project (its real path), under Scoot's home. */
export function effectLockDir(scootHome: string, projectRoot: string): string {
  let real: string;
  try {
    real = fs.realpathSync.native(projectRoot);
  } catch {
    real = path.resolve(projectRoot);
  }
  const digest = createHash("sha256").update(real).digest("hex").slice(0, 32);
  return path.join(scootHome, "state", "locks", digest);
}

/** The kernel's start time of `pid` (field 22 of /proc/<pid>/stat), or undefined off Linux. */
function startTime(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

const OWN_START = startTime(process.pid) ?? "";

function alive(pid: number, started: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  const now = startTime(pid);
  return now === undefined || started === "" || now === started;
}

/** Shares this process holds, removed at exit whatever ends it. */
const ownShares = new Set<string>();
let exitHook = false;

/** Whether a live writer holds the lock (a stale one is left to the writers to break). */
function writerLive(dir: string): boolean {
  let token: string;
  try {
    token = fs.readFileSync(path.join(dir, WRITER_NAME), "utf8");
  } catch {
    return false;
  }
  const pid = Number(token.split(" ")[0]);
  return Number.isInteger(pid) && pid > 0 && alive(pid, "");
}

/** Live shares by pid; dead ones removed on the way. */
function liveShares(dir: string): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of names) {
    if (!name.startsWith(SHARE_PREFIX)) continue;
    const [pidText, started = ""] = name.slice(SHARE_PREFIX.length).split("-");
    const pid = Number(pidText);
    if (Number.isInteger(pid) && pid > 0 && alive(pid, started === "0" ? "" : started)) pids.push(pid);
    else fs.rmSync(path.join(dir, name), { force: true });
  }
  return pids;
}

export interface EffectHold {
  release(): void;
}

/**
 * A command's share of the project: resolves once no editor write is in flight, or with
 * undefined when `signal` fires first (the command then does not start).
 */
export async function holdForCommand(dir: string, signal: AbortSignal): Promise<EffectHold | undefined> {
  fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  // Everything the share says is in its name: an empty file needs no data block, so a full
  // disk (which the run will meet at its next record anyway) does not fail the command here.
  const file = path.join(
    dir,
    `${SHARE_PREFIX}${process.pid}-${OWN_START || "0"}-${randomBytes(6).toString("hex")}`,
  );
  if (!exitHook) {
    exitHook = true;
    onProcessEnd(() => {
      for (const f of ownShares) fs.rmSync(f, { force: true });
    });
  }
  for (;;) {
    if (signal.aborted) return undefined;
    fs.closeSync(fs.openSync(file, "wx", 0o600));
    ownShares.add(file);
    if (!writerLive(dir)) {
      return {
        release() {
          ownShares.delete(file);
          fs.rmSync(file, { force: true });
        },
      };
    }
    ownShares.delete(file);
    fs.rmSync(file, { force: true });
    await abortableSleep(EFFECT_LOCK_POLL_MS, signal);
  }
}

function isHeld(r: HeldLock | { holder?: number }): r is HeldLock {
  return "release" in r;
}

/**
 * The project to itself for one editor write: no command of any Scoot session runs in it until
 * `release`. Fails, naming what still runs, when commands do not end within `waitMs`.
 */
export async function holdForEditorWrite(
  dir: string,
  signal: AbortSignal,
  waitMs = EDITOR_WRITE_WAIT_MS,
): Promise<Result<EffectHold>> {
  fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  const deadline = Date.now() + waitMs;
  const lockFile = path.join(dir, WRITER_NAME);
  let taken: HeldLock | undefined;
  while (!taken) {
    const r = tryLock(lockFile);
    if (isHeld(r)) taken = r;
    else if (signal.aborted) return { ok: false, error: "interrupted while another write waited" };
    else if (Date.now() > deadline)
      return {
        ok: false,
        error: `another write through the editor (pid ${r.holder ?? "?"}) is still in flight`,
      };
    else await abortableSleep(EFFECT_LOCK_POLL_MS, signal);
  }
  const lock = taken;
  for (;;) {
    const running = liveShares(dir);
    if (running.length === 0) return { ok: true, value: { release: () => lock.release() } };
    if (signal.aborted || Date.now() > deadline) {
      lock.release();
      return {
        ok: false,
        error: signal.aborted
          ? "interrupted while commands of this project ran"
          : `a command of a Scoot session (pid ${[...new Set(running)].join(", ")}) still runs in this project after ${waitMs / 1000} s, and no command may run while the editor writes; try again when it has ended`,
      };
    }
    await abortableSleep(EFFECT_LOCK_POLL_MS, signal);
  }
}
