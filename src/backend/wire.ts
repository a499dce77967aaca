/**
 * The two OpenAI-compatible wire shapes: request bodies out, reply text and usage in.
 * Pure functions, so every rule here is tested as a table without a server.
 */
import { checkBaseUrl } from "../config/base-url.js";
import type { BackendApi } from "../config/schema.js";
import type { Result } from "../core/types.js";
import { bodyExcerpt } from "./body-excerpt.js";
import { type NativeCall, readToolCalls } from "./tool-calls.js";
import type { ChatMessage, StructuredLevel, Usage } from "./types.js";

/** Name of the schema in `response_format` / `text.format`; servers echo it in errors. */
export const STEP_SCHEMA_NAME = "scoot_step";
/** How much of a non-JSON error body reaches the user's one-line message. */
export const SERVER_MESSAGE_MAX_CHARS = 300;

/** `<base_url>/<path>`, whatever trailing slashes the base has; a query on the base (Azure style) is kept. */
export function joinUrl(baseUrl: string, path: string): Result<URL> {
  // The loader has refused a bad one already; a library caller's config object may still hold one.
  const checked = checkBaseUrl(baseUrl);
  if (!checked.ok) return { ok: false, error: `backend.base_url: ${checked.error}` };
  const url = new URL(checked.value);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
  return { ok: true, value: url };
}

/** The URL as it may appear in messages: no user:password. */
export function displayUrl(url: URL): string {
  if (!url.username && !url.password) return url.href;
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  return copy.href;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * `extra_body` over Scoot's body, one level deep for objects present on both sides, so
 * `extra_body.text = {verbosity = "low"}` keeps Scoot's `text.format`.
 */
function mergeExtra(body: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out = { ...body };
  for (const [key, value] of Object.entries(extra)) {
    const mine = out[key];
    out[key] = isPlainObject(mine) && isPlainObject(value) ? { ...mine, ...value } : value;
  }
  return out;
}

export interface BodyInput {
  api: BackendApi;
  model: string;
  messages: ChatMessage[];
  level: StructuredLevel;
  stepSchema: object;
  /** Responses API `store` flag. */
  store: boolean;
  /** Already stripped of protected keys. */
  extra: Record<string, unknown>;
}

export function buildBody(input: BodyInput): Record<string, unknown> {
  const { api, model, messages, level, stepSchema } = input;
  if (api === "chat") {
    const body: Record<string, unknown> = {
      model,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
    };
    if (level === "json_schema") {
      body.response_format = {
        type: "json_schema",
        json_schema: { name: STEP_SCHEMA_NAME, strict: true, schema: stepSchema },
      };
    } else if (level === "json_object") {
      body.response_format = { type: "json_object" };
    }
    return mergeExtra(body, input.extra);
  }
  // Responses API: the leading system messages become `instructions`; the rest stays in order.
  let lead = 0;
  while (lead < messages.length && messages[lead]!.role === "system") lead++;
  const instructions = messages
    .slice(0, lead)
    .map((m) => m.content)
    .join("\n\n");
  const body: Record<string, unknown> = { model };
  if (lead > 0) body.instructions = instructions;
  body.input = messages.slice(lead).map((m) => ({ role: m.role, content: m.content }));
  body.store = input.store;
  if (level === "json_schema") {
    body.text = { format: { type: "json_schema", name: STEP_SCHEMA_NAME, strict: true, schema: stepSchema } };
  } else if (level === "json_object") {
    body.text = { format: { type: "json_object" } };
  }
  return mergeExtra(body, input.extra);
}

/** A parsed reply, or why the body is not one; `refused` when what came instead was the model's refusal. */
export type ReplyResult<T> = { ok: true; value: T } | { ok: false; error: string; refused?: true };

export interface ParsedReply {
  text: string;
  usage?: Usage;
  /** The server's reasoning field, when it sent one (docs/context.md "Reasoning models"). */
  reasoning?: string;
  /** Set when the server stopped at its token limit: how it said so. */
  cutOff?: string;
  /** The server's native tool calls, as they came: the step reader takes the first. */
  calls?: NativeCall[];
}

/**
 * Where OpenAI-compatible servers put a reasoning model's thinking in a chat message or delta:
 * `reasoning_content` (llama.cpp, vLLM, LM Studio), `reasoning` (Ollama's OpenAI API) and
 * `thinking` (Ollama's own API, and proxies that pass it through).
 */
export const CHAT_REASONING_FIELDS = ["reasoning_content", "reasoning", "thinking"] as const;

/** The reasoning text of a chat message or stream delta, "" when there is none. */
export function chatReasoning(m: Record<string, unknown>): string {
  for (const key of CHAT_REASONING_FIELDS) {
    const v = m[key];
    if (typeof v === "string" && v !== "") return v;
  }
  return "";
}

/** The reasoning text of a Responses API `reasoning` output item (summary and content parts). */
export function responsesReasoning(item: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of ["summary", "content"]) {
    const list = item[key];
    if (!Array.isArray(list)) continue;
    for (const p of list) if (isPlainObject(p) && typeof p.text === "string") parts.push(p.text);
  }
  return parts.join("\n");
}

