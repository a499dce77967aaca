import { describe, expect, it } from "vitest";
import { backoffMs, isTransientStatus, RETRY_AFTER_CAP_MS, retryAfterMs } from "../../src/backend/retry.js";
import type { ChatMessage } from "../../src/backend/types.js";
import {
  buildBody,
  displayUrl,
  joinUrl,
  listsModel,
  parseModelList,
  parseReply,
  serverMessage,
} from "../../src/backend/wire.js";
import { splitExtraBody } from "../../src/config/extra-body.js";

const SCHEMA = { type: "object", properties: { thought: { type: "string" } }, additionalProperties: false };
const HISTORY: ChatMessage[] = [
  { role: "system", content: "you are scoot" },
  { role: "system", content: "skills: none" },
  { role: "user", content: "goal" },
  { role: "assistant", content: '{"thought":"t"}' },
  { role: "system", content: "compaction note" },
];

describe("base URL joining", () => {
  it.each([
    ["http://h:1/v1", "chat/completions", "http://h:1/v1/chat/completions"],
    ["http://h:1/v1/", "chat/completions", "http://h:1/v1/chat/completions"],
    ["http://h:1/v1///", "/responses", "http://h:1/v1/responses"],
    ["http://h:1", "models", "http://h:1/models"],
    ["https://h/openai/v1?api-version=2", "responses", "https://h/openai/v1/responses?api-version=2"],
    ["  http://h/v1  ", "models", "http://h/v1/models"],
  ])("%s + %s → %s", (base, path, expected) => {
    const r = joinUrl(base, path);
    expect(r.ok && r.value.href).toBe(expected);
  });

  it.each([["not a url"], ["ftp://h/v1"], [""]])(
    "%j is refused with a message naming backend.base_url",
    (base) => {
      const r = joinUrl(base, "models");
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toContain("backend.base_url");
    },
  );

  it("drops credentials from the URL shown to the user", () => {
    expect(displayUrl(new URL("http://user:pw@h/v1/models"))).toBe("http://h/v1/models");
  });
});

describe("request bodies", () => {
  it.each([
    [
      "json_schema",
      { type: "json_schema", json_schema: { name: "scoot_step", strict: true, schema: SCHEMA } },
    ],
    ["json_object", { type: "json_object" }],
    ["none", undefined],
  ] as const)("chat at level %s sends response_format %j", (level, format) => {
    const body = buildBody({
      api: "chat",
      model: "m",
      messages: HISTORY,
      level,
      stepSchema: SCHEMA,
      store: false,
      extra: {},
    });
    expect(body.model).toBe("m");
    expect(body.messages).toEqual(HISTORY);
    expect(body.response_format).toEqual(format);
    expect("store" in body).toBe(false);
  });

  it.each([
    ["json_schema", { type: "json_schema", name: "scoot_step", strict: true, schema: SCHEMA }],
    ["json_object", { type: "json_object" }],
    ["none", undefined],
  ] as const)("responses at level %s sends text.format %j", (level, format) => {
    const body = buildBody({
      api: "responses",
      model: "m",
      messages: HISTORY,
      level,
      stepSchema: SCHEMA,
      store: true,
      extra: {},
    });
    expect(body.instructions).toBe("you are scoot\n\nskills: none");
    // Only the *leading* system messages move to instructions; a later one keeps its place.
    expect(body.input).toEqual(HISTORY.slice(2));
    expect(body.store).toBe(true);
    expect((body.text as { format?: unknown } | undefined)?.format).toEqual(format);
  });

  it("omits instructions when the history has no leading system message", () => {
    const body = buildBody({
      api: "responses",
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      level: "none",
      stepSchema: SCHEMA,
      store: false,
      extra: {},
    });
    expect("instructions" in body).toBe(false);
    expect(body.input).toEqual([{ role: "user", content: "hi" }]);
  });

  it.each([
    ["chat", { model: "x", messages: [], stream: true, temperature: 0 }, ["model", "messages", "stream"]],
    ["responses", { model: "x", input: [], instructions: "y", seed: 1 }, ["model", "input", "instructions"]],
    ["responses", { store: true, seed: 1 }, ["store"]],
    ["chat", { store: true, seed: 1 }, ["store"]],
  ] as const)("%s: extra_body may not set protected keys", (api, extra, ignored) => {
    const split = splitExtraBody(api, extra);
    expect(split.ignored).toEqual(ignored);
    expect(Object.keys(split.extra)).toHaveLength(1);
  });

  it("extra_body merges one level deep, so text.verbosity keeps Scoot's text.format", () => {
    const body = buildBody({
      api: "responses",
      model: "m",
      messages: HISTORY,
      level: "json_object",
      stepSchema: SCHEMA,
      store: false,
      extra: { text: { verbosity: "low" }, temperature: 0.1 },
    });
    expect(body.text).toEqual({ format: { type: "json_object" }, verbosity: "low" });
    expect(body.temperature).toBe(0.1);
  });
});

