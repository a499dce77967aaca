/**
 * The backend client's public shapes. Scoot speaks plain JSON to OpenAI-compatible servers,
 * so these are our own minimal types, not the SDK's: only the fields Scoot sends or reads.
 */

import type { Result } from "../core/types.js";
import type { NativeCall } from "./tool-calls.js";

/** How hard Scoot asks the server to keep to the step shape. `auto` resolves to one of these. */
export type StructuredLevel = "json_schema" | "json_object" | "none";

export type ChatRole = "system" | "user" | "assistant";

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface BackendRequest {
  /** The full history, every turn (the wire is stateless so local compaction stays in control). */
  messages: ChatMessage[];
  /** JSON schema of one step, built by the caller from the tool registry. */
  stepSchema: object;
  /** SIGINT or the run's own deadline; aborting ends the call at once, without retry. */
  signal?: AbortSignal;
  /** Streaming: each piece of the reply text as it arrives (docs/context.md "Streaming"). */
  onDelta?: (text: string) => void;
  /** Streaming: each piece of the server's reasoning field as it arrives (docs/context.md "Reasoning models"). */
  onReasoning?: (text: string) => void;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface BackendReply {
  /** The model's text, unparsed: step extraction and validation are the agent's job. */
  text: string;
  /**
   * The server's reasoning field (`reasoning_content`, `reasoning`, Responses reasoning items):
   * thinking to show and audit, never sent back to the model.
   */
  reasoning?: string;
  /** The server stopped at its token limit, in its words ("finish_reason length", ...). */
  cutOff?: string;
  /**
   * The server's native tool calls (`tool_calls`), as they came: the step reader takes the first,
   * with `text` as its thought, and reads its arguments strictly.
   */
  calls?: NativeCall[];
  usage?: Usage;
  /** Wall time of the HTTP exchange that succeeded. */
  latencyMs: number;
  requestBytes: number;
  responseBytes: number;
  /** The structured-output level the successful request was sent with. */
  level: StructuredLevel;
  /** HTTP requests this call made, counting retries and downgrades. */
  attempts: number;
  /** The reply came as an SSE stream (false: plain JSON). */
  streamed?: boolean;
}

/**
 * `config`: the configuration cannot work at all (bad base_url, unreadable ca_file);
 * `protocol`: the server answered 2xx with something that is not a reply.
 */
export type BackendErrorKind = "http" | "network" | "timeout" | "aborted" | "protocol" | "config";

export interface BackendError {
  kind: BackendErrorKind;
  status?: number;
  /** One line for the user: which URL, what failed, what to try. Redacted; never holds the token. */
  message: string;
  /** The request URL without credentials. */
  url: string;
  /**
   * The server answered, but with the model's refusal (a `refusal` field or part) instead of
   * text: the model declined, so retrying the same request or switching level will not help.
   */
  refused?: true;
}

/** What the client reports for trace and debug audit. No bodies, no headers, no token. */
export type BackendEvent =
  | {
      type: "attempt";
      url: string;
      attempt: number;
      level: StructuredLevel;
      /** HTTP status, or the failure kind when no status arrived. */
      outcome: number | "network" | "timeout" | "aborted" | "too_large" | "config";
      latencyMs: number;
      requestBytes: number;
      responseBytes: number;
    }
  | { type: "retry"; url: string; attempt: number; delayMs: number; reason: string }
  | { type: "downgrade"; from: StructuredLevel; to: StructuredLevel; status: number; reason: string }
  | { type: "warning"; message: string }
  /** The server does not stream (answered plain JSON, or rejected `stream`): off for this process. */
  | { type: "stream_off"; reason: string };

export interface Backend {
  complete(req: BackendRequest): Promise<Result<BackendReply, BackendError>>;
  /** The level the next call starts at (for `auto`, the one that last worked). */
  level(): StructuredLevel;
}
