/**
 * The one call pipeline (docs/safety.md "One call pipeline"): every tool call, whoever
 * starts it, goes
 *
 *   prepare: find the tool → validate the input once → declared effects → gate
 *            → invalid | denied | ready {tool, input, target}
 *   approve: `[[tools.rules]]` deny, ask or allow the call's scope (docs/safety.md "Rules"),
 *            then a person may still refuse a call with an effect (docs/safety.md "Approval")
 *            → approved {change?} | refused
 *   run:     audit `tool_call` → undo checkpoint of a file about to change → the tool
 *            under its deadline, opening only `target` → `file_changed` → clip
 *
 * Top-level steps, `parallel` children (`ctx.call`), `http_request` redirect hops
 * (`ctx.gate`) and `scoot policy check` (prepare only) all come through here, so the gate
 * cannot judge one file while a tool opens another.
 */

import { clip } from "../core/clip.js";
import { readCurrent } from "../core/file-state.js";
import { isInside, shownPath } from "../core/inside.js";
import { redact } from "../core/redact.js";
import type { Decision, Effects, Result, Verdict } from "../core/types.js";
import { decide } from "../policy/gate.js";
import { secretLikeName } from "../policy/paths.js";
import type { GateSettings } from "../policy/types.js";
import type { AuditCall } from "../store/audit-readers.js";
import type { CheckpointEntry, CheckpointWriter } from "../store/checkpoints.js";
import type { CallOutcome } from "../store/session.js";
import { TOOLS_BY_NAME } from "../tools/registry.js";
import type { AnyTool, ToolContext, ToolResult } from "../tools/types.js";
import {
  type ApprovalAnswer,
  type ApprovalMemory,
  type Approver,
  refusalObservation,
  ruleRefusalObservation,
} from "./approval.js";
import {
  type ApprovalRule,
  checkRules,
  decidingRule,
  type RulePlace,
  rulesProblemText,
} from "./approval-rules.js";
import { type CallApproval, type Prepared, type Ready, rawPresentation } from "./call-record.js";
import { type CallDecision, decideCall, needsApproval, type Ruled } from "./decide.js";
import type { AgentEvent } from "./events.js";
import { runToolWithDeadline } from "./execute.js";
import { changeBase, planFileChange, planFromEditor } from "./file-change.js";
import { isNotRecorded, type NotRecorded, notRecorded } from "./run-audit.js";

/** What the pipeline needs to judge a call: the gate's settings and the run's enabled tools. */
export interface CallEnv {
  settings: GateSettings;
  tools: ReadonlyMap<string, AnyTool>;
  /** The gate; tests pass a counting wrapper (test/agent/calls-once.test.ts). */
  judge?: (effects: Effects, settings: GateSettings) => Verdict;
}

/** Call ids: unique in the process, so two sessions' calls never share one. */
let lastCallId = 0;
function nextCallId(): number {
  lastCallId += 1;
  return lastCallId;
}

/**
 * Validates and judges one call. `parsed` is the already-validated input when the caller
 * has it (a step is validated while it is parsed), so the input is parsed once.
 */
export function prepareCall(
  action: string,
  raw: string,
  env: CallEnv,
  parsed?: { input: unknown },
): Prepared {
  const id = nextCallId();
  const invalid = (error: string): Prepared => ({
    kind: "invalid",
    id,
    action,
    raw,
    presentation: rawPresentation(action, raw),
    error,
  });
  const tool = env.tools.get(action);
  if (!tool) return invalid(`unknown action "${action}"`);
  let input: unknown;
  if (parsed) input = parsed.input;
  else {
    const r = tool.parse(raw);
    if (!r.ok) return invalid(`invalid input for ${action}: ${r.error}`);
    input = r.value;
  }
  let children: Prepared[] | undefined;
  if (tool.children) {
    const prepared = prepareChildren(tool, input, env);
    if (!prepared.ok) return invalid(prepared.error);
    children = prepared.value;
  }
  const effects = tool.effects(input);
  const valid = { id, action, raw, tool, input, effects, presentation: tool.present(input) };
  const verdict = (env.judge ?? decide)(effects, env.settings);
  if (!verdict.allow) return { kind: "denied", ...valid, reason: verdict.reason };
  // What "always" and a rule cover: the tool's own scope of what the gate resolved, else the tool.
  const scope = tool.approvalScope?.of(input, {
    target: verdict.target,
    root: () => realRoot(env.settings) ?? env.settings.projectRoot,
  });
  return {
    kind: "ready",
    ...valid,
    target: verdict.target,
    ...(scope !== undefined ? { scope } : {}),
    rememberKey: scope !== undefined ? `${tool.name}:${scope}` : tool.name,
    ...(children ? { children } : {}),
  };
}

