/**
 * Streaming replies (docs/context.md "Streaming"): the request fields that ask for SSE, and the
 * decoders that turn each wire shape's events into text deltas, usage and an end state.
 *
 * - chat completions: `chat.completion.chunk` events with `choices[0].delta.content`, a last
 *   chunk carrying `usage` (asked for with `stream_options.include_usage`), then `[DONE]`;
 * - Responses API: typed events, `response.output_text.delta` for text and
 *   `response.completed` (with the usage) as the end; `response.failed`, `response.incomplete`
 *   and `error` end the stream with the server's reason.
 *
 * A stream that stops before its end marker is *cut*: the reply is incomplete and must never
 * be presented as an answer.
 */

import type { BackendApi } from "../config/schema.js";
import { walkBraces } from "../core/json-braces.js";
import type { Result } from "../core/types.js";
import { type SseEvent, SseParser } from "./sse.js";
import { type NativeCall, toolCallCollector } from "./tool-calls.js";
import type { Usage } from "./types.js";
import { chatReasoning, contentParts, excerpt, incompleteWords, type ReplyResult } from "./wire.js";

/**
 * White space after a complete JSON object beyond which the reply is over (docs/context.md "Reasoning
 * models"): in JSON mode some servers (Ollama, vLLM) keep sampling newlines after the step until
 * the token limit or the deadline. No step needs this much trailing space, so the stream is
 * cut there instead of being read for minutes.
 */
export const WHITESPACE_FLOOD_CHARS = 512;

/** The text (trailing space removed) ends exactly where a top-level JSON object closes. */
export function endsWithClosedObject(text: string): boolean {
  let closedAt = -1;
  const depth = walkBraces(text, 0, (i, event, d) => {
    if (event === "close" && d === 0) closedAt = i;
    return false;
  });
  return depth === 0 && closedAt === text.length - 1;
}

/** White space at the end of `text`, counted from the end (a delta is short: never the whole reply). */
function trailingSpace(text: string): number {
  let n = 0;
  for (let i = text.length - 1; i >= 0 && /\s/.test(text[i]!); i--) n++;
  return n;
}

/** The fields added to a request body to ask for a stream. */
export function streamFields(api: BackendApi): Record<string, unknown> {
  return api === "chat" ? { stream: true, stream_options: { include_usage: true } } : { stream: true };
}

/** A 2xx answer is a stream only when it says so; anything else is read as plain JSON. */
export function isEventStream(contentType: string | string[] | undefined): boolean {
  const v = Array.isArray(contentType) ? contentType[0] : contentType;
  return typeof v === "string" && v.toLowerCase().split(";")[0]!.trim() === "text/event-stream";
}

