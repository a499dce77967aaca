/**
 * A cross-process lock for the audit log (taken for every append and rotation) and for live
 * session transcripts.
 *
 * Taking it: each process writes its owner token `<pid> <random nonce>` once to its own
 * owner file (`<lock>.owner-<pid>-<nonce>`) and hard-links that file to the lock name.
 * link() refuses to overwrite, so exactly one process wins, and the lock file is never seen
 * empty or half-written.
 *
 * Releasing it: only when the lock name still points at *our* owner file.
 *
 * Taking over a stale lock (its owner's pid is dead, or an unreadable file older than
 * GARBAGE_LOCK_MS left by an older version): the breaker first creates, again with link(), a
 * claim file named after the stale lock's identity (device, inode, ctime, content digest). Only one process
 * can hold the claim for one identity, so of two processes that judged the same lock stale at
 * the same moment only one removes it; the other finds the claim taken (or, later, a lock with
 * another identity) and goes back to waiting. A lock with a live owner is never taken over,
 * however old: the owner can only lose it by dying. A claim whose own breaker died is broken
 * the same way, one level up (bounded by MAX_BREAK_DEPTH). See test/core/lock.test.ts.
 *
 * Waiting is synchronous (Atomics.wait, LOCK_POLL_MS at a time). That is deliberate: the
 * audit emit is synchronous because a `tool_call` record must be on disk before the effect
 * starts, and every holder keeps the lock for one append (plus, rarely, one rotation) — well
 * under a millisecond of work — so the event loop is frozen for at most the holders' queue,
 * and never longer than LOCK_WAIT_MS, after which the append fails closed with an error
 * naming the holder.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { onProcessEnd } from "./process-end.js";
import { processRuns } from "./stale-temps.js";

export const LOCK_WAIT_MS = 5_000;
/** A lock file whose content is not an owner token (empty, garbage) is abandoned after this. */
export const GARBAGE_LOCK_MS = 10_000;
/** Backoff while a live holder has the lock: from a few tens of microseconds up to LOCK_POLL_MS. */
const LOCK_POLL_MS = 1;
const LOCK_FIRST_POLL_MS = 0.05;
/** Claims on claims: each level needs another breaker to die inside a few syscalls. */
const MAX_BREAK_DEPTH = 3;

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

/** Tokens of the locks this process holds right now. */
const held = new Set<string>();

export interface LockHooks {
  /** Called after a lock was judged stale, before the claim: lets a test line two breakers up. */
  afterJudgedStale?: (lockFile: string) => void;
}

export interface HeldLock {
  file: string;
  token: string;
  /** Removes the lock if it is still ours; never anyone else's. */
  release(): void;
}

function newToken(): string {
  return `${process.pid} ${randomBytes(8).toString("hex")}`;
}

function uniqueSuffix(): string {
  return `${process.pid}-${randomBytes(6).toString("hex")}`;
}

