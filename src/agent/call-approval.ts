/**
 * The approval phase of a judged call (docs/safety.md "Approval", "Rules"): decide → audit →
 * ask → remember. A file tool's change is planned first, from the bytes it will replace (the
 * editor's unsaved text when an editor writes), so the question shows what will happen. Each
 * outcome is a new record: the one prepared is not changed.
 */
import type { AuditCall } from "../store/audit-readers.js";
import type { EditorBuffers } from "../tools/types.js";
import {
  type ApprovalAnswer,
  type ApprovalMemory,
  type Approver,
  refusalObservation,
  ruleRefusalObservation,
} from "./approval.js";
import { decisionOf, type PipelineRules } from "./call-decision.js";
import type { CallApproval, Ready } from "./call-record.js";
import type { CallDecision } from "./decide.js";
import type { AgentEvent } from "./events.js";
import { planFileChange, planFromEditor } from "./file-change.js";
import type { NotRecorded } from "./run-audit.js";

/** Who answers approval questions in this session, and the "always" answers it gave. */
export interface ApprovalSetup {
  approver: Approver;
  memory: ApprovalMemory;
}

/** A call a person approved (or that needed no approval); its record holds the planned change. */
export interface Approved {
  kind: "approved";
  ready: Ready;
}

/** A refused call, with its record (its approval says who refused and why). */
export interface Refused {
  kind: "refused";
  observation: string;
  record: Ready;
}

export type Approval = Approved | Refused;

/** What the phase works with: the run's rules, who answers, and where it records. */
export interface ApprovalPhase {
  rules: PipelineRules | undefined;
  /** Known-safe commands run unasked in this run (call-decision.ts safeCommandsRun). */
  safeCommands?: boolean;
  /** Absent: nobody is asked. */
  setup?: ApprovalSetup;
  cwd: string;
  editorBuffers?: EditorBuffers;
  /** An `approval` audit record the call cannot go on without: undefined once written. */
  audit: (msg: string, fields: AuditCall) => NotRecorded | undefined;
  emit: (e: AgentEvent) => void;
}

/** The audit record of a refusal that no person gave now (a rule, an earlier "reject always"). */
export function auditRefusal(
  phase: Pick<ApprovalPhase, "audit">,
  action: string,
  raw: string,
  d: Extract<CallDecision, { kind: "refuse" }>,
): NotRecorded | undefined {
  return phase.audit(`refused: ${d.reason}: ${action} ${raw}`, {
    tool: action,
    decision: "refuse",
    outcome: "refused",
    ...("rule" in d ? { rule: d.rule } : {}),
  });
}

/** A call refused without asking: audited, told, never run. */
function refuse(
  phase: ApprovalPhase,
  call: Ready,
  d: Extract<CallDecision, { kind: "refuse" }>,
): Approval | NotRecorded {
  const remembered = d.why === "remembered";
  const ready: Ready = {
    ...call,
    approval: {
      answer: "refuse",
      reason: d.reason,
      ...("rule" in d ? { rule: d.rule } : {}),
      ...(remembered ? { remembered: true } : {}),
    },
  };
  const logged = auditRefusal(phase, ready.action, ready.raw, d);
  if (logged) return logged;
  phase.emit({ type: "refused", call: ready });
  return {
    kind: "refused",
    observation: remembered ? refusalObservation(ready.action, d.reason) : ruleRefusalObservation(d.reason),
    record: ready,
  };
}