/** The Responses API's `incomplete` status, as the words a correction uses. */
export function incompleteWords(details: unknown): string {
  const reason =
    isPlainObject(details) && typeof details.reason === "string" ? details.reason : "no reason given";
  return `status incomplete: ${reason}`;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function parseUsage(raw: unknown, inKey: string, outKey: string): Usage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const prompt = num(raw[inKey]);
  const completion = num(raw[outKey]);
  if (prompt === undefined && completion === undefined) return undefined;
  const p = prompt ?? 0;
  const c = completion ?? 0;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: num(raw.total_tokens) ?? p + c };
}

/** A short, one-line excerpt of a body for error messages. */
export function excerpt(text: string, max = SERVER_MESSAGE_MAX_CHARS): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** Some servers answer 200 with `{error: ...}` instead of an HTTP error. */
function embeddedError(json: Record<string, unknown>): string | undefined {
  if (json.error === undefined || json.error === null) return undefined;
  return serverMessageFromJson(json) ?? "an error object";
}

/**
 * Chat content may be a string or (some servers) an array of parts: `{type: "text", text}`, and
 * Magistral's `{type: "thinking", thinking: [{type: "text", text}]}` (or a thinking string),
 * whose text is reasoning, not the reply. Used for whole messages and for stream deltas alike.
 */
export function contentParts(content: unknown): { text?: string; thinking: string } {
  if (typeof content === "string") return { text: content, thinking: "" };
  if (!Array.isArray(content)) return { thinking: "" };
  const texts: string[] = [];
  const thinking: string[] = [];
  for (const p of content) {
    if (!isPlainObject(p)) continue;
    const type = p.type ?? "text";
    if (type === "text" && typeof p.text === "string") texts.push(p.text);
    else if (type === "thinking") {
      const t = p.thinking;
      if (typeof t === "string") thinking.push(t);
      else if (Array.isArray(t))
        for (const q of t) if (isPlainObject(q) && typeof q.text === "string") thinking.push(q.text);
    }
  }
  return { ...(texts.length > 0 ? { text: texts.join("") } : {}), thinking: thinking.join("") };
}

function chatContent(content: unknown): string | undefined {
  return contentParts(content).text;
}

