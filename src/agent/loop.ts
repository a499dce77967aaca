/**
 * The ReACT loop, in named phases. Each turn:
 *   turn   compact the history if it is over budget
 *   ask    one backend request
 *   step   extract and validate exactly one step (a bad one becomes a correction)
 *   call   the call pipeline (calls.ts): validate → effects → gate → audit → tool → clip
 *   record the observation, wrapped as untrusted data, into history and transcript; then the
 *          AGENTS.md files below the root that govern a path the call first touched
 * Every step is written to the transcript and the audit log as it happens; if the audit log
 * cannot be written, no further tool runs (fail closed).
 */
import type { Backend, Usage } from "../backend/types.js";
import type { Config, PolicyMode } from "../config/schema.js";
import { clip } from "../core/clip.js";
import type { GateSettings } from "../policy/types.js";
import type { AuditCall } from "../store/audit-readers.js";
import type { AuditKind, AuditLog } from "../store/audit-writer.js";
import type { CheckpointWriter } from "../store/checkpoints.js";
import type { CallOutcome, Message, SessionWriter } from "../store/session.js";
import { FINAL_ACTION } from "../tools/final.js";
import { canonicalPlan, type Plan, planSha256 } from "../tools/plan-shape.js";
import type { AnyTool, ToolServices } from "../tools/types.js";
import { type AnswerSchema, stepSchemaWithAnswer } from "./answer-schema.js";
import type { ApprovalSetup } from "./call-approval.js";
import type { Prepared, Ready } from "./call-record.js";
import { type CallPipeline, createCallPipeline, outcomeOf } from "./calls.js";
import type { ContextFit } from "./context-fit.js";
import { type AgentEvent, foldCounts, type Listener, type RunCounts } from "./events.js";
import {
  INTERRUPTED_MARK,
  interruptedObservation,
  interruptionCause,
  notRunObservation,
  stopNote,
} from "./history.js";
import { compactWithHysteresis } from "./hysteresis.js";
import { type NestedInstructions, touchedPaths } from "./nested-instructions.js";
import { type PlanEvidence, planEvidence } from "./plan-evidence.js";
import type { ApprovedPlan } from "./plan-file.js";
import { NOT_IN_PLAN, planGate, planScope } from "./plan-narrow.js";
import { appendTurn, correctionMessage, wrapObservation } from "./prompt.js";
import {
  AUDIT_RECORD_RULE,
  auditForRun,
  isNotRecorded,
  type NotRecorded,
  notRecorded,
  type RunAudit,
} from "./run-audit.js";
import { type RunStatus, type RunStop, statusOf } from "./run-stop.js";
import {
  extractStep,
  parseStep,
  type ReplyContext,
  replyBody,
  STEP_ERROR_MAX_BYTES,
  stepSchema,
  type ValidStep,
} from "./step.js";
import { followStep, StepStreamReader } from "./stream-final.js";
import { harmonyGate, readHarmony, splitThinking } from "./think.js";

export interface RunResult {
  /** Why the run stopped; callers match on this, never on `error`'s text. */
  stop: RunStop;
  /** Derived from `stop` (`statusOf`): the coarse value older outputs carry. */
  status: RunStatus;
  answer?: string;
  /** With an answer schema (`--output-schema`): the answer parsed, the value it was checked as. */
  data?: unknown;
  /** Plan mode: the plan the run ended with (stop `plan`); nothing was executed. */
  plan?: Plan;
  error?: string;
  turns: number;
  usage: Usage;
  toolCalls: number;
  denials: number;
  refusals: number;
  errors: number;
  wallMs: number;
}

