/**
 * The one call pipeline (docs/safety.md "One call pipeline"): every tool call, whoever
 * starts it, goes
 *
 *   prepare: find the tool → validate the input once → declared effects → gate
 *            → invalid | denied | ready {tool, input, target}          (call-prepare.ts)
 *   approve: the one decision (gate, `[[tools.rules]]`, remembered answers, who can be asked;
 *            decide.ts), audited, then a person may still refuse a call with an effect
 *            → approved {change?} | refused                            (call-approval.ts)
 *   run:     undo checkpoint of a file about to change (call-checkpoint.ts) → audit
 *            `tool_call` → the tool under its deadline, opening only `target` →
 *            `file_changed` → clip
 *
 * Top-level steps, `parallel` children (`ctx.call`), `http_request` redirect hops
 * (`ctx.gate`) and `scoot policy check` (prepare and decide only) all come through here, so
 * the gate cannot judge one file while a tool opens another. Each phase returns a new record.
 */

import { clip } from "../core/clip.js";
import { redact } from "../core/redact.js";
import type { Decision, Result } from "../core/types.js";
import type { AuditCall } from "../store/audit-readers.js";
import type { CallOutcome } from "../store/session.js";
import type { ToolContext, ToolResult } from "../tools/types.js";
import {
  type Approval,
  type ApprovalPhase,
  type ApprovalSetup,
  type Approved,
  approveCall,
  auditRefusal,
} from "./call-approval.js";
import { type CheckpointStore, keepCheckpoint, recordChange } from "./call-checkpoint.js";
import { decisionOf, pipelineRules, safeCommandsRun } from "./call-decision.js";
import { type CallEnv, prepareCall } from "./call-prepare.js";
import type { Prepared, Ready } from "./call-record.js";
import { type AgentEvent, denialReason } from "./events.js";
import { runToolWithDeadline } from "./execute.js";
import { isNotRecorded, type NotRecorded, notRecorded, UNDO_CHECKPOINT_RULE } from "./run-audit.js";

/** Appends one audit record of the run (bound to its session and run); an error: not on disk. */
export type CallAudit = (
  kind: "tool_call" | "policy_deny" | "approval",
  msg: string,
  call?: AuditCall,
) => Result<void>;

export interface PipelineDeps {
  env: CallEnv;
  audit: CallAudit;
  /**
   * The run's event stream: the pipeline tells it each call's phases (`deny`, `running`,
   * `refused`, `file_changed`), each event carrying the call's record.
   */
  emit?: (e: AgentEvent) => void;
  /** The tool context without the per-call fields the pipeline fills in. */
  base: Omit<ToolContext, "signal" | "timeoutMs" | "gate" | "call">;
  timeoutMs: number;
  /** Absent: nobody is asked (`tools.approval = "never"`, or no person can answer). */
  approval?: ApprovalSetup;
  /** Absent: file changes are not checkpointed (in-process tests, `policy check`). */
  checkpoints?: CheckpointStore;
}

/** What a call that ran gave back: the raw result and it clipped to the tool's size (also in its record). */
export interface Ran {
  kind: "ran";
  text: string;
  raw: string;
  failed?: boolean;
  /** The call's record as it ended: its checkpoint and result added (a new record, not the approved one changed). */
  record: Ready;
}

export interface CallPipeline {
  prepare(action: string, raw: string, parsed?: { input: unknown }): Prepared;
  /** Records a denial (audit, event); the observation the model sees, or that it is not recorded. */
  deny(p: Prepared & { kind: "denied" | "invalid" }): string | NotRecorded;
  /** The approval phase: asks the person when the call has an effect and an approver is set. */
  approve(ready: Ready, signal: AbortSignal): Promise<Approval | NotRecorded>;
  /**
   * Audits and runs an approved call under the deadline. Not recorded when its own record, or
   * a record of a call it started (a child, a redirect hop), could not be written.
   */
  run(approved: Approved, signal: AbortSignal): Promise<Ran | NotRecorded>;
}

/** The observation a derived call gets when its record could not be written. */
function unrecordedChild(action: string): string {
  return `${action}: not run: the audit log cannot be written`;
}

