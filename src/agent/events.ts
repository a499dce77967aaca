/**
 * Typed events the loop and its call pipeline emit. Trace, the live view, ACP, serve and tests
 * subscribe; nothing prints from the loop. The events of a call carry its record (`call`,
 * call-record.ts): consumers render that value, never the call's text again.
 */
import type { BackendEvent, Usage } from "../backend/types.js";
import type { Plan } from "../tools/plan-shape.js";
import type { Prepared, Ready } from "./call-record.js";
import type { PlanStepState } from "./plan-evidence.js";

export type AgentEvent =
  | { type: "run"; goal: string; runId: string; sessionId: string }
  | { type: "thinking"; turn: number }
  | { type: "backend"; event: BackendEvent }
  | { type: "reply"; turn: number; latencyMs: number; usage?: Usage }
  /** A valid step that is a call: `call` is its prepared record (its tool, its input as written). */
  | { type: "step"; turn: number; thought: string; call: Prepared }
  /** A valid step that is not a call (`final`, `plan`): what it said. */
  | { type: "step"; turn: number; thought: string; call?: undefined; action: string; input: string }
  | { type: "malformed"; turn: number; error: string; consecutive: number }
  /** A call the gate denied, or one that does not validate (its record says why). */
  | { type: "deny"; call: Prepared & { kind: "denied" | "invalid" } }
  | { type: "running"; call: Ready }
  /**
   * A running call's newest output lines (bash), redacted, at most every 100 ms while output
   * comes: the live view draws them under its spinner (docs/keyboard.md "The live view").
   */
  | { type: "tool_output"; lines: readonly string[]; call: Ready }
  /**
   * A call the gate allowed that did not run: a person, an earlier "reject always" or a rule
   * refused it (docs/safety.md "Approval"); its record's `approval` says who and why.
   */
  | { type: "refused"; call: Ready }
  /** The call that ran, as it ended (its `result`, and `shown`: what the model is given). */
  | { type: "observation"; bytes: number; clippedTo: number; call: Ready }
  | { type: "compacted"; removed: number; beforeBytes: number; afterBytes: number }
  /** The context window and each fit-driven clip or compaction. */
  | { type: "context"; message: string }
  | { type: "final"; answer: string }
  /** Plan mode (docs/safety.md "Plan mode"): the model's plan; the run ends with it, nothing executed. */
  | { type: "plan"; plan: Plan }
  /** A run that carries out an approved plan begins (the checklist a front end draws). */
  | { type: "plan_execute"; plan: Plan; sha256: string }
  /**
   * While a plan runs: a step said which plan step it works on (`plan_step`, `plan_status`);
   * `claimed` is a "done" no call has shown (agent/plan-evidence.ts).
   */
  | { type: "plan_progress"; step: number; status: PlanStepState }
  /** The run stopped on an error; an interrupt is told this way too but is not counted as one. */
  | { type: "error"; message: string; interrupted?: true }
  /** How bash is contained, when it is worth a trace line (the `auto` fallback). */
  | { type: "sandbox"; message: string }
  /** MCP tool descriptions: listed, read from the cache, or unavailable (docs/mcp.md "MCP servers"). */
  | { type: "mcp"; message: string }
  /** Which AGENTS.md files reached the prompt, or why none did (docs/context.md "Project instructions"). */
  | { type: "project"; message: string }
  /**
   * Streaming (docs/context.md "Streaming"): the thought as it arrives. `source: "reasoning"` is the
   * model's thinking outside the step — the server's reasoning field or a `<think>` block
   * (docs/context.md "Reasoning models") — shown and audited, never sent back to the model.
   */
  | { type: "thought_delta"; turn: number; text: string; source?: "reasoning" }
  /** How a reply was read on the way to its step (repairs, dialect, thinking set aside). */
  | { type: "step_note"; turn: number; note: string }
  /** Streaming: the next piece of a final answer, decoded. */
  | { type: "answer_delta"; text: string }
  /** Streaming: the answer text handed on in this turn does not stand. */
  | { type: "answer_withdrawn"; reason: string }
  /** A file tool changed a file (docs/sessions.md "Undo"): its content before and after; null: absent. */
  | { type: "file_changed"; path: string; before: string | null; after: string | null; call: Ready };

export type Listener = (e: AgentEvent) => void;

/** Why a denied or invalid call did not run. */
export function denialReason(call: Prepared & { kind: "denied" | "invalid" }): string {
  return call.kind === "denied" ? call.reason : call.error;
}

/**
 * An event as it leaves the process (serve's `run.stream`, docs/editors.md): the call record
 * stays inside; the wire keeps the fields it always had, read from the record.
 */
export function wireEvent(e: AgentEvent): Record<string, unknown> {
  switch (e.type) {
    case "step":
      return e.call
        ? { type: e.type, turn: e.turn, thought: e.thought, action: e.call.action, input: e.call.raw }
        : { type: e.type, turn: e.turn, thought: e.thought, action: e.action, input: e.input };
    case "deny":
      return { type: e.type, action: e.call.action, input: e.call.raw, reason: denialReason(e.call) };
    case "running":
      return { type: e.type, action: e.call.action, input: e.call.raw };
    case "tool_output":
      return { type: e.type, action: e.call.action, lines: e.lines };
    case "refused": {
      const reason = e.call.approval?.reason;
      return { type: e.type, action: e.call.action, input: e.call.raw, ...(reason ? { reason } : {}) };
    }
    case "observation":
      return {
        type: e.type,
        action: e.call.action,
        bytes: e.bytes,
        clippedTo: e.clippedTo,
        ...(e.call.shown !== undefined ? { text: e.call.shown } : {}),
      };
    case "file_changed":
      return { type: e.type, path: e.path, before: e.before, after: e.after };
    default:
      return e;
  }
}

/** The run's counters, folded from its events. */
export interface RunCounts {
  turns: number;
  toolCalls: number;
  denials: number;
  /** Calls the gate allowed that a rule, an earlier "reject always" or the person refused. */
  refusals: number;
  errors: number;
}

export function foldCounts(counts: RunCounts, e: AgentEvent): void {
  if (e.type === "running") counts.toolCalls += 1;
  else if (e.type === "deny") counts.denials += 1;
  else if (e.type === "refused") counts.refusals += 1;
  else if (e.type === "malformed" || (e.type === "error" && !e.interrupted)) counts.errors += 1;
}
