/**
 * The checkpoint store (docs/sessions.md "Undo"): before file_write or file_edit changes a file, the
 * call pipeline keeps what the file held (or that it did not exist) here, so `scoot undo`
 * and `/undo` can put it back and `scoot diff` / `/diff` can show what a session changed.
 *
 *   <home>/state/checkpoints/<session-id>/<seq>.json     one change, mode 0600
 *
 * Write-ahead (docs/sessions.md "Undo"): each entry — what the file held, and the hash of the
 * content the change will write (`intent`) — is written atomically and flushed (temp, fsync,
 * rename, directory fsync) before the change becomes visible; a call whose entry cannot be
 * written does not run. Once the tool ran, the entry is rewritten with the hash of what the file
 * holds (`after`), or removed when the file did not change. An entry left without `after` (a
 * crash, or a completion that could not be written, between the rename and that record) is
 * settled by what the file was next seen to hold: the intended content means the change
 * happened, the earlier content means it did not (settleEntries; the last one also when the
 * session next opens its writer). Only one live process writes a session (the session claim).
 *
 * Bounded: a file larger than CHECKPOINT_MAX_FILE_BYTES is recorded without its content
 * (undo names it and cannot restore it); a session keeps at most
 * CHECKPOINT_MAX_SESSION_BYTES, the oldest runs dropped first; a session's checkpoints are
 * deleted when its transcript is gone or after CHECKPOINT_MAX_AGE_MS without a change.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { atomicWriteFile } from "../core/atomic-write.js";
import { fsErrorText } from "../core/fs-errors.js";
import { isInside } from "../core/inside.js";
import { readHomeFile } from "../core/safe-open.js";
import { removeStaleTemps } from "../core/stale-temps.js";
import type { Result } from "../core/types.js";
import { directoryId, Refused, readContained } from "./contained.js";
import { sessionExists } from "./session-meta.js";

/** A file bigger than this is changed without keeping its content (undo cannot restore it). */
export const CHECKPOINT_MAX_FILE_BYTES = 8 * 1024 * 1024;
/** What one session's checkpoints may occupy; beyond it the oldest runs are dropped. */
export const CHECKPOINT_MAX_SESSION_BYTES = 64 * 1024 * 1024;
/** Checkpoints of a session untouched this long are pruned (two weeks: long enough to notice). */
export const CHECKPOINT_MAX_AGE_MS = 14 * 24 * 60 * 60 * 1000;
/** An entry file larger than this is not ours (base64 of the largest content plus metadata). */
const ENTRY_MAX_BYTES = Math.ceil((CHECKPOINT_MAX_FILE_BYTES * 4) / 3) + 64 * 1024;
/** The "after" of a withheld file: no hash, so it never matches what is on disk. */
export const WITHHELD_AFTER = "withheld";
const ENTRY_NAME = /^(\d{8})\.json$/;
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** What a file held before a change. */
export type Before =
  | { kind: "absent" }
  | { kind: "content"; b64: string; sha256: string; mode: number }
  /** Too large to keep: only its hash, so "changed since" can still be told. */
  | { kind: "omitted"; bytes: number; sha256: string }
  /** A file the gate calls secret: nothing of it is kept, not even a hash. */
  | { kind: "withheld" };

export interface CheckpointEntry {
  seq: number;
  ts: number;
  run_id: string;
  /** The goal of the run, for listings. */
  goal: string;
  /** Absolute path the gate judged (symlinks resolved). */
  path: string;
  /** The project root (symlinks resolved): undo and diff act only below it, through descriptors. */
  root?: string;
  before: Before;
  /**
   * sha256 of the content the change is about to write (WITHHELD_AFTER for a secret), kept with
   * the rest before the change: an entry whose `after` was never recorded is settled by it.
   * Absent in entries older than it (those are left alone when unconfirmed).
   */
  intent?: string;
  /** sha256 of the content after the change; null: the change removed it. Absent: not confirmed. */
  after?: string | null;
  /** Device and inode of the file's directory after the change: undo writes only into that one. */
  parent_id?: string;
}

export function checkpointsRoot(stateDir: string): string {
  return path.join(stateDir, "checkpoints");
}

export function checkpointDir(stateDir: string, sessionId: string): string {
  return path.join(checkpointsRoot(stateDir), sessionId);
}

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The bounds a writer keeps; tests pass smaller ones. */
export interface CheckpointLimits {
  maxFileBytes: number;
  maxSessionBytes: number;
  maxAgeMs: number;
}

export const CHECKPOINT_LIMITS: CheckpointLimits = {
  maxFileBytes: CHECKPOINT_MAX_FILE_BYTES,
  maxSessionBytes: CHECKPOINT_MAX_SESSION_BYTES,
  maxAgeMs: CHECKPOINT_MAX_AGE_MS,
};

