/**
 * The ReACT loop, in named phases. Each turn:
 *   turn   compact the history if it is over budget
 *   ask    one backend request
 *   step   extract and validate exactly one step (a bad one becomes a correction)
 *   call   the call pipeline (calls.ts): validate → effects → gate → audit → tool → clip
 *   record the observation, wrapped as untrusted data, into history and transcript
 * Every step is written to the transcript and the audit log as it happens; if the audit log
 * cannot be written, no further tool runs (fail closed).
 */
import type { Backend, Usage } from "../backend/types.js";
import type { Config, PolicyMode } from "../config/schema.js";
import { clip } from "../core/clip.js";
import type { GateSettings } from "../policy/types.js";
import type { AuditKind, AuditLog } from "../store/audit.js";
import type { Message, SessionWriter } from "../store/session.js";
import type { AnyTool, ToolServices } from "../tools/types.js";
import {
  AUDIT_MSG_MAX,
  AuditWriteError,
  type CallPipeline,
  createCallPipeline,
  type Prepared,
} from "./calls.js";
import type { ContextFit } from "./context-fit.js";
import type { AgentEvent, Listener } from "./events.js";
import { compactWithHysteresis } from "./hysteresis.js";
import { correctionMessage, wrapObservation } from "./prompt.js";
import { auditForRun, type RunAudit } from "./run-audit.js";
import { parseStep, STEP_ERROR_MAX_BYTES, stepSchema, type ValidStep } from "./step.js";
import { followStep } from "./stream-final.js";

export type RunStatus = "final" | "failed" | "interrupted";

export interface RunResult {
  status: RunStatus;
  answer?: string;
  error?: string;
  turns: number;
  usage: Usage;
  toolCalls: number;
  denials: number;
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
  /** Fits the history to the model's context window (issue 15); without it, the byte budget alone. */
  fit?: ContextFit;
  /** This run continues the session with this id (`--resume`/`--continue`): its `run` event says so. */
  resumed?: string;
}

class AuditFailure extends Error {}
class Interrupted extends Error {}

/** What one run carries between phases. */
interface Run {
  deps: RunDeps;
  audit: RunAudit;
  calls: CallPipeline;
  usage: Usage;
  counts: { turns: number; toolCalls: number; denials: number; errors: number };
  emit(e: AgentEvent): void;
  /** Audit record that must be on disk before the run goes on. */
  record(kind: AuditKind, msg: string): void;
  /** History + transcript. */
  remember(m: Message): void;
  goalIndex: number;
  malformed: number;
}

function openRun(deps: RunDeps): Run {
  const audit = auditForRun(deps.audit, deps.sessionId, deps.runId);
  const counts = { turns: 0, toolCalls: 0, denials: 0, errors: 0 };
  const emit = (e: AgentEvent) => deps.onEvent?.(e);
  const calls = createCallPipeline({
    env: { settings: deps.gateSettings, tools: deps.tools },
    sink: {
      audit: (kind, msg) => audit(kind, msg),
      denied(action, input, reason) {
        counts.denials += 1;
        emit({ type: "deny", action, input, reason });
      },
      running(action, input) {
        counts.toolCalls += 1;
        emit({ type: "running", action, input });
      },
      ...(deps.onEvent
        ? {
            fileChanged: (path: string, before: string | null, after: string | null) =>
              emit({ type: "file_changed", path, before, after }),
          }
        : {}),
    },
    base: {
      cwd: deps.cwd,
      config: deps.config,
      mode: deps.mode,
      childEnv: deps.childEnv,
      sessionPath: deps.session.path,
      services: deps.services,
    },
    timeoutMs: deps.toolTimeoutMs,
  });
  return {
    deps,
    audit,
    calls,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    counts,
    emit,
    record(kind, msg) {
      const r = audit(kind, msg);
      if (!r.ok) throw new AuditFailure(r.error);
    },
    remember(m) {
      deps.history.push(m);
      try {
        deps.session.append(m);
      } catch (e) {
        // The transcript is part of the record: without it, no further step happens.
        throw new AuditFailure(
          `cannot write the session transcript ${deps.session.path}: ${(e as Error).message}`,
        );
      }
    },
    goalIndex: 0,
    malformed: 0,
  };
}