describe("reply parsing", () => {
  const chat = (message: unknown, extra: object = {}) =>
    JSON.stringify({ choices: [{ message, ...extra }], ...extra });

  it.each([
    ["string content", chat({ role: "assistant", content: "hello" }), "hello"],
    ["empty content is text", chat({ role: "assistant", content: "" }), ""],
    [
      "content parts",
      chat({
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      }),
      "ab",
    ],
  ])("chat: %s", (_name, body, text) => {
    const r = parseReply("chat", body);
    expect(r.ok && r.value.text).toBe(text);
  });

  it.each([
    ["not JSON", "<html>", "not JSON"],
    ["empty body", "", "empty body"],
    ["no choices", JSON.stringify({ choices: [] }), "no choices"],
    ["no message", JSON.stringify({ choices: [{}] }), "choices[0].message is missing"],
    ["refusal", chat({ content: null, refusal: "I cannot" }), "refusal: I cannot"],
    ["embedded error", JSON.stringify({ error: { message: "model crashed" } }), "model crashed"],
    ["array body", "[1,2]", "not an object"],
  ])("chat: %s is an error", (name, body, wanted) => {
    const r = parseReply("chat", body);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(wanted);
    // Only a refusal is marked as one: the run then stops as `refused`, not `backend`.
    if (!r.ok) expect(r.refused === true).toBe(name === "refusal");
  });

  it("chat: content null with nothing else is an empty reply (the loop corrects it), not an error", () => {
    const r = parseReply("chat", chat({ role: "assistant", content: null }));
    expect(r.ok && r.value.text).toBe("");
  });

  it("chat: usage is read, total computed when missing", () => {
    const r = parseReply(
      "chat",
      JSON.stringify({
        choices: [{ message: { content: "x" } }],
        usage: { prompt_tokens: 7, completion_tokens: 3 },
      }),
    );
    expect(r.ok && r.value.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
  });

  const output = (content: unknown[]) => [{ type: "message", role: "assistant", content }];
  it.each([
    [
      "output_text wins",
      { output_text: "direct", output: output([{ type: "output_text", text: "x" }]) },
      "direct",
    ],
    [
      "output parts concatenated",
      {
        output: [
          { type: "reasoning", summary: [] },
          ...output([
            { type: "output_text", text: "a" },
            { type: "other", text: "skip" },
            { type: "output_text", text: "b" },
          ]),
        ],
      },
      "ab",
    ],
  ])("responses: %s", (_name, json, text) => {
    const r = parseReply("responses", JSON.stringify(json));
    expect(r.ok && r.value.text).toBe(text);
  });

  it.each([
    ["no output", {}, "no output array"],
    ["no text", { output: output([{ type: "refusal", refusal: "no" }]) }, "refusal: no"],
    ["incomplete", { output: [], incomplete_details: { reason: "max_output_tokens" } }, "max_output_tokens"],
    ["failed", { status: "failed", output: [] }, "failed"],
  ])("responses: %s is an error", (name, json, wanted) => {
    const r = parseReply("responses", JSON.stringify(json));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(wanted);
    if (!r.ok) expect(r.refused === true).toBe(name === "no text");
  });

  it("responses: usage input/output tokens map to prompt/completion", () => {
    const r = parseReply(
      "responses",
      JSON.stringify({ output_text: "x", usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } }),
    );
    expect(r.ok && r.value.usage).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
  });
});

describe("server error messages", () => {
  it.each([
    ["OpenAI", JSON.stringify({ error: { message: "bad model" } }), "bad model"],
    ["Ollama", JSON.stringify({ error: "model not found" }), "model not found"],
    ["message", JSON.stringify({ message: "nope" }), "nope"],
    ["FastAPI", JSON.stringify({ detail: [{ loc: ["body"], msg: "x" }] }), '[{"loc":["body"],"msg":"x"}]'],
    ["text", "upstream\n  failed", "upstream failed"],
    ["empty", "", "no message"],
  ])("%s body → %j", (_name, body, wanted) => {
    expect(serverMessage(body)).toBe(wanted);
  });

  it("clips long bodies to one short line", () => {
    const m = serverMessage("x".repeat(5000));
    expect(m.length).toBeLessThan(400);
    expect(m.endsWith("…")).toBe(true);
  });
});

describe("model lists", () => {
  it("reads ids and matches Ollama's :latest suffix", () => {
    const r = parseModelList(JSON.stringify({ data: [{ id: "qwen2.5:latest" }, { id: "llama3" }] }));
    expect(r.ok && r.value).toEqual(["qwen2.5:latest", "llama3"]);
    expect(listsModel(["qwen2.5:latest"], "qwen2.5")).toBe(true);
    expect(listsModel(["qwen2.5:7b"], "qwen2.5")).toBe(false);
  });
});

describe("retry timing", () => {
  it.each([408, 409, 429, 500, 502, 503, 599])("%i is transient", (status) => {
    expect(isTransientStatus(status)).toBe(true);
  });
  it.each([400, 401, 403, 404, 405, 413, 422, 501])("%i is not transient", (status) => {
    expect(isTransientStatus(status)).toBe(false);
  });

  const NOW = Date.parse("2025-01-01T00:00:00Z");
  it.each([
    ["2", 2000],
    ["0", 0],
    ["1.5", 1500],
    ["3600", RETRY_AFTER_CAP_MS],
    ["Wed, 01 Jan 2025 00:00:07 GMT", 7000],
    ["Tue, 31 Dec 2024 23:00:00 GMT", 0],
    ["soon", undefined],
    [undefined, undefined],
  ])("Retry-After %j → %j ms", (header, ms) => {
    expect(retryAfterMs(header, NOW)).toBe(ms);
  });

  it.each([
    [0, 0, 125],
    [0, 1, 250],
    [1, 0, 250],
    [3, 1, 2000],
    [10, 1, 8000],
    [10, 0, 4000],
  ])("backoff for retry %i with jitter %f is %i ms", (retry, random, ms) => {
    expect(backoffMs(retry, () => random)).toBe(ms);
  });
});