export function beforeOf(
  content: Buffer | null,
  mode: number | undefined,
  maxFileBytes = CHECKPOINT_MAX_FILE_BYTES,
): Before {
  if (content === null) return { kind: "absent" };
  if (content.length > maxFileBytes)
    return { kind: "omitted", bytes: content.length, sha256: sha256(content) };
  return { kind: "content", b64: content.toString("base64"), sha256: sha256(content), mode: mode ?? 0o644 };
}

export function beforeBytes(b: Before): Buffer | null {
  if (b.kind === "content") return Buffer.from(b.b64, "base64");
  return null;
}

/** The writer one agent session uses. */
export interface CheckpointWriter {
  /** Keeps what `path` holds before a change; an error means the change must not run. */
  before(e: {
    runId: string;
    goal: string;
    path: string;
    content: Buffer | null;
    mode?: number;
    /** The gate calls the file secret: its content is not kept. */
    withheld?: boolean;
    /** What the change will write: its hash is the entry's `intent`. */
    intended?: Buffer;
  }): Result<CheckpointEntry>;
  /** Records what the file holds after the change (null: absent). */
  after(entry: CheckpointEntry, content: Buffer | null): Result<void>;
  /** Removes the entry of a change that did not happen (the tool failed, the file is as it was). */
  drop(entry: CheckpointEntry): Result<void>;
}

/** What a file was seen to hold: its sha256, null when absent, undefined when it cannot be told. */
export type SeenHash = string | null | undefined;

/** The hash of what a file held before a change, when the entry can tell. */
function beforeHash(b: Before): SeenHash {
  if (b.kind === "absent") return null;
  if (b.kind === "content" || b.kind === "omitted") return b.sha256;
  return undefined;
}

/**
 * Whether the change of an entry left without `after` happened, from what its file was next
 * seen to hold: the content it held before → it did not (a write of the same content changed
 * nothing either); the intended content → it did; anything else, or nothing to compare (a
 * secret keeps no hash) → `unsure`: it may have, and the file may have changed since.
 */
export function settleOutcome(e: CheckpointEntry, seen: SeenHash): "happened" | "not_happened" | "unsure" {
  if (e.before.kind === "withheld" || seen === undefined) return "unsure";
  if (seen === beforeHash(e.before)) return "not_happened";
  return seen === e.intent ? "happened" : "unsure";
}

/**
 * The entries with each unconfirmed one settled (docs/sessions.md "Undo"): one whose change
 * happened, or may have, gets its `intent` as `after` (so undo restores it, and names the file
 * as changed since when it holds something else); one that did not happen stays unconfirmed,
 * which undo ignores and removes. What the file was next seen to hold is the `before` of the
 * next entry of the same file when there is one — exact whatever happened on disk later — else
 * what `now` reads. Entries without an `intent` (older ones) stay as they are.
 */
export function settleEntries(
  entries: readonly CheckpointEntry[],
  now: (e: CheckpointEntry) => SeenHash,
): CheckpointEntry[] {
  return entries.map((e, i) => {
    if (e.after !== undefined || e.intent === undefined) return e;
    const next = entries.slice(i + 1).find((n) => n.path === e.path);
    const seen = next ? beforeHash(next.before) : e.before.kind === "withheld" ? undefined : now(e);
    return settleOutcome(e, seen) === "not_happened" ? e : { ...e, after: e.intent };
  });
}