/** The record of a call that ran, from what the tool gave back (children as they ended). */
function endedRecord(ready: Ready, result: ToolResult, ended: ReadonlyMap<number, Prepared>): Ready {
  return {
    ...ready,
    // A child that never ran keeps its prepared record.
    ...(ready.children ? { children: ready.children.map((c) => ended.get(c.id) ?? c) } : {}),
    result: {
      raw: result.text,
      text: clip(result.text, ready.tool.clipBytes),
      ...(result.failed ? { failed: true } : {}),
      ...(result.details ? { details: result.details } : {}),
    },
  };
}

export function createCallPipeline(deps: PipelineDeps): CallPipeline {
  const emit = (e: AgentEvent): void => deps.emit?.(e);
  /** An audit record the call cannot go on without: undefined once written. */
  const mustAudit = (
    kind: "tool_call" | "approval",
    msg: string,
    fields?: AuditCall,
  ): NotRecorded | undefined => {
    const logged = deps.audit(kind, msg, fields);
    return logged.ok ? undefined : notRecorded(logged.error);
  };
  const recordDenial = (call: Prepared & { kind: "denied" | "invalid" }): NotRecorded | undefined => {
    emit({ type: "deny", call });
    const r = deps.audit("policy_deny", `${call.action} ${call.raw} -- ${denialReason(call)}`, {
      tool: call.action,
      outcome: "denied",
    });
    return r.ok ? undefined : notRecorded(r.error);
  };
  const rules = pipelineRules(deps.base.config.tools.rules, deps.env.tools, deps.env.settings);
  const phase: ApprovalPhase = {
    rules,
    safeCommands: safeCommandsRun(deps.env.settings.mode, deps.base.config),
    ...(deps.approval ? { setup: deps.approval } : {}),
    cwd: deps.base.cwd,
    ...(deps.base.services.editorBuffers ? { editorBuffers: deps.base.services.editorBuffers } : {}),
    audit: (msg, fields) => mustAudit("approval", msg, fields),
    emit,
  };
  const approve = (ready: Ready, signal: AbortSignal) => approveCall(phase, ready, signal);

  /** A redirect hop: the gate, then its deny and ask rules (nobody is asked mid-call); audited. */
  const judgeHop = (action: string, raw: string, note: (r: NotRecorded | undefined) => void): Decision => {
    const p = prepareCall(action, raw, deps.env);
    if (p.kind !== "ready") {
      note(recordDenial(p));
      return { allow: false, reason: denialReason(p) };
    }
    const d = decisionOf(p, {
      rules,
      ...(deps.approval ? { memory: deps.approval.memory } : {}),
      canAsk: false,
      nobody: "a redirect is not asked about",
    });
    if (d.kind !== "refuse") return { allow: true };
    note(auditRefusal(phase, action, raw, d));
    return { allow: false, reason: d.reason };
  };

  /**
   * The hooks a running tool starts derived calls through. A tool may swallow what a derived
   * call returns, so the first record that could not be written is kept here and turned into
   * the call's own result once the tool returns.
   */
  const derivedHooks = (
    ready: Ready,
    unrecorded: { first?: NotRecorded },
    /** Each child's record as it ended, by id: the parent's final record carries them. */
    ended: Map<number, Prepared>,
  ) => {
    const note = (r: NotRecorded | undefined): void => {
      if (r) unrecorded.first ??= r;
    };
    // Each declared child runs once, as it was judged when the call was prepared.
    const pending = [...(ready.children ?? [])];
    return (own: AbortSignal) => ({
      gate: (action: string, raw: string) => judgeHop(action, raw, note),
      /** A running tool's newest output lines, redacted like every line that leaves the loop. */
      progress: (lines: readonly string[]) =>
        emit({ type: "tool_output", lines: lines.map(redact), call: ready }),
      call: async (action: string, raw: string): Promise<string> => {
        const at = pending.findIndex((c) => c.action === action && c.raw === raw);
        if (at === -1) return `${action}: not run: it is not one of the calls ${ready.action} declared`;
        const child = pending.splice(at, 1)[0]!;
        const out = await runChild(child, own, (record) => ended.set(record.id, record));
        if (isNotRecorded(out)) {
          note(out);
          return unrecordedChild(action);
        }
        return out;
      },
    });
  };

  const run = async (approved: Approved, signal: AbortSignal): Promise<Ran | NotRecorded> => {
    // The checkpoint comes first, on disk before the change (write-ahead): a call whose undo
    // copy cannot be kept does not run at all.
    const kept = keepCheckpoint(approved.ready, deps.checkpoints, deps.env.settings);
    // A checkpoint the store could not write stops the run, as an audit record would.
    if (kept.unrecorded) return notRecorded(kept.error!, UNDO_CHECKPOINT_RULE);
    if (kept.error) {
      const record: Ready = {
        ...approved.ready,
        result: { raw: kept.error, text: kept.error, failed: true },
      };
      return { kind: "ran", text: kept.error, raw: kept.error, failed: true, record };
    }
    // Each phase adds to a new record: the one approved is not changed.
    const ready: Ready = kept.entry ? { ...approved.ready, checkpoint: kept.entry } : approved.ready;
    const logged = mustAudit("tool_call", `${ready.action} ${ready.raw}`, { tool: ready.action });
    if (logged) return logged;
    emit({ type: "running", call: ready });
    const unrecorded: { first?: NotRecorded } = {};
    const childrenEnded = new Map<number, Prepared>();
    const { change } = ready;
    // A call that may move a protected place: the gate resolves the places again after it.
    const places = ready.effects.capability === "read" ? undefined : deps.env.settings.places;
    places?.effectStarted();
    let result: ToolResult;
    try {
      result =
        change && !change.after.ok
          ? { text: change.after.error, failed: true }
          : await runToolWithDeadline(
              ready.tool,
              ready.input,
              ready.target,
              deps.base,
              derivedHooks(ready, unrecorded, childrenEnded),
              deps.timeoutMs,
              signal,
              change?.after.ok
                ? {
                    before: change.before,
                    after: change.after.value,
                    ...(change.base ? { base: change.base } : {}),
                  }
                : undefined,
            );
    } finally {
      places?.effectEnded();
    }
    recordChange(ready, kept.entry, deps.checkpoints, emit);
    if (unrecorded.first) return unrecorded.first;
    const record = endedRecord(ready, result, childrenEnded);
    const { text } = record.result!;
    return { kind: "ran", text, raw: result.text, ...(result.failed ? { failed: true } : {}), record };
  };

  /** A judged child of a fan-out call: the rest of the pipeline, inside its parent's signal. */
  const runChild = async (
    p: Prepared,
    signal: AbortSignal,
    endedAs: (record: Prepared) => void,
  ): Promise<string | NotRecorded> => {
    if (p.kind === "invalid") return `${p.action}: ${p.error}`;
    if (p.kind === "denied") return recordDenial(p) ?? `denied: ${p.reason}`;
    // Children are reads (the parallel allowlist): this asks nobody, but keeps one path.
    const approval = await approve(p, signal);
    if (approval.kind === "refused") endedAs(approval.record);
    if (approval.kind !== "approved") return approval.kind === "refused" ? approval.observation : approval;
    const ran = await run(approval, signal);
    if (ran.kind === "ran") endedAs(ran.record);
    return ran.kind === "ran" ? ran.text : ran;
  };

  return {
    prepare: (action, raw, parsed) => prepareCall(action, raw, deps.env, parsed),
    deny: (p) => recordDenial(p) ?? denialReason(p),
    approve,
    run,
  };
}

/**
 * How a call ended, from its record (never from its observation's words): what the transcript
 * line carries and every reader of a past call uses (docs/sessions.md "Sessions and audit").
 */
export function outcomeOf(p: Prepared, interrupted: boolean): CallOutcome {
  if (interrupted) return { outcome: "interrupted" };
  if (p.kind !== "ready") return { outcome: "denied" };
  if (p.approval?.answer === "refuse")
    return { outcome: "refused", ...(p.approval.rule ? { rule: p.approval.rule } : {}) };
  const result = p.result;
  const exit = result?.details?.exitCode;
  const withExit = exit !== undefined ? { exit_code: exit } : {};
  if (result === undefined || result.failed)
    return { outcome: result?.details?.stopped === "interrupted" ? "interrupted" : "failed", ...withExit };
  return { outcome: "ran", ...withExit };
}