/** The project root with its symlinks followed, as the gate's targets are. */
function realRoot(settings: GateSettings): string | undefined {
  return settings.realpath(settings.projectRoot);
}

/**
 * Every child validated (all of them, before any runs) and judged. An invalid child fails
 * the whole call; a denied child stays in the list as denied.
 */
function prepareChildren(tool: AnyTool, input: unknown, env: CallEnv): Result<Prepared[]> {
  const out: Prepared[] = [];
  const calls = tool.children?.(input) ?? [];
  for (let i = 0; i < calls.length; i++) {
    const { action, input: raw } = calls[i]!;
    const where = `${tool.name}: calls[${i}]`;
    const child = env.tools.get(action);
    if (!child?.parallelChild) {
      const allowed = [...env.tools.values()].filter((t) => t.parallelChild).map((t) => t.name);
      return {
        ok: false,
        error: `${where}: "${action}" is not allowed in ${tool.name}; only ${allowed.join(", ")} (http_request with GET or HEAD)`,
      };
    }
    const parsed = child.parse(raw);
    if (!parsed.ok) return { ok: false, error: `${where}: ${parsed.error}` };
    const refused = child.parallelChild(parsed.value);
    if (refused) return { ok: false, error: `${where}: ${refused}` };
    out.push(prepareCall(action, raw, env, { input: parsed.value }));
  }
  return { ok: true, value: out };
}

/**
 * What a recorded call declared it would touch (the compactor's view of an old step), or
 * undefined when the step no longer validates. Never a decision: nothing is judged here.
 */
export function declaredEffects(
  action: string,
  raw: string,
  tools: ReadonlyMap<string, AnyTool> = TOOLS_BY_NAME,
): Effects | undefined {
  const tool = tools.get(action);
  const parsed = tool?.parse(raw);
  return tool && parsed?.ok ? tool.effects(parsed.value) : undefined;
}

/**
 * A recorded step shown again (an editor reloading a session): how its tool presents it, or its
 * raw text when it no longer validates. Never a decision: nothing is judged here.
 */
export function presentRecorded(
  action: string,
  raw: string,
  tools: ReadonlyMap<string, AnyTool> = TOOLS_BY_NAME,
): Pick<Prepared, "raw" | "presentation"> & { effects?: Effects; tool?: AnyTool; input?: unknown } {
  const tool = tools.get(action);
  const parsed = tool?.parse(raw);
  if (!tool || !parsed?.ok) return { raw, presentation: rawPresentation(action, raw) };
  return {
    raw,
    presentation: tool.present(parsed.value),
    effects: tool.effects(parsed.value),
    tool,
    input: parsed.value,
  };
}

/** The dry-run answer (`scoot policy check`): a denied child denies the whole call, by name. */
export function dryRunDecision(p: Prepared): Decision {
  if (p.kind === "invalid") return { allow: false, reason: p.error };
  if (p.kind === "denied") return { allow: false, reason: p.reason };
  const children = p.children ?? [];
  for (let i = 0; i < children.length; i++) {
    const c = children[i]!;
    if (c.kind !== "ready") {
      const why = c.kind === "denied" ? c.reason : c.error;
      return { allow: false, reason: `${p.action} child calls[${i}] (${c.action}) is denied: ${why}` };
    }
  }
  return { allow: true };
}