/** One event's data decoded as JSON, or why the stream is broken. */
function decodeEvent(ev: SseEvent): Result<unknown> {
  try {
    return { ok: true, value: JSON.parse(ev.data) };
  } catch {
    return { ok: false, error: `a stream event is not JSON (starts with "${excerpt(ev.data, 60)}")` };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function usageOf(raw: unknown, inKey: string, outKey: string): Usage | undefined {
  if (!isObject(raw)) return undefined;
  const p = num(raw[inKey]);
  const c = num(raw[outKey]);
  if (p === undefined && c === undefined) return undefined;
  return {
    prompt_tokens: p ?? 0,
    completion_tokens: c ?? 0,
    total_tokens: num(raw.total_tokens) ?? (p ?? 0) + (c ?? 0),
  };
}

function errorText(e: unknown): string {
  if (isObject(e) && typeof e.message === "string") return excerpt(e.message);
  if (typeof e === "string") return excerpt(e);
  return excerpt(JSON.stringify(e) ?? "an error");
}

export interface StreamDecoder {
  /** Raw bytes from the HTTP body. Returns false once the stream has failed (stop reading). */
  data(chunk: Buffer): boolean;
  /** Body bytes received so far: after the first one, a failure is not retried (docs/context.md "Streaming"). */
  bytes(): number;
  /** Text received so far (for the error message of a cut stream). */
  textSoFar(): string;
  /** At the end of the HTTP body: the whole reply, or why the stream is not one. */
  finish(): ReplyResult<{
    text: string;
    usage?: Usage;
    reasoning?: string;
    cutOff?: string;
    flooded?: boolean;
    calls?: NativeCall[];
  }>;
}

export function createStreamDecoder(
  api: BackendApi,
  onDelta?: (text: string) => void,
  onReasoning?: (text: string) => void,
): StreamDecoder {
  const parser = new SseParser();
  let text = "";
  let usage: Usage | undefined;
  let ended = false;
  let sawFinish = false;
  let failure: string | undefined;
  let refusal = "";
  let received = 0;
  let reasoning = "";
  let cutOff: string | undefined;
  let flooded = false;
  let floodChecked = false;
  // Counted per delta: reading the end of the whole text on every delta would copy it each time.
  let trailing = 0;
  // Made on the first delta that carries native calls: a plain step never needs the reader.
  let toolCalls: ReturnType<typeof toolCallCollector> | undefined;

  const delta = (t: string) => {
    if (t === "") return;
    text += t;
    onDelta?.(t);
    const space = trailingSpace(t);
    trailing = space === t.length ? trailing + space : space;
    if (t.trim() !== "") floodChecked = false;
    else if (!floodChecked && trailing >= WHITESPACE_FLOOD_CHARS) {
      // Checked once per run of white space: the scan is over the whole text.
      floodChecked = true;
      if (endsWithClosedObject(text.trimEnd())) {
        flooded = true;
        ended = true;
      }
    }
  };
  const thinking = (t: string) => {
    if (t === "") return;
    reasoning += t;
    onReasoning?.(t);
  };

  /** An event's data as a JSON object; undefined for anything else (a non-JSON event fails the stream). */
  const eventObject = (ev: SseEvent): Record<string, unknown> | undefined => {
    const decoded = decodeEvent(ev);
    if (!decoded.ok) failure = decoded.error;
    return decoded.ok && isObject(decoded.value) ? decoded.value : undefined;
  };

  const chatEvent = (ev: SseEvent) => {
    if (ev.data.trim() === "[DONE]") {
      ended = true;
      return;
    }
    const json = eventObject(ev);
    if (!json) return;
    if (json.error !== undefined && json.error !== null) {
      failure = `the stream carries an error: ${errorText(json.error)}`;
      return;
    }
    const u = usageOf(json.usage, "prompt_tokens", "completion_tokens");
    if (u) usage = u;
    const choice = Array.isArray(json.choices) ? json.choices[0] : undefined;
    if (!isObject(choice)) return;
    if (typeof choice.finish_reason === "string") sawFinish = true;
    if (choice.finish_reason === "length") cutOff = "finish_reason length";
    const d = choice.delta;
    if (isObject(d)) {
      thinking(chatReasoning(d));
      const parts = contentParts(d.content);
      thinking(parts.thinking);
      if (parts.text !== undefined) delta(parts.text);
      if (typeof d.refusal === "string") refusal += d.refusal;
      if (d.tool_calls !== undefined && d.tool_calls !== null) {
        toolCalls ??= toolCallCollector();
        toolCalls.push(d.tool_calls);
      }
    }
  };

  const responsesEvent = (ev: SseEvent) => {
    const json = eventObject(ev);
    if (!json) return;
    const type = typeof json.type === "string" ? json.type : ev.event;
    switch (type) {
      case "response.output_text.delta":
        if (typeof json.delta === "string") delta(json.delta);
        return;
      case "response.reasoning_text.delta":
      case "response.reasoning_summary_text.delta":
        if (typeof json.delta === "string") thinking(json.delta);
        return;
      case "response.reasoning_summary_part.done":
        // Summary parts are separate paragraphs.
        thinking("\n");
        return;
      case "response.refusal.delta":
        if (typeof json.delta === "string") refusal += json.delta;
        return;
      case "response.completed": {
        const resp = isObject(json.response) ? json.response : {};
        usage = usageOf(resp.usage, "input_tokens", "output_tokens") ?? usage;
        ended = true;
        return;
      }
      case "response.failed": {
        const resp = isObject(json.response) ? json.response : {};
        failure = `the response failed: ${resp.error ? errorText(resp.error) : "no reason given"}`;
        return;
      }
      case "response.incomplete": {
        // An end, not a failure: the loop tells the model it was cut off at the token limit.
        const resp = isObject(json.response) ? json.response : {};
        usage = usageOf(resp.usage, "input_tokens", "output_tokens") ?? usage;
        cutOff = incompleteWords(resp.incomplete_details);
        ended = true;
        return;
      }
      case "error":
        failure = `the stream carries an error: ${errorText(json.error ?? json)}`;
        return;
      default:
        return;
    }
  };

  const handle = api === "chat" ? chatEvent : responsesEvent;
  const feed = (events: SseEvent[]) => {
    for (const ev of events) {
      if (failure || ended) return;
      handle(ev);
    }
  };

  return {
    data(chunk) {
      received += chunk.length;
      if (failure || flooded) return false;
      try {
        feed(parser.push(chunk));
      } catch (e) {
        failure = (e as Error).message;
      }
      return failure === undefined && !flooded;
    },
    bytes: () => received,
    textSoFar: () => text,
    finish() {
      if (!failure && !ended) {
        try {
          feed(parser.end());
        } catch (e) {
          failure = (e as Error).message;
        }
      }
      if (failure) return { ok: false, error: failure };
      // Some chat servers close after the finish_reason chunk without `[DONE]`: complete enough.
      if (!ended && !(api === "chat" && sawFinish)) {
        return {
          ok: false,
          error: `the stream was cut after ${received} bytes, before its end (${api === "chat" ? "[DONE]" : "response.completed"})`,
        };
      }
      const calls = toolCalls?.calls() ?? [];
      if (calls.length > 0) {
        return {
          ok: true,
          value: {
            text,
            ...(usage ? { usage } : {}),
            ...(reasoning ? { reasoning } : {}),
            ...(cutOff ? { cutOff } : {}),
            calls,
          },
        };
      }
      if (text === "" && refusal !== "")
        return { ok: false, error: `the model refused: ${excerpt(refusal)}`, refused: true };
      return {
        ok: true,
        value: {
          text: flooded ? text.trimEnd() : text,
          ...(usage ? { usage } : {}),
          ...(reasoning ? { reasoning } : {}),
          ...(cutOff ? { cutOff } : {}),
          ...(flooded ? { flooded } : {}),
        },
      };
    },
  };
}