export interface RunDeps {
  config: Config;
  mode: PolicyMode;
  cwd: string;
  backend: Backend;
  audit: AuditLog;
  session: SessionWriter;
  sessionId: string;
  runId: string;
  gateSettings: GateSettings;
  /** The enabled tools of this run. */
  tools: ReadonlyMap<string, AnyTool>;
  services: ToolServices;
  childEnv: NodeJS.ProcessEnv;
  toolTimeoutMs: number;
  signal: AbortSignal;
  /** The conversation so far; starts with the system prompt. Grows as the run goes. */
  history: Message[];
  onEvent?: Listener;
  /** Fits the history to the model's context window; without it, the byte budget alone. */
  fit?: ContextFit;
  /** This run continues the session with this id (`--resume`/`--continue`): its `run` event says so. */
  resumed?: string;
  /** Who approves calls with an effect (docs/safety.md "Approval"); absent: nobody is asked. */
  approval?: ApprovalSetup;
  /** Where file changes are checkpointed for undo (docs/sessions.md "Undo"); absent: they are not. */
  checkpoints?: CheckpointWriter;
  /**
   * AGENTS.md files below the project root, added when a call first touches a path under them
   * (docs/context.md "Project instructions"); absent: project instructions are off.
   */
  instructions?: NestedInstructions;
  /**
   * The system prompt as it should read for the next request; asked before each one. MCP tool
   * lists can change during a run (docs/mcp.md "Tool lists that stay true"); absent: it never does.
   */
  systemPrompt?: (signal: AbortSignal) => Promise<string>;
  /**
   * An approved plan this run carries out (docs/safety.md "Plan mode", "Plans as contracts"):
   * the audit log records its SHA-256, the model is given it with the goal, its steps' progress
   * is checked against it, and when it `binds` the gate is narrowed to it.
   */
  plan?: ApprovedPlan;
  /** The final answer must be JSON valid against this schema (docs/commands.md "Answers in a schema"). */
  answerSchema?: AnswerSchema;
}

class Interrupted extends Error {}

/** What one run carries between phases. */
interface Run {
  deps: RunDeps;
  audit: RunAudit;
  calls: CallPipeline;
  usage: Usage;
  counts: RunCounts;
  emit(e: AgentEvent): void;
  /** Audit record that must be on disk before the run goes on. */
  record(kind: AuditKind, msg: string, call?: AuditCall): NotRecorded | undefined;
  /** History + transcript; the transcript is part of the record. */
  remember(m: Message): NotRecorded | undefined;
  goalIndex: number;
  malformed: number;
  /** The history already tells the model how the run was stopped (a reply kept as interrupted). */
  stopTold: boolean;
  /** While a plan runs: which of its steps the calls showed done. */
  evidence?: PlanEvidence;
}

function openRun(deps: RunDeps, goal: string): Run {
  const audit = auditForRun(deps.audit, deps.sessionId, deps.runId);
  const counts: RunCounts = { turns: 0, toolCalls: 0, denials: 0, refusals: 0, errors: 0 };
  // The counters are folded from the run's own events, so they cannot drift from what was told.
  const emit = (e: AgentEvent) => {
    foldCounts(counts, e);
    deps.onEvent?.(e);
  };
  const calls = createCallPipeline({
    env: {
      settings: deps.gateSettings,
      tools: deps.tools,
      ...(deps.plan?.binds
        ? { judge: planGate(planScope(deps.plan.plan, deps.gateSettings.projectRoot)) }
        : {}),
    },
    audit: (kind, msg, call) => audit(kind, msg, call),
    emit,
    base: {
      cwd: deps.cwd,
      config: deps.config,
      mode: deps.mode,
      childEnv: deps.childEnv,
      sessionPath: deps.session.path,
      services: deps.services,
    },
    timeoutMs: deps.toolTimeoutMs,
    ...(deps.approval ? { approval: deps.approval } : {}),
    ...(deps.checkpoints ? { checkpoints: { writer: deps.checkpoints, runId: deps.runId, goal } } : {}),
  });
  return {
    deps,
    audit,
    calls,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    counts,
    emit,
    record(kind, msg, call) {
      const r = audit(kind, msg, call);
      return r.ok ? undefined : notRecorded(r.error);
    },
    remember(m) {
      // User and assistant alternate in the history (appendTurn); the transcript keeps each line.
      appendTurn(deps.history, m);
      try {
        deps.session.append(m);
        return undefined;
      } catch (e) {
        // The transcript is part of the record: without it, no further step happens.
        return notRecorded(
          `cannot write the session transcript ${deps.session.path}: ${(e as Error).message}`,
        );
      }
    },
    goalIndex: 0,
    malformed: 0,
    stopTold: false,
    ...(deps.plan ? { evidence: planEvidence(deps.plan.plan, deps.gateSettings.projectRoot) } : {}),
  };
}

function checkInterrupted(run: Run): void {
  if (run.deps.signal.aborted) throw new Interrupted();
}

/**
 * Before a request: a system prompt that changed (an MCP server's tool list) replaces the
 * history's first message, and the transcript records the new one (a resume starts from the
 * last system prompt it holds).
 */