export function openCheckpointWriter(
  stateDir: string,
  sessionId: string,
  sessionsDir: string,
  limits: CheckpointLimits = CHECKPOINT_LIMITS,
  root?: string,
): CheckpointWriter {
  const dir = checkpointDir(stateDir, sessionId);
  settleInterrupted(dir, root);
  let next: number | undefined;
  let pruned = false;
  const write = (entry: CheckpointEntry): Result<void> => {
    const file = path.join(dir, entryName(entry.seq));
    const r = atomicWriteFile(file, `${JSON.stringify(entry)}\n`, { mode: FILE_MODE });
    return r.ok
      ? { ok: true, value: undefined }
      : { ok: false, error: `cannot write the checkpoint ${file}: ${r.error}` };
  };
  return {
    before(e) {
      try {
        fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
        const st = fs.lstatSync(dir);
        if (!st.isDirectory()) return { ok: false, error: `${dir} is not a directory` };
      } catch (err) {
        return { ok: false, error: `cannot create the checkpoint directory ${dir}: ${fsErrorText(err)}` };
      }
      if (!pruned) {
        pruned = true;
        // Other sessions' stale checkpoints go once per process, when this one first writes.
        pruneCheckpoints(stateDir, sessionsDir, Date.now(), { keep: sessionId, maxAgeMs: limits.maxAgeMs });
      }
      next ??= (listEntryNumbers(dir).at(-1) ?? 0) + 1;
      const entry: CheckpointEntry = {
        seq: next,
        ts: Date.now(),
        run_id: e.runId,
        goal: e.goal,
        path: e.path,
        ...(root !== undefined ? { root } : {}),
        before: e.withheld ? { kind: "withheld" } : beforeOf(e.content, e.mode, limits.maxFileBytes),
        // A secret's intended content is not hashed either (a short secret could be guessed).
        ...(e.intended ? { intent: e.withheld ? WITHHELD_AFTER : sha256(e.intended) } : {}),
      };
      next += 1;
      const r = write(entry);
      if (!r.ok) return r;
      boundSession(dir, e.runId, limits.maxSessionBytes);
      return { ok: true, value: entry };
    },
    after(entry, content) {
      // A secret's hash is not kept either (a short secret could be guessed from it).
      entry.after =
        entry.before.kind === "withheld" ? WITHHELD_AFTER : content === null ? null : sha256(content);
      const r = write(withParent(entry));
      if (r.ok) boundSession(dir, entry.run_id, limits.maxSessionBytes);
      return r;
    },
    drop(entry) {
      return dropEntries(stateDir, sessionId, [entry.seq]);
    },
  };
}

/** The entry with the identity of the directory its file is in now (undo writes only into that one). */
function withParent(entry: CheckpointEntry): CheckpointEntry {
  const parentDir = fs.lstatSync(path.dirname(entry.path), { throwIfNoEntry: false });
  if (parentDir?.isDirectory()) entry.parent_id = directoryId(parentDir);
  return entry;
}

/**
 * When a session's writer opens (the session starts or resumes), the change a crash interrupted
 * is settled against the disk as the crash left it: only the last entry can be one (a run
 * writes its entries in order and dies at most once). Best effort: what stays unconfirmed is
 * settled again by undo. `root` is the project root when the entry records none.
 */
function settleInterrupted(dir: string, root: string | undefined): void {
  // An entry's own temp file, when its writer was killed before the rename.
  removeStaleTemps(dir);
  const last = listEntryNumbers(dir).at(-1);
  if (last === undefined) return;
  const file = path.join(dir, entryName(last));
  const read = readHomeFile(file, { maxBytes: ENTRY_MAX_BYTES, noFollow: true });
  const e = read.ok ? parseEntry(read.text) : undefined;
  if (!e || e.after !== undefined || e.intent === undefined) return;
  const within = e.root ?? root;
  if (within === undefined) return;
  // The file tool's temp file beside the file, when the crash came before its rename.
  if (isInside(e.path, within)) removeStaleTemps(path.dirname(e.path));
  const seen = e.before.kind === "withheld" ? undefined : containedHash(within, e.path);
  const outcome = settleOutcome(e, seen);
  try {
    if (outcome === "not_happened") fs.unlinkSync(file);
    else if (outcome === "happened")
      atomicWriteFile(file, `${JSON.stringify(withParent({ ...e, after: e.intent }))}\n`, {
        mode: FILE_MODE,
      });
  } catch {
    // Undo settles it the same way from what it then finds.
  }
}

/** What a file inside the project holds now, read as undo reads it; undefined when it cannot be told. */
export function containedHash(root: string, file: string): SeenHash {
  const now = readContained(root, file);
  if (now instanceof Refused || "unreadable" in now) return undefined;
  return now.bytes === null ? null : sha256(now.bytes);
}

function entryName(seq: number): string {
  return `${String(seq).padStart(8, "0")}.json`;
}

function listEntryNumbers(dir: string): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const n of names) {
    const m = ENTRY_NAME.exec(n);
    if (m) out.push(Number(m[1]));
  }
  return out.sort((a, b) => a - b);
}

/** Every readable entry of a session, oldest first, and the problems met on the way. */
export function readCheckpoints(
  stateDir: string,
  sessionId: string,
): { entries: CheckpointEntry[]; problems: string[] } {
  const dir = checkpointDir(stateDir, sessionId);
  const entries: CheckpointEntry[] = [];
  const problems: string[] = [];
  for (const seq of listEntryNumbers(dir)) {
    const file = path.join(dir, entryName(seq));
    const read = readHomeFile(file, { maxBytes: ENTRY_MAX_BYTES, noFollow: true });
    if (!read.ok) {
      if (!read.missing) problems.push(`${file}: ${read.error}`);
      continue;
    }
    const parsed = parseEntry(read.text);
    if (parsed) entries.push(parsed);
    else problems.push(`${file}: not a checkpoint entry; ignored`);
  }
  return { entries, problems };
}