function checkInterrupted(run: Run): void {
  if (run.deps.signal.aborted) throw new Interrupted();
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
    // After compaction the goal sits right after the system prompt.
    run.goalIndex = 1;
    run.emit({ type: "compacted", removed: c.removed, beforeBytes: c.beforeBytes, afterBytes: c.afterBytes });
  }
  return undefined;
}

/** A reply streamed to listeners as it arrives (issue 13); settled once the step is parsed. */
type Follower = ReturnType<typeof followStep> | undefined;

/** Phase ask: one backend request; the reply text, or why there is none. */
async function askPhase(
  run: Run,
  turn: number,
  schema: object,
): Promise<{ text: string; follower: Follower } | { error: string }> {
  const { deps } = run;
  run.emit({ type: "thinking", turn });
  const follower = deps.onEvent ? followStep(run.emit, turn) : undefined;
  const reply = await deps.backend.complete({
    messages: deps.history,
    stepSchema: schema,
    signal: deps.signal,
    onDelta: follower ? (t) => follower.push(t) : undefined,
  });
  if (!reply.ok || deps.signal.aborted) follower?.settle(undefined, "the backend call did not complete");
  checkInterrupted(run);
  if (!reply.ok) return { error: `backend failed: ${reply.error.message}` };
  const r = reply.value;
  deps.fit?.calibrate(deps.history, r.usage);
  if (r.usage) {
    run.usage.prompt_tokens += r.usage.prompt_tokens;
    run.usage.completion_tokens += r.usage.completion_tokens;
    run.usage.total_tokens += r.usage.total_tokens;
  }
  run.emit({ type: "reply", turn, latencyMs: r.latencyMs, usage: r.usage });
  run.record(
    "backend",
    `latency_ms=${r.latencyMs} request_bytes=${r.requestBytes} response_bytes=${r.responseBytes} attempts=${r.attempts} level=${r.level}` +
      (r.usage
        ? ` prompt_tokens=${r.usage.prompt_tokens} completion_tokens=${r.usage.completion_tokens}`
        : ""),
  );
  run.remember({ role: "assistant", content: r.text });
  return { text: r.text, follower };
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
): Stepped | "retry" | { error: string } {
  const step = parseStep(text, run.deps.tools);
  follower?.settle(
    step.ok && step.value.action === "final" ? step.value.action_input : undefined,
    step.ok ? "the step is not a final answer" : `invalid step: ${step.error}`,
  );
  if (!step.ok) return malformed(run, turn, step.error) ?? "retry";
  const s = step.value;
  const prepared =
    s.action === "final" ? undefined : run.calls.prepare(s.action, s.action_input, { input: s.input });
  if (prepared?.kind === "invalid") {
    // A fan-out with an invalid child is an invalid step: nothing ran, nothing was judged.
    return malformed(run, turn, `invalid action_input for ${s.action}: ${prepared.error}`) ?? "retry";
  }
  run.malformed = 0;
  run.emit({ type: "step", turn, thought: s.thought, action: s.action, input: s.action_input });
  run.record("thought", s.thought);
  return { step: s, prepared };
}

interface Stepped {
  step: ValidStep;
  /** Undefined for `final`, which is not a call. */
  prepared: Exclude<Prepared, { kind: "invalid" }> | undefined;
}

function malformed(run: Run, turn: number, error: string): { error: string } | undefined {
  const maxMalformed = run.deps.config.agent.max_malformed_steps;
  run.malformed += 1;
  run.counts.errors += 1;
  run.emit({ type: "malformed", turn, error, consecutive: run.malformed });
  run.record("system_error", `invalid step (${run.malformed}/${maxMalformed}): ${error}`);
  if (run.malformed >= maxMalformed) {
    return {
      error: `the model sent ${run.malformed} invalid steps in a row (agent.max_malformed_steps); last: ${error}`,
    };
  }
  run.remember({ role: "user", content: correctionMessage(error) });
  return undefined;
}