async function refreshSystemPrompt(run: Run): Promise<NotRecorded | undefined> {
  const { deps } = run;
  if (!deps.systemPrompt) return undefined;
  const text = await deps.systemPrompt(deps.signal);
  const first = deps.history[0];
  if (first?.role !== "system" || first.content === text) return undefined;
  const m: Message = { role: "system", content: text };
  deps.history[0] = m;
  try {
    deps.session.append(m);
    return undefined;
  } catch (e) {
    return notRecorded(`cannot write the session transcript ${deps.session.path}: ${(e as Error).message}`);
  }
}

/** Phase turn: compact the history when it is over budget. An error stops the run. */
function turnPhase(run: Run): string | undefined {
  const { deps } = run;
  const pinned = new Set([0, run.goalIndex]);
  const compacted = deps.fit
    ? deps.fit.compact(deps.history, pinned, deps.config.agent.compactor)
    : compactWithHysteresis(
        deps.history,
        pinned,
        deps.config.agent.context_budget_bytes,
        deps.config.agent.compactor,
      );
  if (!compacted.ok) return `run stopped before calling the backend: ${compacted.error}`;
  if (compacted.value) {
    const c = compacted.value;
    deps.history.splice(0, deps.history.length, ...c.messages);
    // The goal is the last pinned message: after the system prompt within a run, after the
    // summary of the earlier history when a resumed session's goal was the newest message.
    run.goalIndex = c.pinnedAt.at(-1) ?? 1;
    run.emit({ type: "compacted", removed: c.removed, beforeBytes: c.beforeBytes, afterBytes: c.afterBytes });
  }
  return undefined;
}

/** A reply streamed to listeners as it arrives; settled once the step is parsed. */
type Follower = ReturnType<typeof followStep> | undefined;

/** Phase ask: one backend request; the reply text, or why there is none. */
async function askPhase(
  run: Run,
  turn: number,
  schema: object,
): Promise<
  { text: string; follower: Follower; ctx: ReplyContext } | { error: string; refused?: boolean } | NotRecorded
> {
  const { deps } = run;
  run.emit({ type: "thinking", turn });
  const follower = deps.onEvent ? followStep(run.emit, turn) : undefined;
  let reasoningStreamed = false;
  // What arrived so far, kept for a reply the person cuts off (keepInterruptedReply).
  let streamedText = "";
  let streamedReasoning = "";
  const reply = await deps.backend.complete({
    messages: deps.history,
    stepSchema: schema,
    signal: deps.signal,
    onDelta: harmonyGate((t) => {
      streamedText += t;
      follower?.push(t);
    }),
    onReasoning: (text) => {
      streamedReasoning += text;
      if (!deps.onEvent) return;
      reasoningStreamed = true;
      run.emit({ type: "thought_delta", turn, text, source: "reasoning" });
    },
  });
  if (deps.signal.aborted) {
    // What streamed stands, cut: it is kept and marked, not withdrawn.
    // A reply that came whole just before the stop is kept whole (its Harmony final channel only).
    const whole = reply.ok ? (readHarmony(reply.value.text)?.text ?? reply.value.text) : undefined;
    const kept = keepInterruptedReply(run, whole ?? streamedText, streamedReasoning);
    if (kept) return kept;
    throw new Interrupted();
  }
  if (!reply.ok) {
    follower?.settle(undefined, "the backend call did not complete");
    return { error: `backend failed: ${reply.error.message}`, refused: reply.error.refused === true };
  }
  const r = reply.value;
  deps.fit?.calibrate(deps.history, r.usage);
  if (r.usage) {
    run.usage.prompt_tokens += r.usage.prompt_tokens;
    run.usage.completion_tokens += r.usage.completion_tokens;
    run.usage.total_tokens += r.usage.total_tokens;
  }
  run.emit({ type: "reply", turn, latencyMs: r.latencyMs, usage: r.usage });
  const logged = run.record(
    "backend",
    `latency_ms=${r.latencyMs} request_bytes=${r.requestBytes} response_bytes=${r.responseBytes} attempts=${r.attempts} level=${r.level}` +
      (r.usage
        ? ` prompt_tokens=${r.usage.prompt_tokens} completion_tokens=${r.usage.completion_tokens}`
        : ""),
  );
  if (logged) return logged;
  // gpt-oss's Harmony channels: only the final one is the reply; no special token goes on.
  const harmony = readHarmony(r.text);
  const text = harmony?.text ?? r.text;
  const split = splitThinking(text);
  const reasoning = r.reasoning ?? "";
  const analysis = harmony?.reasoning ?? "";
  if (reasoning !== "" && !reasoningStreamed)
    run.emit({ type: "thought_delta", turn, text: reasoning, source: "reasoning" });
  for (const t of [analysis, split.thinking])
    if (t !== "" && (!r.streamed || t === analysis))
      run.emit({ type: "thought_delta", turn, text: t, source: "reasoning" });
  // The model's thinking is recorded as a thought, and never sent back to it (docs/context.md "Reasoning models").
  for (const t of [reasoning, analysis, split.thinking]) {
    const thought = t.trim() !== "" ? run.record("thought", t) : undefined;
    if (thought) return thought;
  }
  if (r.cutOff) noteCutOff(run);
  const notes = harmony?.notes ?? [];
  // The server's native calls, or Harmony's commentary call: read as calls, arguments strictly.
  const calls = r.calls ?? (harmony?.call ? [harmony.call] : undefined);
  return {
    text,
    follower,
    // The analysis is not offered as a place to find the step: a draft there is never run.
    ctx: {
      reasoning,
      ...(r.cutOff ? { cutOff: r.cutOff } : {}),
      ...(notes.length > 0 ? { notes } : {}),
      ...(calls
        ? {
            calls,
            ...(r.calls ? {} : { callsFormat: `Harmony's commentary call to ${harmony!.call!.name}` }),
          }
        : {}),
    },
  };
}