function parseEntry(text: string): CheckpointEntry | undefined {
  try {
    const v = JSON.parse(text) as Partial<CheckpointEntry>;
    if (typeof v.seq !== "number" || typeof v.run_id !== "string" || typeof v.path !== "string")
      return undefined;
    if (!path.isAbsolute(v.path) || !v.before || typeof v.before !== "object") return undefined;
    const b = v.before as Before;
    if (b.kind !== "absent" && b.kind !== "content" && b.kind !== "omitted" && b.kind !== "withheld")
      return undefined;
    return {
      seq: v.seq,
      ts: typeof v.ts === "number" ? v.ts : 0,
      run_id: v.run_id,
      goal: typeof v.goal === "string" ? v.goal : "",
      path: v.path,
      ...(typeof v.root === "string" && path.isAbsolute(v.root) ? { root: v.root } : {}),
      before: b,
      ...(v.after === null || typeof v.after === "string" ? { after: v.after } : {}),
      ...(typeof v.intent === "string" ? { intent: v.intent } : {}),
      ...(typeof v.parent_id === "string" ? { parent_id: v.parent_id } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Removes the entries of one run (after undo reverted them). */
export function dropEntries(stateDir: string, sessionId: string, seqs: readonly number[]): Result<void> {
  const dir = checkpointDir(stateDir, sessionId);
  for (const seq of seqs) {
    try {
      fs.unlinkSync(path.join(dir, entryName(seq)));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT")
        return {
          ok: false,
          error: `cannot remove checkpoint ${entryName(seq)} in ${dir}: ${fsErrorText(e)}`,
        };
    }
  }
  removeDirIfEmpty(dir);
  return { ok: true, value: undefined };
}

function removeDirIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // Not empty (or already gone): nothing to do.
  }
}

/**
 * Keeps one session under CHECKPOINT_MAX_SESSION_BYTES by dropping whole runs, oldest first,
 * never the run being written (its earliest content is what undo needs most).
 */
function boundSession(dir: string, currentRun: string, maxBytes: number): void {
  const files = listEntryNumbers(dir).map((seq) => {
    const file = path.join(dir, entryName(seq));
    let size = 0;
    try {
      size = fs.lstatSync(file).size;
    } catch {
      // Gone meanwhile: counts nothing.
    }
    return { seq, file, size };
  });
  let total = files.reduce((n, f) => n + f.size, 0);
  if (total <= maxBytes) return;
  const runOf = new Map<number, string>();
  for (const f of files) {
    const read = readHomeFile(f.file, { maxBytes: ENTRY_MAX_BYTES, noFollow: true });
    const e = read.ok ? parseEntry(read.text) : undefined;
    runOf.set(f.seq, e?.run_id ?? "");
  }
  const runs: string[] = [];
  for (const f of files) {
    const r = runOf.get(f.seq)!;
    if (!runs.includes(r)) runs.push(r);
  }
  for (const run of runs) {
    if (total <= maxBytes || run === currentRun) break;
    for (const f of files.filter((x) => runOf.get(x.seq) === run)) {
      try {
        fs.unlinkSync(f.file);
        total -= f.size;
      } catch {
        // Best effort: the bound is checked again at the next change.
      }
    }
  }
}

/**
 * Deletes the checkpoints of sessions whose transcript is gone, and of sessions not changed
 * for CHECKPOINT_MAX_AGE_MS. `keep` (the session writing now) is never touched.
 */
export function pruneCheckpoints(
  stateDir: string,
  sessionsDir: string,
  now: number,
  opts: { keep?: string; maxAgeMs?: number } = {},
): string[] {
  const { keep, maxAgeMs = CHECKPOINT_MAX_AGE_MS } = opts;
  const root = checkpointsRoot(stateDir);
  const removed: string[] = [];
  let ids: string[];
  try {
    ids = fs.readdirSync(root);
  } catch {
    return removed;
  }
  for (const id of ids) {
    if (id === keep) continue;
    const dir = path.join(root, id);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(dir);
    } catch {
      continue;
    }
    if (!st.isDirectory()) continue;
    const stale = now - newestMtime(dir, st.mtimeMs) > maxAgeMs;
    if (stale || !sessionExists(sessionsDir, id)) {
      fs.rmSync(dir, { recursive: true, force: true });
      removed.push(id);
    }
  }
  return removed;
}

function newestMtime(dir: string, fallback: number): number {
  let newest = fallback;
  for (const seq of listEntryNumbers(dir)) {
    try {
      newest = Math.max(newest, fs.lstatSync(path.join(dir, entryName(seq))).mtimeMs);
    } catch {
      // Gone meanwhile.
    }
  }
  return newest;
}