/** Phase call: a prepared step through the rest of the pipeline; the observation. */
async function callPhase(
  run: Run,
  s: ValidStep,
  prepared: Exclude<Prepared, { kind: "invalid" }>,
): Promise<string> {
  if (prepared.kind === "denied") {
    try {
      run.calls.deny(prepared);
    } catch (e) {
      throw new AuditFailure((e as Error).message);
    }
    return `denied by policy (${run.deps.mode}): ${prepared.reason}`;
  }
  let observation: { text: string; raw: string };
  try {
    observation = await run.calls.run(prepared, run.deps.signal);
  } catch (e) {
    if (e instanceof AuditWriteError) throw new AuditFailure(e.message);
    throw e;
  }
  checkInterrupted(run);
  const derived = run.calls.auditFailure();
  if (derived) throw new AuditFailure(derived);
  const { fit, history } = run.deps;
  // The context fit (issue 15) may clip harder than the tool's own size when the window is small.
  const text = fit
    ? fit.clipObservation(observation.raw, history, new Set([0, run.goalIndex]), s.action, s.tool.clipBytes)
    : observation.text;
  run.emit({
    type: "observation",
    action: s.action,
    bytes: Buffer.byteLength(observation.raw),
    clippedTo: Buffer.byteLength(text),
    // What the model is shown (ACP's tool_call_update content, issue 14).
    text,
  });
  return text;
}

/** Phase record: the observation into the audit log, the history and the transcript. */
function recordPhase(run: Run, action: string, observation: string): void {
  run.record("observation", clip(observation, AUDIT_MSG_MAX));
  run.remember({ role: "user", content: wrapObservation(action, observation) });
}

export async function runGoal(deps: RunDeps, goal: string): Promise<RunResult> {
  const started = Date.now();
  const run = openRun(deps);
  const result = (status: RunStatus, extra: { answer?: string; error?: string } = {}): RunResult => ({
    status,
    ...extra,
    ...run.counts,
    usage: run.usage,
    wallMs: Date.now() - started,
  });
  const fail = (raw: string): RunResult => {
    // The message may echo model or server text; bound it (issue 17 item 1).
    const message = clip(raw, STEP_ERROR_MAX_BYTES);
    run.counts.errors += 1;
    run.emit({ type: "error", message });
    // Already failing; an audit problem here is reported by the caller's message.
    run.audit("system_error", message);
    return result("failed", { error: message });
  };
  const schema = stepSchema([...deps.tools.keys()]);
  const maxTurns = deps.config.agent.max_turns;

  try {
    run.record("run", deps.resumed ? `goal: ${goal} (resumes session ${deps.resumed})` : `goal: ${goal}`);
    run.emit({ type: "run", goal, runId: deps.runId, sessionId: deps.sessionId });
    run.remember({ role: "user", content: goal });
    run.goalIndex = deps.history.length - 1;

    for (let turn = 1; turn <= maxTurns; turn++) {
      checkInterrupted(run);
      run.counts.turns = turn;
      const stopped = turnPhase(run);
      if (stopped) return fail(stopped);
      const reply = await askPhase(run, turn, schema);
      if ("error" in reply) return fail(reply.error);
      const stepped = stepPhase(run, turn, reply.text, reply.follower);
      if (stepped === "retry") continue;
      if ("error" in stepped) return fail(stepped.error);
      const { step, prepared } = stepped;
      if (prepared === undefined) {
        run.record("final", step.action_input);
        run.emit({ type: "final", answer: step.action_input });
        return result("final", { answer: step.action_input });
      }
      recordPhase(run, step.action, await callPhase(run, step, prepared));
    }
    return fail(`no final answer within agent.max_turns = ${maxTurns} turns`);
  } catch (e) {
    if (e instanceof Interrupted || (deps.signal.aborted && !(e instanceof AuditFailure))) {
      run.emit({ type: "error", message: "interrupted" });
      run.audit("system_error", "interrupted");
      return result("interrupted", { error: "interrupted" });
    }
    if (e instanceof AuditFailure) {
      const message = `${e.message}; stopping: no tool runs without an audit record`;
      // Best effort: a transcript failure may still leave the audit log writable.
      run.audit("system_error", message);
      run.counts.errors += 1;
      run.emit({ type: "error", message });
      return result("failed", { error: message });
    }
    throw e;
  }
}