/**
 * A reply the person cut off while it streamed, kept in the history and the transcript so the
 * model knows what it had said (docs/sessions.md "What the model is told"):
 * - a final answer being written: the step as far as it came, its answer ending in
 *   INTERRUPTED_MARK (still a final step, so every reader of a transcript shows it);
 * - a whole tool step that arrived before the stream ended: the step, then its observation
 *   that it did not run (a call in the history always has one);
 * - anything else begun (a thought, a step's JSON cut off): the text, then the mark.
 * Thinking outside the reply (a reasoning field, a `<think>` block) is never sent back to the
 * model; what of it arrived is audited as a thought.
 */
function keepInterruptedReply(run: Run, text: string, reasoning: string): NotRecorded | undefined {
  const cause = interruptionCause(run.deps.signal);
  const thought =
    reasoning.trim() !== "" ? run.record("thought", `${reasoning} ${INTERRUPTED_MARK}`) : undefined;
  if (thought) return thought;
  const body = replyBody(text);
  if (body.trim() !== "") {
    const reader = new StepStreamReader({ thought() {}, answer() {}, withdrawn() {} });
    reader.push(body);
    const part = reader.partial();
    const whole = extractStep(body);
    const action = whole.ok ? whole.value.action : undefined;
    if (part.answer !== undefined) {
      const kept = run.remember({
        role: "assistant",
        content: JSON.stringify({
          thought: part.thought,
          action: FINAL_ACTION,
          action_input: `${part.answer}${part.answer === "" ? "" : " "}${INTERRUPTED_MARK}`,
        }),
      });
      if (kept) return kept;
      run.stopTold = true;
    } else if (typeof action === "string" && action !== FINAL_ACTION) {
      const kept =
        run.remember({ role: "assistant", content: body }) ??
        recordPhase(run, action, notRunObservation(cause, "its reply was still arriving"), {
          outcome: "interrupted",
        });
      if (kept) return kept;
    } else {
      const kept = run.remember({ role: "assistant", content: `${body}\n${INTERRUPTED_MARK}` });
      if (kept) return kept;
      run.stopTold = true;
    }
  }
  return undefined;
}

/** Once per process: the fix for replies that keep running into the token limit. */
let cutOffAdvised = false;
function noteCutOff(run: Run): void {
  if (cutOffAdvised) return;
  cutOffAdvised = true;
  run.emit({
    type: "backend",
    event: {
      type: "warning",
      message:
        "the server stopped the reply at its token limit; raise it (backend.extra_body, e.g. max_tokens = 4096) or turn the model's thinking off",
    },
  });
}

/**
 * Phase step: one valid step, prepared by the call pipeline (validated, children included,
 * and judged), or a correction fed back. Returns the step, or "retry" (corrected, go on),
 * or an error that stops the run.
 */
