/**
 * Undo and diff over the checkpoint store (docs/sessions.md "Undo"). Undo takes the session's last
 * run that changed files and puts each file back as it was before that run: its earliest
 * checkpoint in the run is what it held, its latest recorded "after" is what Scoot left.
 * A file that no longer holds what Scoot left was changed since — by the person, another
 * program or a later bash command — and undo refuses (naming it) unless forced, so it never
 * throws away work it did not make. Changes made through bash are not checkpointed at all.
 */
import {
  type Before,
  beforeBytes,
  type CheckpointEntry,
  containedHash,
  dropEntries,
  settleEntries,
  sha256,
} from "./checkpoints.js";
import { Refused, readContained, unlinkContained, writeContained } from "./contained.js";

/** The sentence every undo prints: what it does not cover. */
export const BASH_NOT_COVERED =
  "note: undo covers file_write and file_edit only; changes made by bash commands are not reverted";

export interface FileRevert {
  path: string;
  /** What the file held before the run. */
  restore: Before;
  /** sha256 of what Scoot left (null: Scoot removed it). */
  left: string | null;
  /** The directory Scoot left it in (device:inode), when recorded. */
  parentId?: string;
}

export interface UndoPlan {
  runId: string;
  goal: string;
  files: FileRevert[];
  /** Entries undo removes once the files are back: the run's and any unconfirmed ones. */
  seqs: number[];
}

/**
 * The session's entries as undo and diff read them: a change a crash (or a completion record that
 * could not be written) left unconfirmed is settled by what its file holds now, inside `root`
 * (checkpoints.ts settleEntries), so undo knows every change that happened.
 */
export function settledEntries(entries: readonly CheckpointEntry[], root: string): CheckpointEntry[] {
  return settleEntries(entries, (e) => containedHash(root, e.path));
}

/** Entries whose change happened (recorded after it, or settled). */
function confirmed(entries: readonly CheckpointEntry[]): CheckpointEntry[] {
  return entries.filter((e) => e.after !== undefined);
}

/** The undo of the last run that changed files; undefined when there is none. */
export function planUndo(entries: readonly CheckpointEntry[]): UndoPlan | undefined {
  const done = confirmed(entries);
  const last = done.at(-1);
  if (!last) return undefined;
  const ofRun = done.filter((e) => e.run_id === last.run_id);
  const files = new Map<string, FileRevert>();
  for (const e of ofRun) {
    const seen = files.get(e.path);
    const revert = seen ?? { path: e.path, restore: e.before, left: null };
    revert.left = e.after ?? null;
    // The directory as Scoot last left the file in it.
    if (e.parent_id !== undefined) revert.parentId = e.parent_id;
    else delete revert.parentId;
    if (!seen) files.set(e.path, revert);
  }
  const seqs = entries.filter((e) => e.run_id === last.run_id || e.after === undefined).map((e) => e.seq);
  return { runId: last.run_id, goal: last.goal, files: [...files.values()], seqs };
}

/** The current hash of a file: null when absent, undefined when it is no regular file we can read. */
function currentHash(root: string, file: string, parentId?: string): string | null | undefined | Refused {
  const now = readContained(root, file, parentId);
  if (now instanceof Refused) return now;
  if ("unreadable" in now) return undefined;
  return now.bytes === null ? null : sha256(now.bytes);
}

/** Files of the plan that no longer hold what Scoot left. */
export function changedSince(plan: UndoPlan, root: string): string[] {
  return plan.files
    .filter((f) => {
      if (f.restore.kind === "withheld") return false;
      const h = currentHash(root, f.path, f.parentId);
      return !(h instanceof Refused) && h !== f.left;
    })
    .map((f) => f.path);
}

/** Files undo must not touch: they lie outside the root, or a link now leads elsewhere. --force never overrides this. */
export function uncontained(plan: UndoPlan, root: string): { path: string; why: string }[] {
  const out: { path: string; why: string }[] = [];
  for (const f of plan.files) {
    const h = currentHash(root, f.path, f.parentId);
    if (h instanceof Refused) out.push({ path: f.path, why: h.why });
  }
  return out;
}

/** Files the gate calls secret: their content was not kept. */
export function withheld(plan: UndoPlan): string[] {
  return plan.files.filter((f) => f.restore.kind === "withheld").map((f) => f.path);
}

