/**
 * The ReACT loop. Each turn: compact if over budget → ask the model → extract and validate
 * exactly one step → gate → run the tool under its deadline → wrap and clip the result →
 * feed it back. Every step is written to the transcript and the audit log as it happens;
 * if the audit log cannot be written, no further tool runs (fail closed).
 */
import type { Backend, Usage } from "../backend/types.js";
import type { Config, PolicyMode } from "../config/schema.js";
import type { GateSettings } from "../policy/types.js";
import type { AuditKind, AuditLog } from "../store/audit.js";
import type { Message, SessionWriter } from "../store/session.js";
import { clip } from "../tools/clip.js";
import type { AnyTool, ToolContext, ToolServices } from "../tools/types.js";
import type { ContextFit } from "./context-fit.js";
import { decideCall } from "./decide-call.js";
import type { AgentEvent, Listener } from "./events.js";
import { runToolWithDeadline } from "./execute.js";
import { compactWithHysteresis } from "./hysteresis.js";
import { correctionMessage, wrapObservation } from "./prompt.js";
import { parseStep, STEP_ERROR_MAX_BYTES, stepSchema } from "./step.js";
import { followStep } from "./stream-final.js";

/** How much of a tool input or observation goes into one audit line. */
const AUDIT_MSG_MAX = 4096;

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

function clipAudit(text: string): string {
  return clip(text, AUDIT_MSG_MAX);
}