function stepPhase(
  run: Run,
  turn: number,
  text: string,
  follower: Follower,
  ctx: ReplyContext,
): Stepped | "retry" | { error: string } | NotRecorded {
  const step = parseStep(text, run.deps.tools, ctx);
  // The history keeps the step Scoot read (docs/context.md "What goes back"): never the thinking,
  // a special token, a vendor format's markup or what the model wrote after its call. A reply
  // that is not a step is kept as it came (without its thinking), so the correction makes sense.
  const kept = run.remember({
    role: "assistant",
    content: step.ok ? stepText(step.value) : unreadReply(text, ctx),
  });
  if (kept) return kept;
  if (step.ok) for (const note of step.value.notes) run.emit({ type: "step_note", turn, note });
  const answer = step.ok && step.value.action === FINAL_ACTION ? checkAnswer(run, step.value) : undefined;
  follower?.settle(
    answer?.ok ? answer.step.action_input : undefined,
    !step.ok
      ? `invalid step: ${step.error}`
      : answer
        ? "the answer does not fit the output schema"
        : "the step is not a final answer",
  );
  if (!step.ok) return malformed(run, turn, step.error) ?? "retry";
  const outOfPlan = progressOutOfRange(run, step.value);
  if (outOfPlan) return malformed(run, turn, outOfPlan) ?? "retry";
  if (answer && !answer.ok) return malformed(run, turn, answer.error) ?? "retry";
  const s = answer?.step ?? step.value;
  const prepared = isStepNotCall(s)
    ? undefined
    : run.calls.prepare(s.action, s.action_input, { input: s.input });
  if (prepared?.kind === "invalid") {
    // A fan-out with an invalid child is an invalid step: nothing ran, nothing was judged.
    return malformed(run, turn, `invalid action_input for ${s.action}: ${prepared.error}`) ?? "retry";
  }
  run.malformed = 0;
  run.emit(
    prepared
      ? { type: "step", turn, thought: s.thought, call: prepared }
      : { type: "step", turn, thought: s.thought, action: s.action, input: s.action_input },
  );
  return run.record("thought", s.thought) ?? { step: s, prepared };
}

/**
 * A final step checked against the run's answer schema, if it has one: its answer becomes the
 * checked value's JSON text, or the problems are the correction.
 */
function checkAnswer(
  run: Run,
  s: ValidStep,
): { ok: true; step: ValidStep & { data?: unknown } } | { ok: false; error: string } {
  const schema = run.deps.answerSchema;
  if (!schema) return { ok: true, step: s };
  const checked = schema.check(s.action_input);
  if (!checked.ok) return checked;
  return { ok: true, step: { ...s, action_input: checked.text, data: checked.value } };
}

/** A `plan_step` the running plan does not have: the correction that says so. */
function progressOutOfRange(run: Run, s: ValidStep): string | undefined {
  const steps = run.deps.plan?.plan.steps.length;
  const n = s.planProgress?.step;
  if (steps === undefined || n === undefined || n <= steps) return undefined;
  return `"plan_step" is ${n}, but the plan has ${steps} step${steps === 1 ? "" : "s"} (numbered from 1)`;
}

/** `final` and `plan` end the run; neither is a call. */
function isStepNotCall(s: ValidStep): boolean {
  return s.action === FINAL_ACTION || s.tool.endsRunAsPlan === true;
}

/**
 * A step's `plan_step`/`plan_status` while a plan runs: audited and told to the front ends
 * (the live view's checklist, ACP's plan updates) before the step's own call.
 */
function progressPhase(
  run: Run,
  s: ValidStep,
  ended?: { record: Prepared; outcome: CallOutcome },
): NotRecorded | undefined {
  const p = s.planProgress;
  // Progress means something only against a plan; without one it is dropped, not a correction.
  if (!p || !run.evidence) return undefined;
  // The step's own call is attributed to the plan step it names: the evidence, audited apart
  // from the claim (docs/safety.md "Plan mode").
  if (ended) {
    const evidence = run.evidence.attribute(p.step, ended.record, ended.outcome);
    const logged = run.record("plan", `step ${p.step} evidence: ${evidence.why}`);
    if (logged) return logged;
  }
  const shown = run.evidence.claim(p.step, p.status);
  const claimed = shown === "claimed" ? " (claimed without evidence)" : "";
  const logged = run.record("plan", `step ${p.step} ${p.status}${claimed}`);
  if (logged) return logged;
  run.emit({ type: "plan_progress", step: p.step, status: shown });
  return undefined;
}

/** The plan's record: its SHA-256 (what an approval and `--execute-plan` name) and its steps. */
export function planRecord(plan: Plan): string {
  return `sha256=${planSha256(plan)} steps=${plan.steps.length} ${canonicalPlan(plan)}`;
}

