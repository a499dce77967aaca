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
  /** A person refused a call the gate allowed (docs/safety.md "Approval"); it did not run. */
  | { type: "refused"; action: string; input: string; reason?: string }
  /** A file tool changed a file (docs/sessions.md "Undo"): its content before and after; null: absent. */
  | { type: "file_changed"; path: string; before: string | null; after: string | null }
  | { type: "observation"; action: string; bytes: number; clippedTo: number; text?: string }
  | { type: "compacted"; removed: number; beforeBytes: number; afterBytes: number }
  /** The context window and each fit-driven clip or compaction. */
  | { type: "context"; message: string }
  | { type: "final"; answer: string }
  | { type: "error"; message: string }
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
  /** A file_write or file_edit changed a file (absolute path); null: the file did not exist. */
  | { type: "file_changed"; path: string; before: string | null; after: string | null };

export type Listener = (e: AgentEvent) => void;