/** Files whose earlier content was too large to keep. */
export function unrestorable(plan: UndoPlan): string[] {
  return plan.files.filter((f) => f.restore.kind === "omitted").map((f) => f.path);
}

export interface UndoOutcome {
  restored: string[];
  removed: string[];
  skipped: string[];
  /** Secrets: their earlier content was never kept. */
  secret: string[];
  failed: { path: string; error: string }[];
}

/** Puts every file of the plan back; the run's checkpoints go once all files are back. */
export function applyUndo(stateDir: string, sessionId: string, plan: UndoPlan, root: string): UndoOutcome {
  const out: UndoOutcome = { restored: [], removed: [], skipped: [], secret: [], failed: [] };
  for (const f of plan.files) {
    if (f.restore.kind === "withheld") {
      out.secret.push(f.path);
      continue;
    }
    if (f.restore.kind === "omitted") {
      out.skipped.push(f.path);
      continue;
    }
    const r = restoreFile(root, f.path, f.restore, f.parentId);
    if (!r.ok) out.failed.push({ path: f.path, error: r.error });
    else if (f.restore.kind === "absent") out.removed.push(f.path);
    else out.restored.push(f.path);
  }
  // A failed file keeps its checkpoint: undo can be tried again once the cause is fixed.
  if (out.failed.length === 0) {
    const dropped = dropEntries(stateDir, sessionId, plan.seqs);
    if (!dropped.ok) out.failed.push({ path: "(checkpoints)", error: dropped.error });
  }
  return out;
}

function restoreFile(
  root: string,
  file: string,
  before: Before,
  parentId?: string,
): { ok: true } | { ok: false; error: string } {
  const refusal = (r: Refused) => ({
    ok: false as const,
    error: `refused: ${r.why}; nothing was written or removed`,
  });
  if (before.kind === "absent") {
    const r = unlinkContained(root, file, parentId);
    if (r instanceof Refused) return refusal(r);
    return r.ok ? { ok: true } : { ok: false, error: r.error };
  }
  const bytes = beforeBytes(before);
  if (!bytes || before.kind !== "content") return { ok: false, error: "its earlier content was not kept" };
  const r = writeContained(root, file, bytes, before.mode, parentId);
  if (r instanceof Refused) return refusal(r);
  return r.ok ? { ok: true } : { ok: false, error: r.error };
}

export interface SessionFileChange {
  path: string;
  /** Before the session's first kept change of it (null: absent). */
  before: string | null;
  /** Now on disk (null: absent). */
  now: string | null;
  /** The earlier content was too large to keep: no diff can be shown. */
  omitted: boolean;
  /** The file no longer holds what Scoot left. */
  changedSince: boolean;
  runs: number;
  /** The gate calls it secret: neither its earlier nor its current content is shown. */
  secret: boolean;
  /** Not read: it lies outside the root or a link on its way leads elsewhere. */
  refused?: string;
}

/** What the session's kept changes add up to, file by file, in the order they were first changed. */
export function sessionChanges(entries: readonly CheckpointEntry[], root: string): SessionFileChange[] {
  const byPath = new Map<string, { first: CheckpointEntry; left: string | null; runs: Set<string> }>();
  for (const e of confirmed(entries)) {
    const seen = byPath.get(e.path);
    if (seen) {
      seen.left = e.after ?? null;
      seen.runs.add(e.run_id);
    } else byPath.set(e.path, { first: e, left: e.after ?? null, runs: new Set([e.run_id]) });
  }
  const out: SessionFileChange[] = [];
  for (const [file, { first, left, runs }] of byPath) {
    const secret = first.before.kind === "withheld";
    // A secret is never read back: its content would land in the diff.
    const now = secret ? ({ unreadable: "a secret" } as const) : readContained(root, file);
    const refused = now instanceof Refused ? now.why : undefined;
    const bytes = now instanceof Refused || "unreadable" in now ? null : now.bytes;
    const readable = !(now instanceof Refused) && !("unreadable" in now);
    const before = beforeBytes(first.before);
    out.push({
      path: file,
      before: before === null ? null : before.toString("utf8"),
      now: bytes === null ? null : bytes.toString("utf8"),
      omitted: first.before.kind === "omitted" || secret,
      secret,
      changedSince: (readable ? (bytes === null ? null : sha256(bytes)) : undefined) !== left,
      runs: runs.size,
      ...(refused ? { refused } : {}),
    });
  }
  return out;
}