/** Creates `file` holding `content` in one step (temp file + link). false when it exists. */
export function createExclusive(file: string, content: string): boolean {
  const tmp = `${file}.tmp-${uniqueSuffix()}`;
  fs.writeFileSync(tmp, content, { mode: 0o600, flag: "wx" });
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

interface Judged {
  /**
   * Device, inode, ctime and a digest of the content: names this very file, not whatever
   * holds the name later (an owner file's content never changes, and a reused inode number
   * comes with another owner's token).
   */
  identity: string;
  stale: boolean;
  owner?: number;
  /** The owner token, when the content is one. */
  token?: string;
}

function read(file: string): { st: fs.BigIntStats; text: string; identity: string } | undefined {
  try {
    // Looked at before every take, and usually absent: no exception for that.
    const st = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
    if (st === undefined) return undefined;
    const text = fs.readFileSync(file, "utf8").trim();
    const digest = createHash("sha256").update(text).digest("hex").slice(0, 16);
    return { st, text, identity: `${st.dev}-${st.ino}-${st.ctimeNs}-${digest}` };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** What is at `file` now; undefined when nothing is. */
function judge(file: string): Judged | undefined {
  const r = read(file);
  if (!r) return undefined;
  const { st, text, identity } = r;
  const m = /^(\d+)(?: ([0-9a-f]+))?$/.exec(text);
  if (m) {
    const pid = Number(m[1]);
    const token = m[2] ? text : undefined;
    // Our own pid with a token we do not hold: a leftover of an earlier process that had
    // this pid (containers reuse pids), since this process takes locks only synchronously.
    if (pid === process.pid)
      return { identity, stale: !held.has(text), owner: pid, ...(token ? { token } : {}) };
    return { identity, stale: pid <= 0 || !processRuns(pid), owner: pid, ...(token ? { token } : {}) };
  }
  const ageMs = Date.now() - Number(st.mtimeMs);
  return { identity, stale: ageMs > GARBAGE_LOCK_MS };
}

function identityOf(file: string): string | undefined {
  try {
    return read(file)?.identity;
  } catch {
    return undefined;
  }
}

/** Removes the lock at `file` if it is still the one judged stale; see the module comment. */
function breakStale(file: string, judged: Judged, depth: number): void {
  // Hashed: a name of bounded length at every depth, even under a 128-character session id.
  const claim = `${file}.claim-${createHash("sha256").update(judged.identity).digest("hex").slice(0, 16)}`;
  const token = newToken();
  if (!createExclusive(claim, token)) {
    if (depth >= MAX_BREAK_DEPTH) return;
    const other = judge(claim);
    if (other?.stale) breakStale(claim, other, depth + 1);
    return;
  }
  held.add(token);
  try {
    // Nobody else holds this identity's claim and its owner is dead, so nothing can change
    // the name between this check and the unlink except us.
    if (identityOf(file) === judged.identity) {
      fs.rmSync(file, { force: true });
      // The dead owner's own file (same token, so the same dead process) is litter now.
      if (judged.token) fs.rmSync(`${file}.owner-${judged.token.replace(" ", "-")}`, { force: true });
    }
  } finally {
    held.delete(token);
    fs.rmSync(claim, { force: true });
  }
}

/**
 * This process's owner file for each lock: created once (creating a file costs about a
 * millisecond on the disks we measured, a hard link some microseconds), linked to the lock
 * name to take it, the name unlinked to release it. Removed when the process exits.
 */
const owners = new Map<string, { path: string; token: string; ino: number }>();
let ownersExitHook = false;

/**
 * Owner files of dead processes that do not hold the lock (a process killed outside the lock
 * leaves one): nothing can link them again, so they are removed. One that is still the lock
 * (two links) is left to the stale takeover.
 */
function sweepDeadOwners(lockFile: string): void {
  const dir = path.dirname(lockFile);
  const prefix = `${path.basename(lockFile)}.owner-`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = name.startsWith(prefix) ? /^(\d+)-[0-9a-f]+$/.exec(name.slice(prefix.length)) : null;
    if (!m || Number(m[1]) === process.pid || processRuns(Number(m[1]))) continue;
    const p = path.join(dir, name);
    try {
      if (fs.statSync(p).nlink === 1) fs.rmSync(p, { force: true });
    } catch {
      // gone already
    }
  }
}

function ownerFile(lockFile: string): { path: string; token: string; ino: number } {
  const known = owners.get(lockFile);
  if (known) return known;
  sweepDeadOwners(lockFile);
  const token = newToken();
  const p = `${lockFile}.owner-${token.replace(" ", "-")}`;
  fs.writeFileSync(p, token, { mode: 0o600, flag: "wx" });
  const entry = { path: p, token, ino: fs.statSync(p).ino };
  owners.set(lockFile, entry);
  if (!ownersExitHook) {
    ownersExitHook = true;
    onProcessEnd(() => {
      for (const o of owners.values()) fs.rmSync(o.path, { force: true });
    });
  }
  return entry;
}

/** One attempt: the lock, or who holds it. */
export function tryLock(file: string, hooks: LockHooks = {}): HeldLock | { holder?: number } {
  const owner = ownerFile(file);
  for (let attempt = 0; attempt < 3; attempt++) {
    // Look before linking: under contention the lock is usually held by a live owner.
    const before = judge(file);
    if (before && !before.stale) return { holder: before.owner };
    if (before?.stale) {
      hooks.afterJudgedStale?.(file);
      breakStale(file, before, 0);
    }
    let linked = false;
    try {
      fs.linkSync(owner.path, file);
      linked = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    if (linked) {
      held.add(owner.token);
      let released = false;
      return {
        file,
        token: owner.token,
        release() {
          if (released) return;
          released = true;
          held.delete(owner.token);
          try {
            // Ours only while the name still points at our owner file's inode.
            if (fs.statSync(file).ino === owner.ino) fs.unlinkSync(file);
          } catch {
            // already gone: nothing of ours to remove
          }
        },
      };
    }
  }
  return {};
}

function isHeld(r: HeldLock | { holder?: number }): r is HeldLock {
  return "release" in r;
}

/** Waits (bounded by LOCK_WAIT_MS) for the lock. Throws an error naming the holder when it cannot. */
export function acquireLock(file: string, hooks: LockHooks = {}, waitMs = LOCK_WAIT_MS): HeldLock {
  const deadline = Date.now() + waitMs;
  let holder: number | undefined;
  let pause = LOCK_FIRST_POLL_MS;
  for (;;) {
    const r = tryLock(file, hooks);
    if (isHeld(r)) return r;
    holder = r.holder ?? holder;
    if (Date.now() > deadline) {
      throw new Error(
        `the lock ${file} is still held${holder ? ` by pid ${holder}` : ""} after ${waitMs} ms; if no Scoot process is running, remove it`,
      );
    }
    sleepSync(pause);
    pause = Math.min(pause * 2, LOCK_POLL_MS);
  }
}

/** Runs `fn` holding the lock; throws when the lock cannot be had (see acquireLock). */
export function withLock<T>(file: string, fn: () => T, hooks: LockHooks = {}): T {
  const lock = acquireLock(file, hooks);
  try {
    return fn();
  } finally {
    lock.release();
  }
}
