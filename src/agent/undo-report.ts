/**
 * What `scoot undo` / `scoot diff`, the REPL's `/undo` / `/diff` and the editor's commands
 * print: the last run's file changes reverted, or the session's changes as diffs.
 */

import fs from "node:fs";
import type { HomePaths } from "../config/home.js";
import { shownPath } from "../core/inside.js";
import type { DiffLine } from "../core/unified-diff.js";
import { decide } from "../policy/gate.js";
import type { GateSettings } from "../policy/types.js";
import { type CheckpointEntry, checkpointsRoot, readCheckpoints } from "../store/checkpoints.js";
import { projectRoot } from "../store/session-meta.js";
import {
  applyUndo,
  BASH_NOT_COVERED,
  changedSince,
  planUndo,
  sessionChanges,
  settledEntries,
  uncontained,
  unrestorable,
  withheld,
} from "../store/undo.js";
import type { UndoneFiles } from "./history.js";

/** Where undo and diff write: the ordinary (sanitised) writers plus a raw one for coloured diffs. */
export interface UndoIo {
  out(text: string): void;
  err(text: string): void;
  /** Text already made terminal-safe (a rendered diff). */
  raw(text: string): void;
  color: boolean;
  /**
   * One file's diff made to fit the screen (the REPL's `/diff` on a terminal); absent, the diff is
   * shown whole (up to DIFF_MAX_LINES lines).
   */
  fold?(lines: DiffLine[], sessionId: string): DiffLine[];
}

/**
 * A path relative to the session's project root when inside it (checkpoints hold resolved
 * paths): the same name whatever directory `scoot diff` runs in, as the model and git name it.
 */
function shown(file: string, root: string): string {
  return shownPath(file, root);
}

/** The gate's word on each restore, in the session's mode, and the audit record of each file. */
export interface UndoGuard {
  /** Why the gate refuses to write `file` back; undefined when it allows it. */
  judge(file: string): string | undefined;
  /** Appends an `undo` audit event. */
  record(msg: string): void;
}

/** An UndoGuard over gate settings: each restore judged as the model's own write would be. */
export function gateUndoGuard(settings: GateSettings, record: (msg: string) => void): UndoGuard {
  const root = settings.projectRoot;
  return {
    judge(file) {
      const asked = shownPath(file, root);
      const d = decide({ capability: "write", writePaths: [asked] }, settings);
      if (!d.allow) return d.reason;
      // The gate resolves links: a target other than the recorded file leads elsewhere.
      return d.target.write[0] === file ? undefined : `it now leads to ${d.target.write[0]}`;
    },
    record,
  };
}

/** The project root the checkpoints recorded; older entries without one: the directory's root. */
function rootOf(entries: readonly CheckpointEntry[], cwd: string): string {
  return entries.find((e) => e.root !== undefined)?.root ?? projectRoot(cwd);
}

/**
 * What one undo did: `ok` is false when nothing (or not all) was undone; the files it put back
 * or removed, as the person was shown them (relative to the project), are what the model is
 * told (`AgentSession.noteUndo`, src/agent/history.ts).
 */
export interface UndoDone extends UndoneFiles {
  ok: boolean;
}

const NOTHING_UNDONE: UndoDone = { ok: false, restored: [], removed: [] };