function stepText(s: ValidStep): string {
  const p = s.planProgress;
  return JSON.stringify({
    thought: s.thought,
    action: s.action,
    action_input: s.action_input,
    ...(p ? { plan_step: p.step, plan_status: p.status } : {}),
  });
}

/** A reply that did not give a step, as the history keeps it: its text, or the calls it sent. */
function unreadReply(text: string, ctx: ReplyContext): string {
  const call = ctx.calls?.[0];
  if (!call) return replyBody(text);
  return JSON.stringify({ thought: replyBody(text).trim(), action: call.name, action_input: call.arguments });
}

interface Stepped {
  /** `data`: a final answer's value, when the run has an answer schema. */
  step: ValidStep & { data?: unknown };
  /** Undefined for `final` and `plan`, which are not calls. */
  prepared: Exclude<Prepared, { kind: "invalid" }> | undefined;
}

function malformed(run: Run, turn: number, error: string): { error: string } | NotRecorded | undefined {
  const maxMalformed = run.deps.config.agent.max_malformed_steps;
  run.malformed += 1;
  run.emit({ type: "malformed", turn, error, consecutive: run.malformed });
  const logged = run.record("system_error", `invalid step (${run.malformed}/${maxMalformed}): ${error}`);
  if (logged) return logged;
  if (run.malformed >= maxMalformed) {
    return {
      error: `the model sent ${run.malformed} invalid steps in a row (agent.max_malformed_steps); last: ${error}`,
    };
  }
  return run.remember({ role: "user", content: correctionMessage(error) });
}

/**
 * What a call phase gives back: the observation, the call's record as it ended (a new record
 * from each phase: nothing is changed after it is made), and whether the run was stopped in it
 * (its observation still goes into the history, then the run ends).
 */
interface CallEnded {
  text: string;
  record: Prepared;
  interrupted?: true;
}