/** Reply text and usage, or what is wrong with the body (completes "a body that is not a ...: <error>"). */
export function parseReply(api: BackendApi, body: string): ReplyResult<ParsedReply> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return {
      ok: false,
      error: `not JSON (${body.trim() === "" ? "empty body" : `starts with "${excerpt(body, 60)}"`})`,
    };
  }
  if (!isPlainObject(json)) return { ok: false, error: "the JSON is not an object" };
  const err = embeddedError(json);
  if (err) return { ok: false, error: `it carries an error: ${err}` };

  if (api === "chat") {
    if (!Array.isArray(json.choices) || json.choices.length === 0) return { ok: false, error: "no choices" };
    const choice = json.choices[0];
    if (!isPlainObject(choice) || !isPlainObject(choice.message)) {
      return { ok: false, error: "choices[0].message is missing" };
    }
    const reasoning = chatReasoning(choice.message) || contentParts(choice.message.content).thinking;
    const cutOff = choice.finish_reason === "length" ? "finish_reason length" : undefined;
    const extras = { ...(reasoning ? { reasoning } : {}), ...(cutOff ? { cutOff } : {}) };
    let text = chatContent(choice.message.content);
    const native = choice.message.tool_calls;
    // A plain step carries no native calls: the reader is not run.
    const calls = native === undefined || native === null ? [] : readToolCalls(native);
    if (calls.length > 0) {
      return {
        ok: true,
        value: {
          text: text ?? "",
          usage: parseUsage(json.usage, "prompt_tokens", "completion_tokens"),
          ...extras,
          calls,
        },
      };
    }
    // `content: null` is a reply the loop corrects (the model said nothing), never a failed run;
    // only a refusal in its place is told as one.
    const refusing = typeof choice.message.refusal === "string" && choice.message.refusal !== "";
    if (text === undefined && choice.message.content == null && !refusing) text = "";
    if (text === undefined) {
      const refusal =
        typeof choice.message.refusal === "string" ? `; refusal: ${excerpt(choice.message.refusal)}` : "";
      const finish =
        typeof choice.finish_reason === "string" ? ` (finish_reason ${choice.finish_reason})` : "";
      return {
        ok: false,
        error: `choices[0].message.content is not text${finish}${refusal}`,
        ...(refusal ? { refused: true as const } : {}),
      };
    }
    return {
      ok: true,
      value: { text, usage: parseUsage(json.usage, "prompt_tokens", "completion_tokens"), ...extras },
    };
  }

  const usage = parseUsage(json.usage, "input_tokens", "output_tokens");
  const thinking: string[] = [];
  for (const item of Array.isArray(json.output) ? json.output : []) {
    if (isPlainObject(item) && item.type === "reasoning") {
      const t = responsesReasoning(item);
      if (t) thinking.push(t);
    }
  }
  const reasoning = thinking.join("\n");
  const cutOff = json.status === "incomplete" ? incompleteWords(json.incomplete_details) : undefined;
  const extras = { ...(reasoning ? { reasoning } : {}), ...(cutOff ? { cutOff } : {}) };
  if (typeof json.output_text === "string")
    return { ok: true, value: { text: json.output_text, usage, ...extras } };
  if (json.status === "failed") return { ok: false, error: "status is failed" };
  if (!Array.isArray(json.output)) return { ok: false, error: "no output array" };
  const texts: string[] = [];
  let refusal: string | undefined;
  for (const item of json.output) {
    if (!isPlainObject(item) || item.type === "reasoning" || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (!isPlainObject(part)) continue;
      if (part.type === "output_text" && typeof part.text === "string") texts.push(part.text);
      if (part.type === "refusal" && typeof part.refusal === "string") refusal = part.refusal;
    }
  }
  if (texts.length === 0 && refusal === undefined && (reasoning !== "" || cutOff)) {
    return { ok: true, value: { text: "", usage, ...extras } };
  }
  if (texts.length === 0) {
    const why = isPlainObject(json.incomplete_details)
      ? ` (incomplete: ${String(json.incomplete_details.reason)})`
      : "";
    return {
      ok: false,
      error: `no output_text in output${why}${refusal ? `; refusal: ${excerpt(refusal)}` : ""}`,
      ...(refusal !== undefined ? { refused: true as const } : {}),
    };
  }
  return { ok: true, value: { text: texts.join(""), usage, ...extras } };
}

function serverMessageFromJson(json: Record<string, unknown>): string | undefined {
  const e = json.error;
  if (isPlainObject(e) && typeof e.message === "string") return e.message; // OpenAI and most proxies
  if (typeof e === "string") return e; // Ollama
  if (typeof json.message === "string") return json.message;
  if (typeof json.detail === "string") return json.detail; // FastAPI-based servers
  if (json.detail !== undefined) return JSON.stringify(json.detail);
  return undefined;
}

/**
 * The server's own explanation of an HTTP error, as one clipped line (not yet redacted): the
 * message of a JSON error object, else a short excerpt of the body (an HTML page's text).
 */
export function serverMessage(body: string): string {
  try {
    const json: unknown = JSON.parse(body);
    if (isPlainObject(json)) {
      const m = serverMessageFromJson(json);
      if (m !== undefined) return excerpt(m);
    }
  } catch {
    // Not JSON: a glimpse of what answered is the best explanation there is.
  }
  return bodyExcerpt(body) || "no message";
}

/** Model ids from a `GET /models` body (`{data: [{id}]}`; a bare array is tolerated). */
export function parseModelList(body: string): Result<string[]> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, error: `not JSON (starts with "${excerpt(body, 60)}")` };
  }
  const data = isPlainObject(json) ? json.data : json;
  if (!Array.isArray(data)) return { ok: false, error: "no data array" };
  return { ok: true, value: data.map((m) => (isPlainObject(m) && typeof m.id === "string" ? m.id : "")) };
}

/** Ollama lists `qwen2.5:latest` for a model configured as `qwen2.5`. */
export function listsModel(ids: string[], model: string): boolean {
  return ids.some((id) => id === model || id === `${model}:latest`);
}