export async function runGoal(deps: RunDeps, goal: string): Promise<RunResult> {
  const started = Date.now();
  const usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const counts = { turns: 0, toolCalls: 0, denials: 0, errors: 0 };
  const emit = (e: AgentEvent) => deps.onEvent?.(e);
  const record = (kind: AuditKind, msg: string) => {
    const r = deps.audit.emit(deps.sessionId, kind, msg, deps.runId);
    if (!r.ok) throw new AuditFailure(r.error);
  };
  const remember = (m: Message) => {
    deps.history.push(m);
    try {
      deps.session.append(m);
    } catch (e) {
      // The transcript is part of the record: without it, no further step happens.
      throw new AuditFailure(
        `cannot write the session transcript ${deps.session.path}: ${(e as Error).message}`,
      );
    }
  };
  const result = (status: RunStatus, extra: { answer?: string; error?: string } = {}): RunResult => ({
    status,
    ...extra,
    ...counts,
    usage,
    wallMs: Date.now() - started,
  });
  const fail = (raw: string): RunResult => {
    // The message may echo model or server text; bound it (issue 17 item 1).
    const message = clip(raw, STEP_ERROR_MAX_BYTES);
    counts.errors += 1;
    emit({ type: "error", message });
    try {
      record("system_error", message);
    } catch {
      // Already failing; the audit problem is reported by the caller's message.
    }
    return result("failed", { error: message });
  };
  const checkInterrupted = () => {
    if (deps.signal.aborted) throw new Interrupted();
  };

  const enabledNames = [...deps.tools.keys()];
  const schema = stepSchema(enabledNames);
  const maxTurns = deps.config.agent.max_turns;
  const maxMalformed = deps.config.agent.max_malformed_steps;
  let malformed = 0;
  let derivedAuditFailure: string | undefined;

  const toolContext: Omit<ToolContext, "signal" | "timeoutMs"> = {
    cwd: deps.cwd,
    config: deps.config,
    mode: deps.mode,
    // Derived calls (parallel children, redirect hops) pass the same gate, and every denial
    // is audited like the loop's own.
    gate: (action, raw) => {
      const d = decideCall(action, raw, deps.gateSettings, deps.tools);
      if (!d.allow) {
        counts.denials += 1;
        emit({ type: "deny", action, input: raw, reason: d.reason });
        const r = deps.audit.emit(
          deps.sessionId,
          "policy_deny",
          clipAudit(`${action} ${raw} -- ${d.reason}`),
          deps.runId,
        );
        // A tool may swallow exceptions: remember the failure and stop once the tool returns.
        if (!r.ok) derivedAuditFailure ??= r.error;
      }
      return d;
    },
    childEnv: deps.childEnv,
    sessionPath: deps.session.path,
    services: deps.services,
  };

  try {
    record("run", deps.resumed ? `goal: ${goal} (resumes session ${deps.resumed})` : `goal: ${goal}`);
    emit({ type: "run", goal, runId: deps.runId, sessionId: deps.sessionId });
    remember({ role: "user", content: goal });
    let goalIndex = deps.history.length - 1;

    for (let turn = 1; turn <= maxTurns; turn++) {
      checkInterrupted();
      counts.turns = turn;
      const pinned = new Set([0, goalIndex]);
      const compacted = deps.fit
        ? deps.fit.compact(deps.history, pinned, deps.config.agent.compactor)
        : compactWithHysteresis(
            deps.history,
            pinned,
            deps.config.agent.context_budget_bytes,
            deps.config.agent.compactor,
          );
      if (!compacted.ok) return fail(`run stopped before calling the backend: ${compacted.error}`);
      if (compacted.value) {
        const c = compacted.value;
        deps.history.splice(0, deps.history.length, ...c.messages);
        // After compaction the goal sits right after the system prompt.
        goalIndex = 1;
        emit({ type: "compacted", removed: c.removed, beforeBytes: c.beforeBytes, afterBytes: c.afterBytes });
      }

      emit({ type: "thinking", turn });
      const follower = deps.onEvent ? followStep(emit, turn) : undefined;
      const reply = await deps.backend.complete({
        messages: deps.history,
        stepSchema: schema,
        signal: deps.signal,
        onDelta: follower ? (t) => follower.push(t) : undefined,
      });
      if (!reply.ok || deps.signal.aborted) follower?.settle(undefined, "the backend call did not complete");
      checkInterrupted();
      if (!reply.ok) return fail(`backend failed: ${reply.error.message}`);
      const r = reply.value;
      deps.fit?.calibrate(deps.history, r.usage);
      if (r.usage) {
        usage.prompt_tokens += r.usage.prompt_tokens;
        usage.completion_tokens += r.usage.completion_tokens;
        usage.total_tokens += r.usage.total_tokens;
      }
      emit({ type: "reply", turn, latencyMs: r.latencyMs, usage: r.usage });
      record(
        "backend",
        `latency_ms=${r.latencyMs} request_bytes=${r.requestBytes} response_bytes=${r.responseBytes} attempts=${r.attempts} level=${r.level}` +
          (r.usage
            ? ` prompt_tokens=${r.usage.prompt_tokens} completion_tokens=${r.usage.completion_tokens}`
            : ""),
      );
      remember({ role: "assistant", content: r.text });

      const step = parseStep(r.text, deps.tools);
      follower?.settle(
        step.ok && step.value.action === "final" ? step.value.action_input : undefined,
        step.ok ? "the step is not a final answer" : `invalid step: ${step.error}`,
      );
      if (!step.ok) {
        malformed += 1;
        counts.errors += 1;
        emit({ type: "malformed", turn, error: step.error, consecutive: malformed });
        record("system_error", `invalid step (${malformed}/${maxMalformed}): ${step.error}`);
        if (malformed >= maxMalformed) {
          return fail(
            `the model sent ${malformed} invalid steps in a row (agent.max_malformed_steps); last: ${step.error}`,
          );
        }
        remember({ role: "user", content: correctionMessage(step.error) });
        continue;
      }
      malformed = 0;
      const s = step.value;
      emit({ type: "step", turn, thought: s.thought, action: s.action, input: s.action_input });
      record("thought", s.thought);

      if (s.action === "final") {
        record("final", s.action_input);
        emit({ type: "final", answer: s.action_input });
        return result("final", { answer: s.action_input });
      }

      const decision = decideCall(s.action, s.action_input, deps.gateSettings, deps.tools);
      let observation: string;
      if (!decision.allow) {
        counts.denials += 1;
        record("policy_deny", clipAudit(`${s.action} ${s.action_input} -- ${decision.reason}`));
        emit({ type: "deny", action: s.action, input: s.action_input, reason: decision.reason });
        observation = `denied by policy (${deps.mode}): ${decision.reason}`;
      } else {
        // The audit record of the call must be on disk before the effect happens.
        record("tool_call", clipAudit(`${s.action} ${s.action_input}`));
        counts.toolCalls += 1;
        emit({ type: "running", action: s.action, input: s.action_input });
        const raw = await runToolWithDeadline(
          s.tool,
          s.input,
          toolContext,
          deps.toolTimeoutMs,
          deps.signal,
          deps.tools,
        );
        checkInterrupted();
        if (derivedAuditFailure) throw new AuditFailure(derivedAuditFailure);
        observation = deps.fit
          ? deps.fit.clipObservation(raw, deps.history, new Set([0, goalIndex]), s.action, s.tool.clipBytes)
          : clip(raw, s.tool.clipBytes);
        emit({
          type: "observation",
          action: s.action,
          bytes: Buffer.byteLength(raw),
          clippedTo: Buffer.byteLength(observation),
          // What the model is shown (ACP's tool_call_update content, issue 14).
          text: observation,
        });
      }
      record("observation", clipAudit(observation));
      remember({ role: "user", content: wrapObservation(s.action, observation) });
    }
    return fail(`no final answer within agent.max_turns = ${maxTurns} turns`);
  } catch (e) {
    if (e instanceof Interrupted || (deps.signal.aborted && !(e instanceof AuditFailure))) {
      emit({ type: "error", message: "interrupted" });
      try {
        record("system_error", "interrupted");
      } catch {
        // nothing more to do while interrupted
      }
      return result("interrupted", { error: "interrupted" });
    }
    if (e instanceof AuditFailure) {
      const message = `${e.message}; stopping: no tool runs without an audit record`;
      try {
        // Best effort: a transcript failure may still leave the audit log writable.
        deps.audit.emit(deps.sessionId, "system_error", message, deps.runId);
      } catch {
        // nothing more can be recorded
      }
      counts.errors += 1;
      emit({ type: "error", message });
      return result("failed", { error: message });
    }
    throw e;
  }
}