/** Reverts the last run of `sessionId` that changed files, and says which files it put back. */
export function undoLastRun(
  io: UndoIo,
  paths: HomePaths,
  sessionId: string,
  cwd: string,
  opts: {
    force: boolean;
    what: string;
    guard?: UndoGuard;
    /** When the session has nothing to undo: lines that point at what else could be undone. */
    instead?: () => string[];
  },
): UndoDone {
  const read = readCheckpoints(paths.state, sessionId);
  for (const p of read.problems) io.err(`scoot: warning: ${p}\n`);
  const root = rootOf(read.entries, cwd);
  const entries = settledEntries(read.entries, root);
  const plan = planUndo(entries);
  if (!plan) {
    io.err(
      `${opts.what}: session ${sessionId} has no file changes to undo (no file_write or file_edit checkpoints)\n`,
    );
    for (const line of opts.instead?.() ?? []) io.err(`  ${line}\n`);
    io.err(`${BASH_NOT_COVERED}\n`);
    return NOTHING_UNDONE;
  }
  const name = (file: string) => shown(file, root);
  const outside = uncontained(plan, root);
  if (outside.length > 0) {
    io.err(
      `${opts.what}: nothing was undone: refused ${outside.length === 1 ? "this entry" : "these entries"}: undo acts only inside the project root ${root}, never through a symlink (--force does not override this):\n`,
    );
    for (const f of outside) {
      io.err(`  ${name(f.path)}: refused: ${f.why}\n`);
      opts.guard?.record(`refused ${f.path} -- outside the project or through a symlink: ${f.why}`);
    }
    io.err("  fix: look at the entry by hand and put the file back yourself if it is yours\n");
    return NOTHING_UNDONE;
  }
  const guard = opts.guard;
  if (guard) {
    const denied: { path: string; why: string }[] = [];
    for (const f of plan.files) {
      const why = guard.judge(f.path);
      if (why !== undefined) denied.push({ path: f.path, why });
    }
    if (denied.length > 0) {
      io.err(`${opts.what}: nothing was undone: the policy gate refused:\n`);
      for (const f of denied) {
        io.err(`  ${name(f.path)}: ${f.why}\n`);
        guard.record(`refused ${f.path} -- ${f.why}`);
      }
      return NOTHING_UNDONE;
    }
  }
  const changed = changedSince(plan, root);
  const tooLarge = unrestorable(plan);
  const secrets = withheld(plan);
  if (!opts.force && (changed.length > 0 || tooLarge.length > 0 || secrets.length > 0)) {
    if (changed.length > 0) {
      io.err(
        `${opts.what}: nothing was undone: ${changed.length === 1 ? "this file has" : "these files have"} changed since Scoot changed ${changed.length === 1 ? "it" : "them"}:\n`,
      );
      for (const f of changed) io.err(`  ${name(f)}\n`);
    }
    if (secrets.length > 0) {
      io.err(
        `${opts.what}: nothing was undone: these files are secrets; their earlier content was not kept:\n`,
      );
      for (const f of secrets) io.err(`  ${name(f)}\n`);
    }
    if (tooLarge.length > 0) {
      io.err(`${opts.what}: nothing was undone: the earlier content of these files was too large to keep:\n`);
      for (const f of tooLarge) io.err(`  ${name(f)}\n`);
    }
    // Named as this caller takes it: the REPL's and the editor's slash command, or the CLI's.
    const [diff, force] = opts.what.startsWith("/")
      ? ["/diff", "/undo --force"]
      : [`scoot diff ${sessionId}`, `scoot undo ${sessionId} --force`];
    io.err(`  fix: look at the changes (${diff}), then ${force} to overwrite them\n`);
    return NOTHING_UNDONE;
  }
  const out = applyUndo(paths.state, sessionId, plan, root);
  for (const f of out.restored) opts.guard?.record(`restored ${f}`);
  for (const f of out.removed) opts.guard?.record(`removed ${f}`);
  for (const f of out.failed) opts.guard?.record(`failed ${f.path} -- ${f.error}`);
  io.out(`undid run ${plan.runId} of session ${sessionId}${plan.goal ? ` (goal: ${plan.goal})` : ""}\n`);
  for (const f of out.restored) io.out(`  restored ${name(f)}\n`);
  for (const f of out.removed) io.out(`  removed  ${name(f)} (it did not exist before)\n`);
  for (const f of out.skipped) io.out(`  skipped  ${name(f)} (its earlier content was too large to keep)\n`);
  for (const f of out.secret)
    io.out(`  skipped  ${name(f)} (a secret: its earlier content was not kept; restore it yourself)\n`);
  for (const f of out.failed) io.err(`${opts.what}: could not restore ${name(f.path)}: ${f.error}\n`);
  io.err(`${BASH_NOT_COVERED}\n`);
  return {
    ok: out.failed.length === 0,
    ...(plan.goal ? { goal: plan.goal } : {}),
    restored: out.restored.map((f) => shown(f, cwd)),
    removed: out.removed.map((f) => shown(f, cwd)),
  };
}

/** A run that left file changes to undo: its session, its id and goal, and when it last changed a file. */
export interface UndoableRun {
  sessionId: string;
  runId: string;
  goal: string;
  /** Milliseconds since the epoch of the run's last kept change. */
  at: number;
}

/**
 * The run that changed files most recently, of the sessions whose changes were made in the project
 * at `root` (other than `except`): what undo would revert in that session. Read from the
 * checkpoint store, where only sessions with kept changes have a directory.
 */
export function latestUndoableRun(stateDir: string, root: string, except: string): UndoableRun | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(checkpointsRoot(stateDir));
  } catch {
    return undefined;
  }
  let best: UndoableRun | undefined;
  for (const sessionId of names) {
    if (sessionId === except) continue;
    const read = readCheckpoints(stateDir, sessionId).entries;
    const entries = settledEntries(read, rootOf(read, root));
    const plan = planUndo(entries);
    if (!plan) continue;
    const ofRun = entries.filter((e) => e.run_id === plan.runId);
    if (rootOf(ofRun, root) !== root) continue;
    const at = Math.max(...ofRun.map((e) => e.ts));
    if (!best || at > best.at) best = { sessionId, runId: plan.runId, goal: plan.goal, at };
  }
  return best;
}

/** Shows every file the session's kept changes touched, as a diff against what is on disk now. */
export async function showSessionDiff(
  io: UndoIo,
  paths: HomePaths,
  sessionId: string,
  cwd: string,
): Promise<void> {
  const read = readCheckpoints(paths.state, sessionId);
  for (const p of read.problems) io.err(`scoot: warning: ${p}\n`);
  const root = rootOf(read.entries, cwd);
  const changes = sessionChanges(settledEntries(read.entries, root), root);
  if (changes.length === 0) {
    io.err(`session ${sessionId} has no file changes (no file_write or file_edit checkpoints)\n`);
    io.err("note: changes made by bash commands are not recorded and cannot be shown\n");
    return;
  }
  const { diffLines, paintDiffLine, renderUnifiedDiff } = await import("../core/unified-diff.js");
  for (const c of changes) {
    const name = shown(c.path, root);
    if (c.refused) {
      io.err(`note: ${name}: refused, not read: ${c.refused}\n`);
      continue;
    }
    if (c.changedSince)
      io.err(`note: ${name} has changed since Scoot last changed it; the diff shows it as it is now\n`);
    if (c.secret) {
      io.out(`${name}: changed (a secret: its content was not kept and is not shown)\n`);
      continue;
    }
    if (c.omitted) {
      io.out(`${name}: changed (its earlier content was too large to keep; no diff)\n`);
      continue;
    }
    if (!io.fold) {
      io.raw(renderUnifiedDiff(name, c.before, c.now, { color: io.color }));
      continue;
    }
    const d = diffLines(name, c.before, c.now);
    const folded = io.fold([...d.header, ...d.body], sessionId);
    io.raw(`${folded.map((l) => paintDiffLine(l, io.color)).join("\n")}\n`);
  }
  io.err("note: changes made by bash commands are not recorded and not shown\n");
}
