/** Typed events the loop emits. Trace, serve and tests subscribe; nothing prints from the loop. */
import type { BackendEvent, Usage } from "../backend/types.js";

export type AgentEvent =
  | { type: "run"; goal: string; runId: string; sessionId: string }
  | { type: "thinking"; turn: number }
  | { type: "backend"; event: BackendEvent }
  | { type: "reply"; turn: number; latencyMs: number; usage?: Usage }
  | { type: "step"; turn: number; thought: string; action: string; input: string }
  | { type: "malformed"; turn: number; error: string; consecutive: number }
  | { type: "deny"; action: string; input: string; reason: string }
  | { type: "running"; action: string; input: string }
  | { type: "observation"; action: string; bytes: number; clippedTo: number; text?: string }
  | { type: "compacted"; removed: number; beforeBytes: number; afterBytes: number }
  /** The context window and each fit-driven clip or compaction (issue 15). */
  | { type: "context"; message: string }
  | { type: "final"; answer: string }
  | { type: "error"; message: string }
  /** How bash is contained, when it is worth a trace line (issue 11: the `auto` fallback). */
  | { type: "sandbox"; message: string }
  /** Streaming (README "Streaming"): the thought as it arrives. */
  | { type: "thought_delta"; turn: number; text: string }
  /** Streaming: the next piece of a final answer, decoded. */
  | { type: "answer_delta"; text: string }
  /** Streaming: the answer text handed on in this turn does not stand. */
  | { type: "answer_withdrawn"; reason: string }
  /** A file_write or file_edit changed a file (absolute path); null: the file did not exist. */
  | { type: "file_changed"; path: string; before: string | null; after: string | null };

export type Listener = (e: AgentEvent) => void;
