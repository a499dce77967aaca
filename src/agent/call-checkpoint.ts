/**
 * Undo's part of running a file tool (docs/sessions.md "Undo"): before the change, the file's
 * state is checked against what was approved and kept, with the hash of what the call will
 * write, as a checkpoint flushed to disk before the change can become visible (write-ahead, as
 * the `tool_call` record); after it, the new state is recorded and the change reported. A call
 * whose checkpoint cannot be kept does not run, and the run stops as for an audit record.
 */
import { readCurrent } from "../core/file-state.js";
import { isInside, shownPath } from "../core/inside.js";
import { secretLikeName } from "../policy/paths.js";
import type { GateSettings } from "../policy/types.js";
import type { CheckpointEntry, CheckpointWriter } from "../store/checkpoints.js";
import type { Ready } from "./call-record.js";
import type { AgentEvent } from "./events.js";
import { changeBase } from "./file-change.js";

/** Where a run keeps its checkpoints; absent: file changes are not checkpointed. */
export interface CheckpointStore {
  writer: CheckpointWriter;
  runId: string;
  goal: string;
}

/**
 * Whether the gate calls `abs` a secret (guarded's rule, whatever the mode): such a file is
 * changed without the store keeping its content, so no copy of it lies in Scoot's home.
 */
function secretOf(abs: string, settings: GateSettings): boolean {
  const root = settings.projectRoot;
  const rel = shownPath(abs, root);
  if (secretLikeName(rel) !== undefined) return true;
  return settings.secretPaths.some((p) => isInside(abs, p));
}

/**
 * Keeps the file's current state before the change. An error is the observation of a call that
 * does not run; `unrecorded` marks one the store could not write, which stops the run.
 */
export function keepCheckpoint(
  ready: Ready,
  store: CheckpointStore | undefined,
  settings: GateSettings,
): { entry?: CheckpointEntry; error?: string; unrecorded?: true } {
  const { change } = ready;
  // A call that will fail changes nothing: no checkpoint (and no diff) for it.
  if (!change?.after.ok) return {};
  // The question may have waited minutes: what the person approved, and what undo would put
  // back, must be what the file holds now, or the person's own edit meanwhile would be lost.
  const now = readCurrent(change.abs);
  const same = now.ok && (now.bytes === null ? change.before === null : change.before?.equals(now.bytes));
  if (!same) {
    return {
      error: `${ready.action}: not run: ${change.shown} changed after this call was prepared (while it waited for approval); read it again and retry`,
    };
  }
  if (!store) return {};
  const kept = store.writer.before({
    runId: store.runId,
    goal: store.goal,
    path: change.abs,
    // What undo puts back is the text the person had: the editor's, unsaved changes included.
    content: changeBase(change),
    ...(secretOf(change.abs, settings) ? { withheld: true } : {}),
    ...(change.mode !== undefined ? { mode: change.mode } : {}),
    // What the tool will write (tools write exactly the planned content): the intent that lets
    // undo tell a change whose completion was never recorded from one that never happened.
    intended: Buffer.from(change.after.value, "utf8"),
  });
  if (!kept.ok)
    return {
      error: `${ready.action}: not run: cannot keep the undo checkpoint: ${kept.error}`,
      unrecorded: true,
    };
  return { entry: kept.value };
}

/** After a file tool ran: the change is recorded and reported when the file now differs. */
export function recordChange(
  ready: Ready,
  entry: CheckpointEntry | undefined,
  store: CheckpointStore | undefined,
  emit: (e: AgentEvent) => void,
): void {
  const { change } = ready;
  if (!change) return;
  const now = readCurrent(change.abs);
  if (!now.ok) return;
  const same =
    now.bytes === null ? change.before === null : change.before !== null && now.bytes.equals(change.before);
  if (same) {
    // Nothing changed (the tool failed): its entry goes. Best effort: undo settles one left
    // behind by what the file holds, its earlier content here.
    if (entry && store) store.writer.drop(entry);
    return;
  }
  // Best effort: without its "after", the entry's intent still lets undo restore this file.
  if (entry && store) store.writer.after(entry, now.bytes);
  const before = changeBase(change);
  emit({
    type: "file_changed",
    path: change.shown,
    before: before === null ? null : before.toString("utf8"),
    after: now.bytes === null ? null : now.bytes.toString("utf8"),
    call: ready,
  });
}