/** The person's answer to the question about `ready`, audited and remembered. */
async function ask(
  phase: ApprovalPhase,
  setup: ApprovalSetup,
  ready: Ready,
  rule: string | undefined,
  signal: AbortSignal,
): Promise<Approval | NotRecorded> {
  const call = `${ready.action} ${ready.raw}`;
  const { rememberKey } = ready;
  const asked = phase.audit(rule ? `asked (rule ${rule}): ${call}` : `asked: ${call}`, {
    tool: ready.action,
    decision: "ask",
    ...(rule ? { rule } : {}),
  });
  if (asked) return asked;
  let answer: ApprovalAnswer;
  try {
    answer = await setup.approver.ask(ready, signal);
  } catch (e) {
    // An approver that fails (a closed terminal, a gone editor) is a refusal, never a yes.
    answer = { kind: "refuse", reason: `no answer: ${(e as Error)?.message ?? String(e)}` };
  }
  if (signal.aborted && answer.kind !== "refuse") answer = { kind: "refuse", reason: "interrupted" };
  if (answer.kind === "refuse") {
    const reason = answer.reason?.trim() || undefined;
    const refusedCall: Ready = { ...ready, approval: { answer: "refuse", ...(reason ? { reason } : {}) } };
    if (answer.always) setup.memory.remember(rememberKey, "refuse");
    const refused = phase.audit(`answer=refuse: ${call}${reason ? ` -- ${reason}` : ""}`, {
      tool: ready.action,
      decision: "refuse",
      outcome: "refused",
    });
    if (refused) return refused;
    phase.emit({ type: "refused", call: refusedCall });
    return { kind: "refused", observation: refusalObservation(ready.action, reason), record: refusedCall };
  }
  if (answer.kind === "always") setup.memory.remember(rememberKey, "allow");
  return (
    phase.audit(`answer=${answer.kind}${answer.kind === "always" ? ` (${rememberKey})` : ""}: ${call}`, {
      tool: ready.action,
      decision: answer.kind,
    }) ?? approvedAs(ready, { answer: answer.kind })
  );
}

function approvedAs(ready: Ready, approval: CallApproval): Approved {
  return { kind: "approved", ready: { ...ready, approval } };
}

/** decide → audit → ask → remember. Returns a new record: the one prepared is not changed. */
export async function approveCall(
  phase: ApprovalPhase,
  prepared: Ready,
  signal: AbortSignal,
): Promise<Approval | NotRecorded> {
  // Only a content-replacing tool has a change to plan (a read never reads its file twice).
  const planned = prepared.tool.proposedContent
    ? planFileChange(prepared.tool, prepared.input, prepared.target, phase.cwd)
    : undefined;
  // An editor that writes the file has it planned from its own text (its unsaved changes).
  const change = planned
    ? await planFromEditor(planned, prepared.tool, prepared.input, phase.editorBuffers, signal)
    : undefined;
  // What anyone is asked about: the call with the change it will make.
  const ready: Ready = change ? { ...prepared, change } : prepared;
  const { setup } = phase;
  const call = `${ready.action} ${ready.raw}`;
  // A change that cannot be made (file_edit's `old` is not there) is not offered: the call
  // fails with the tool's own words when it runs, and writes nothing.
  const decision = decisionOf(ready, {
    rules: phase.rules,
    ...(setup ? { memory: setup.memory } : {}),
    canAsk: setup !== undefined,
    ...(phase.safeCommands ? { safeCommands: true } : {}),
    cannotApply: change !== undefined && !change.after.ok,
  });
  if (decision.kind === "refuse") return refuse(phase, ready, decision);
  if (decision.kind === "run") {
    if (decision.why === "not_needed") return approvedAs(ready, { answer: "not_needed" });
    if (decision.why === "rule")
      return (
        phase.audit(`${decision.reason}: ${call}`, {
          tool: ready.action,
          decision: "run",
          rule: decision.rule,
        }) ?? approvedAs(ready, { answer: "rule", rule: decision.rule })
      );
    if (decision.why === "known_safe")
      return (
        phase.audit(`allowed as a known-safe command: ${call}`, { tool: ready.action, decision: "run" }) ??
        approvedAs(ready, { answer: "known_safe" })
      );
    return (
      phase.audit(`allowed by an earlier "always" (${ready.rememberKey}): ${call}`, {
        tool: ready.action,
        decision: "run",
      }) ?? approvedAs(ready, { answer: "remembered" })
    );
  }
  // Asking: only where someone can answer (decideCall says ask only then).
  if (!setup) return approvedAs(ready, { answer: "not_needed" });
  return ask(phase, setup, ready, decision.rule, signal);
}