/** The rules of one pipeline, checked once, and the project they are read in. */
export interface PipelineRules {
  rules: readonly ApprovalRule[];
  problems: readonly string[];
  place: RulePlace;
}

/**
 * `[[tools.rules]]` of a configuration, checked against the run's tools. The commands refuse a
 * configuration with a bad rule before any run; one that reaches here unchecked (an embedding
 * program) refuses every call with a scope rather than drop a rule it cannot read.
 */
export function pipelineRules(
  raw: readonly unknown[],
  tools: ReadonlyMap<string, AnyTool>,
  settings: GateSettings,
): PipelineRules | undefined {
  // The common case: no rule, nothing checked or loaded per call.
  if (raw.length === 0) return undefined;
  const { rules, problems } = checkRules(raw, new Map([...TOOLS_BY_NAME, ...tools]));
  return { rules, problems, place: { root: settings.projectRoot, realRoot: realRoot(settings) } };
}

/** The rule that decides a call with a scope, or the problems that keep every rule from applying. */
export function ruleOf(rules: PipelineRules | undefined, ready: Ready): Ruled | undefined {
  if (!rules || ready.scope === undefined) return undefined;
  if (rules.problems.length > 0) return { kind: "broken", text: rulesProblemText(rules.problems) };
  const rule = decidingRule(rules.rules, ready, rules.place);
  return rule ? { kind: "rule", rule } : undefined;
}

/** What is known about a judged call besides its record, for `decideCall`. */
export interface DecisionContext {
  rules: PipelineRules | undefined;
  memory?: ApprovalMemory;
  canAsk: boolean;
  cannotApply?: boolean;
  nobody?: string;
}

/** The decision about a prepared call: the gate's, then the rules', the memory's and the person's. */
export function decisionOf(p: Prepared, ctx: DecisionContext): CallDecision {
  if (p.kind === "invalid") return { kind: "refuse", why: "denied", reason: p.error };
  if (p.kind === "denied") return { kind: "refuse", why: "denied", reason: p.reason };
  const remembered = ctx.memory?.answer(p.rememberKey);
  return decideCall(
    {
      verdict: { allow: true },
      ruled: ruleOf(ctx.rules, p),
      ...(remembered ? { remembered } : {}),
      hasEffect: needsApproval(p.effects.capability),
      canAsk: ctx.canAsk,
      ...(ctx.cannotApply ? { cannotApply: true } : {}),
      ...(ctx.nobody ? { nobody: ctx.nobody } : {}),
    },
    p.rememberKey,
  );
}

/** Appends one audit record of the run (bound to its session and run); an error: not on disk. */
export type CallAudit = (
  kind: "tool_call" | "policy_deny" | "approval",
  msg: string,
  call?: AuditCall,
) => Result<void>;

/** Who answers approval questions in this session, and the "always" answers it gave. */
export interface ApprovalSetup {
  approver: Approver;
  memory: ApprovalMemory;
}

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
  checkpoints?: { writer: CheckpointWriter; runId: string; goal: string };
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