/** Phase call: a prepared step through the rest of the pipeline; the observation. */
async function callPhase(
  run: Run,
  s: ValidStep,
  prepared: Exclude<Prepared, { kind: "invalid" }>,
): Promise<CallEnded | NotRecorded> {
  const { signal } = run.deps;
  if (prepared.kind === "denied") {
    const denied = run.calls.deny(prepared);
    return isNotRecorded(denied)
      ? denied
      : { text: `denied by policy (${run.deps.mode}): ${prepared.reason}`, record: prepared };
  }
  const approval = await run.calls.approve(prepared, signal);
  if (approval.kind === "not_recorded") return approval;
  if (signal.aborted)
    return {
      text: notRunObservation(interruptionCause(signal), "it was waiting for approval"),
      record: approval.kind === "refused" ? approval.record : approval.ready,
      interrupted: true,
    };
  if (approval.kind === "refused") return { text: approval.observation, record: approval.record };
  // How long the call ran before the stop: from its start to the abort itself, not to the
  // moment the tool finally gave up.
  const started = Date.now();
  let stoppedAt: number | undefined;
  const onAbort = () => {
    stoppedAt = Date.now();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  const observation = await run.calls.run(approval, signal).finally(() => {
    signal.removeEventListener("abort", onAbort);
  });
  if (observation.kind === "not_recorded") return observation;
  if (signal.aborted) {
    const ranMs = (stoppedAt ?? Date.now()) - started;
    return {
      text: interruptedObservation(interruptionCause(signal), ranMs, observation.text),
      record: observation.record,
      interrupted: true,
    };
  }
  const { fit, history } = run.deps;
  // The context fit may clip harder than the tool's own size when the window is small.
  const text = fit
    ? fit.clipObservation(observation.raw, history, new Set([0, run.goalIndex]), s.action, s.tool.clipBytes)
    : observation.text;
  const shown: Ready = { ...observation.record, shown: text };
  run.emit({
    type: "observation",
    bytes: Buffer.byteLength(observation.raw),
    clippedTo: Buffer.byteLength(text),
    // Its `shown` is what the model is given (ACP's tool_call_update content).
    call: shown,
  });
  return { text, record: shown };
}

/** The observation, told which further calls of the reply did not run (one call per turn). */
function withDropped(observation: string, dropped: readonly string[]): string {
  if (dropped.length === 0) return observation;
  return `${observation}\n[not run: ${dropped.length} more tool call${dropped.length === 1 ? "" : "s"} of your reply (${dropped.join(", ")}); ${DROPPED_NOTE_END}]`;
}

const DROPPED_NOTE_END = "one call per turn: send the next one now if it is still needed";
const DROPPED_NOTE = new RegExp(
  `\\n\\[not run: \\d+ more tool calls? of your reply \\(.*\\); ${DROPPED_NOTE_END}\\]$`,
  "s",
);

/** A recorded observation without the note withDropped added: what the call itself gave. */
export function withoutDroppedNote(recorded: string): string {
  return recorded.replace(DROPPED_NOTE, "");
}

/** Phase record: the observation into the audit log, the history and the transcript. */
function recordPhase(
  run: Run,
  action: string,
  observation: string,
  outcome: CallOutcome,
): NotRecorded | undefined {
  return (
    run.record("observation", observation, { tool: action, ...outcome }) ??
    run.remember({ role: "user", content: wrapObservation(action, observation), outcome })
  );
}

/**
 * Phase record, continued: the AGENTS.md files below the root that govern what the call just
 * touched, one note each after its observation (merged into it in the history, a line of its
 * own in the transcript), each audited; files not read are said on the trace.
 */
function instructionsPhase(run: Run, prepared: Prepared): NotRecorded | undefined {
  const tracker = run.deps.instructions;
  if (!tracker || prepared.kind !== "ready") return undefined;
  const paths = touchedPaths(prepared);
  if (paths.length === 0) return undefined;
  const found = tracker.touched(paths, run.deps.history);
  for (const why of found.refused) run.emit({ type: "project", message: why });
  for (const a of found.added) {
    run.emit({ type: "project", message: a.message });
    const kept = run.record("observation", a.audit) ?? run.remember({ role: "user", content: a.note });
    if (kept) return kept;
  }
  return undefined;
}

/**
 * A goal that ended without a final answer leaves a note on the assistant's side saying why
 * (history.ts): the model knows, and the next goal's request does not carry two user
 * messages in a row. The history gets it even when the transcript cannot be written (the run
 * is already ending; the error says why).
 */
function tellStop(run: Run, reason: string): void {
  const note = stopNote(reason);
  appendTurn(run.deps.history, note);
  try {
    run.deps.session.append(note);
  } catch {
    // Already stopping, and the run's error names the transcript when it was the cause.
  }
}

/** The audit record of a plan-bound run's start: the hash the run is bound to. */
export function planApprovedRecord(plan: ApprovedPlan): string {
  const binding = plan.binds ? "strict" : "off";
  return `plan approved sha256=${plan.sha256} steps=${plan.plan.steps.length} ${plan.origin} binding=${binding}`;
}

/** How the model reports progress; said only in a run that carries out a plan. */
const PROGRESS_NOTE =
  'Work through its steps in order. Beside "thought", "action" and "action_input", a step may carry "plan_step": N (from 1) and "plan_status": "in_progress", "done" or "skipped" to say which plan step it works on and how it stands.';

/** The goal as the model (and the transcript) gets it in a plan run: the plan beside it. */
function withPlan(goal: string, plan: ApprovedPlan): string {
  const bound = plan.binds
    ? ` Only what it names may happen: writes to the files it names, the commands exactly as it names them (longer only where one ends in " *"), requests to the hosts it names; reading is free. Anything else is refused as "${NOT_IN_PLAN}": then finish with a final answer that says what you could not do.`
    : "";
  return `${goal}\n\n[scoot: this run carries out an approved plan (sha256 ${plan.sha256}).${bound} ${PROGRESS_NOTE} The plan: ${canonicalPlan(plan.plan)}]`;
}

export async function runGoal(deps: RunDeps, goal: string): Promise<RunResult> {
  const started = Date.now();
  const run = openRun(deps, goal);
  const result = (
    stop: RunStop,
    extra: { answer?: string; data?: unknown; plan?: Plan; error?: string } = {},
  ): RunResult => ({
    stop,
    status: statusOf(stop),
    ...extra,
    ...run.counts,
    usage: run.usage,
    wallMs: Date.now() - started,
  });
  const fail = (stop: Exclude<RunStop, "final" | "plan" | "interrupted">, raw: string): RunResult => {
    // The message may echo model or server text; bound it.
    const message = clip(raw, STEP_ERROR_MAX_BYTES);
    run.emit({ type: "error", message });
    // Already failing; an audit problem here is reported by the caller's message.
    run.audit("system_error", message);
    tellStop(run, message);
    return result(stop, { error: message });
  };
  /** The one place a record that could not be written stops the run. */
  const unrecorded = (r: NotRecorded): RunResult => {
    const message = `${r.error}; stopping: ${r.rule ?? AUDIT_RECORD_RULE}`;
    // Best effort: a transcript failure may still leave the audit log writable.
    run.audit("system_error", message);
    run.emit({ type: "error", message });
    tellStop(run, message);
    return result("not_recorded", { error: message });
  };
  const plainSchema = stepSchema([...deps.tools.keys()], deps.plan?.plan.steps.length);
  const schema = deps.answerSchema
    ? stepSchemaWithAnswer(plainSchema as Record<string, unknown>, deps.answerSchema, FINAL_ACTION)
    : plainSchema;
  const maxTurns = deps.config.agent.max_turns;

  try {
    const opening = run.record(
      "run",
      deps.resumed ? `goal: ${goal} (resumes session ${deps.resumed})` : `goal: ${goal}`,
    );
    if (opening) return unrecorded(opening);
    if (deps.plan) {
      const bound = run.record("approval", planApprovedRecord(deps.plan));
      if (bound) return unrecorded(bound);
    }
    run.emit({ type: "run", goal, runId: deps.runId, sessionId: deps.sessionId });
    if (deps.plan) run.emit({ type: "plan_execute", plan: deps.plan.plan, sha256: deps.plan.sha256 });
    // The model is given the approved plan, and the shape its answer must have, with the goal.
    const planned = deps.plan ? withPlan(goal, deps.plan) : goal;
    const content = deps.answerSchema ? `${planned}\n\n${deps.answerSchema.instruction}` : planned;
    // The transcript keeps the person's own words beside it (docs/sessions.md "Sessions and audit").
    const goalKept = run.remember({ role: "user", content, ...(content === goal ? {} : { goal }) });
    if (goalKept) return unrecorded(goalKept);
    run.goalIndex = deps.history.length - 1;

    for (let turn = 1; turn <= maxTurns; turn++) {
      checkInterrupted(run);
      const refreshed = await refreshSystemPrompt(run);
      if (refreshed) return unrecorded(refreshed);
      checkInterrupted(run);
      run.counts.turns = turn;
      const stopped = turnPhase(run);
      if (stopped) return fail("budget", stopped);
      const reply = await askPhase(run, turn, schema);
      if (isNotRecorded(reply)) return unrecorded(reply);
      if ("error" in reply) return fail(reply.refused ? "refused" : "backend", reply.error);
      const stepped = stepPhase(run, turn, reply.text, reply.follower, reply.ctx);
      if (stepped === "retry") continue;
      if (isNotRecorded(stepped)) return unrecorded(stepped);
      if ("error" in stepped) return fail("malformed", stepped.error);
      const { step, prepared } = stepped;
      // A step that ends the run reports its progress now; a call's, once its observation is
      // recorded (a step marked done is not shown done before its call has run).
      const progressed = prepared === undefined ? progressPhase(run, step) : undefined;
      if (progressed) return unrecorded(progressed);
      if (prepared === undefined && step.tool.endsRunAsPlan) {
        const plan = step.input as Plan;
        const logged = run.record("plan", planRecord(plan));
        if (logged) return unrecorded(logged);
        run.emit({ type: "plan", plan });
        return result("plan", { plan });
      }
      if (prepared === undefined) {
        const logged = run.record("final", step.action_input);
        if (logged) return unrecorded(logged);
        run.emit({ type: "final", answer: step.action_input });
        return result("final", {
          answer: step.action_input,
          ...(deps.answerSchema ? { data: step.data } : {}),
        });
      }
      const ended = await callPhase(run, step, prepared);
      if (isNotRecorded(ended)) return unrecorded(ended);
      const outcome = outcomeOf(ended.record, ended.interrupted === true);
      const recorded = recordPhase(run, step.action, withDropped(ended.text, step.notRun ?? []), outcome);
      if (recorded) return unrecorded(recorded);
      if (ended.interrupted) throw new Interrupted();
      const marked = progressPhase(run, step, { record: ended.record, outcome });
      if (marked) return unrecorded(marked);
      const told = instructionsPhase(run, ended.record);
      if (told) return unrecorded(told);
    }
    return fail("max_turns", `no final answer within agent.max_turns = ${maxTurns} turns`);
  } catch (e) {
    if (e instanceof Interrupted || deps.signal.aborted) {
      run.emit({ type: "error", message: "interrupted", interrupted: true });
      run.audit("system_error", "interrupted");
      if (!run.stopTold) tellStop(run, interruptionCause(deps.signal));
      return result("interrupted", { error: "interrupted" });
    }
    throw e;
  }
}