export function createCallPipeline(deps: PipelineDeps): CallPipeline {
  const emit = (e: AgentEvent): void => deps.emit?.(e);
  const recordDenial = (call: Prepared & { kind: "denied" | "invalid" }): NotRecorded | undefined => {
    const reason = call.kind === "denied" ? call.reason : call.error;
    emit({ type: "deny", call });
    const r = deps.audit("policy_deny", `${call.action} ${call.raw} -- ${reason}`, {
      tool: call.action,
      outcome: "denied",
    });
    return r.ok ? undefined : notRecorded(r.error);
  };

  /** An audit record the call cannot go on without. */
  const mustAudit = (
    kind: "tool_call" | "approval",
    msg: string,
    fields?: AuditCall,
  ): NotRecorded | undefined => {
    const logged = deps.audit(kind, msg, fields);
    return logged.ok ? undefined : notRecorded(logged.error);
  };

  const rules = pipelineRules(deps.base.config.tools.rules, deps.env.tools, deps.env.settings);

  /** A refused call: audited, told, never run. */
  const refuse = (call: Ready, d: Extract<CallDecision, { kind: "refuse" }>): Approval | NotRecorded => {
    const byPerson = d.why === "remembered";
    const ready: Ready = {
      ...call,
      approval: {
        answer: "refuse",
        reason: d.reason,
        ...("rule" in d ? { rule: d.rule } : {}),
        ...(byPerson ? { remembered: true } : {}),
      },
    };
    const logged = mustAudit("approval", `refused: ${d.reason}: ${ready.action} ${ready.raw}`, {
      tool: ready.action,
      decision: "refuse",
      outcome: "refused",
      ...("rule" in d ? { rule: d.rule } : {}),
    });
    if (logged) return logged;
    emit({ type: "refused", call: ready });
    return {
      kind: "refused",
      observation: byPerson ? refusalObservation(ready.action, d.reason) : ruleRefusalObservation(d.reason),
      record: ready,
    };
  };

  /** decide → audit → ask → remember. Returns a new record: the one prepared is not changed. */
  const approve = async (prepared: Ready, signal: AbortSignal): Promise<Approval | NotRecorded> => {
    // Only a content-replacing tool has a change to plan (a read never reads its file twice).
    const planned = prepared.tool.proposedContent
      ? planFileChange(prepared.tool, prepared.input, prepared.target, deps.base.cwd)
      : undefined;
    // An editor that writes the file has it planned from its own text (its unsaved changes).
    const change = planned
      ? await planFromEditor(planned, prepared.tool, prepared.input, deps.base.services.editorBuffers, signal)
      : undefined;
    // What anyone is asked about: the call with the change it will make.
    const ready: Ready = change ? { ...prepared, change } : prepared;
    const approved = (approval: CallApproval): Approved => ({
      kind: "approved",
      ready: { ...ready, approval },
    });
    const setup = deps.approval;
    const call = `${ready.action} ${ready.raw}`;
    const { rememberKey } = ready;
    // A change that cannot be made (file_edit's `old` is not there) is not offered: the call
    // fails with the tool's own words when it runs, and writes nothing.
    const decision = decisionOf(ready, {
      rules,
      ...(setup ? { memory: setup.memory } : {}),
      canAsk: setup !== undefined,
      cannotApply: change !== undefined && !change.after.ok,
    });
    if (decision.kind === "refuse") return refuse(ready, decision);
    if (decision.kind === "run") {
      if (decision.why === "not_needed") return approved({ answer: "not_needed" });
      if (decision.why === "rule")
        return (
          mustAudit("approval", `${decision.reason}: ${call}`, {
            tool: ready.action,
            decision: "run",
            rule: decision.rule,
          }) ?? approved({ answer: "rule", rule: decision.rule })
        );
      return (
        mustAudit("approval", `allowed by an earlier "always" (${rememberKey}): ${call}`, {
          tool: ready.action,
          decision: "run",
        }) ?? approved({ answer: "remembered" })
      );
    }
    // Asking: only where someone can answer (decideCall says ask only then).
    if (!setup) return approved({ answer: "not_needed" });
    const asked = mustAudit(
      "approval",
      decision.rule ? `asked (rule ${decision.rule}): ${call}` : `asked: ${call}`,
      { tool: ready.action, decision: "ask", ...(decision.rule ? { rule: decision.rule } : {}) },
    );
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
      const refused = mustAudit("approval", `answer=refuse: ${call}${reason ? ` -- ${reason}` : ""}`, {
        tool: ready.action,
        decision: "refuse",
        outcome: "refused",
      });
      if (refused) return refused;
      emit({ type: "refused", call: refusedCall });
      return { kind: "refused", observation: refusalObservation(ready.action, reason), record: refusedCall };
    }
    if (answer.kind === "always") setup.memory.remember(rememberKey, "allow");
    return (
      mustAudit(
        "approval",
        `answer=${answer.kind}${answer.kind === "always" ? ` (${rememberKey})` : ""}: ${call}`,
        { tool: ready.action, decision: answer.kind },
      ) ?? approved({ answer: answer.kind })
    );
  };
  /** Keeps the file's current state before the change; the error (if any) is the observation. */
  const checkpoint = (approved: Approved): { entry?: CheckpointEntry; error?: string } => {
    const { ready } = approved;
    const { change } = ready;
    const store = deps.checkpoints;
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
      ...(secretOf(change.abs, deps.env.settings) ? { withheld: true } : {}),
      ...(change.mode !== undefined ? { mode: change.mode } : {}),
    });
    if (!kept.ok)
      return { error: `${ready.action}: not run: cannot keep the undo checkpoint: ${kept.error}` };
    return { entry: kept.value };
  };

  /** After a file tool ran: the change is recorded and reported when the file now differs. */
  const afterChange = (ready: Ready, entry: CheckpointEntry | undefined): void => {
    const { change } = ready;
    if (!change) return;
    const now = readCurrent(change.abs);
    if (!now.ok) return;
    const same =
      now.bytes === null ? change.before === null : change.before !== null && now.bytes.equals(change.before);
    if (same) return;
    // Best effort: an unrecorded "after" only makes undo leave this file alone.
    if (entry && deps.checkpoints) deps.checkpoints.writer.after(entry, now.bytes);
    const before = changeBase(change);
    emit({
      type: "file_changed",
      path: change.shown,
      before: before === null ? null : before.toString("utf8"),
      after: now.bytes === null ? null : now.bytes.toString("utf8"),
      call: ready,
    });
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
    /** A redirect hop's gate check, then its deny and ask rules (nobody is asked mid-call); audited. */
    const gate = (action: string, raw: string): Decision => {
      const p = prepareCall(action, raw, deps.env);
      if (p.kind === "ready") {
        const d = decisionOf(p, {
          rules,
          ...(deps.approval ? { memory: deps.approval.memory } : {}),
          canAsk: false,
          nobody: "a redirect is not asked about",
        });
        if (d.kind !== "refuse") return { allow: true };
        note(
          mustAudit("approval", `refused: ${d.reason}: ${action} ${raw}`, {
            tool: action,
            decision: "refuse",
            outcome: "refused",
            ...("rule" in d ? { rule: d.rule } : {}),
          }),
        );
        return { allow: false, reason: d.reason };
      }
      note(recordDenial(p));
      return { allow: false, reason: p.kind === "denied" ? p.reason : p.error };
    };
    // Each declared child runs once, as it was judged when the call was prepared.
    const pending = [...(ready.children ?? [])];
    /** A running tool's newest output lines, redacted like every line that leaves the loop. */
    const progress = (lines: readonly string[]): void =>
      emit({ type: "tool_output", lines: lines.map(redact), call: ready });
    return (own: AbortSignal) => ({
      gate,
      progress,
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
    // The checkpoint comes first: a call whose undo copy cannot be kept does not run at all.
    const kept = checkpoint(approved);
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
    afterChange(ready, kept.entry);
    if (unrecorded.first) return unrecorded.first;
    const text = clip(result.text, ready.tool.clipBytes);
    const record: Ready = {
      ...ready,
      // The children as they ended (a child that never ran keeps its prepared record).
      ...(ready.children ? { children: ready.children.map((c) => childrenEnded.get(c.id) ?? c) } : {}),
      result: {
        raw: result.text,
        text,
        ...(result.failed ? { failed: true } : {}),
        ...(result.details ? { details: result.details } : {}),
      },
    };
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
    deny(p) {
      return recordDenial(p) ?? (p.kind === "denied" ? p.reason : p.error);
    },
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
