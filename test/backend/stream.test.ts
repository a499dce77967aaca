/**
 * The SSE parser and the stream decoders (docs/context.md "Streaming") as tables: bytes split at
 * every position, line-end styles, comments, the end markers of both wire shapes, errors
 * carried inside a stream, and a stream cut before its end.
 */
import { describe, expect, it } from "vitest";
import { MAX_SSE_EVENT_BYTES, type SseEvent, SseParser } from "../../src/backend/sse.js";
import { createStreamDecoder, isEventStream } from "../../src/backend/stream.js";

function parseAll(pieces: (string | Buffer)[]): SseEvent[] {
  const p = new SseParser();
  const out: SseEvent[] = [];
  for (const piece of pieces) out.push(...p.push(piece));
  out.push(...p.end());
  return out;
}

/** Every way of cutting `bytes` in two. */
function everySplit(bytes: Buffer): Buffer[][] {
  const out: Buffer[][] = [];
  for (let i = 0; i <= bytes.length; i++) out.push([bytes.subarray(0, i), bytes.subarray(i)]);
  return out;
}

describe("SseParser", () => {
  const stream = Buffer.from(
    ': keep-alive\r\nevent: response.output_text.delta\r\ndata: {"delta":"h\\u00e9 😀"}\r\n\r\ndata: a\ndata: b\n\ndata: [DONE]\n\n',
  );
  const expected: SseEvent[] = [
    { event: "response.output_text.delta", data: '{"delta":"h\\u00e9 😀"}' },
    { event: "message", data: "a\nb" },
    { event: "message", data: "[DONE]" },
  ];

  it("gives the same events however the bytes are split (inside CRLF, inside a UTF-8 character)", () => {
    for (const pieces of everySplit(stream)) expect(parseAll(pieces)).toEqual(expected);
  });
  it("byte by byte", () => {
    expect(parseAll([...stream].map((b) => Buffer.from([b])))).toEqual(expected);
  });
  it("a lone CR ends a line too; a last event without its blank line is still given", () => {
    expect(parseAll(["data: x\r\rdata: y"])).toEqual([
      { event: "message", data: "x" },
      { event: "message", data: "y" },
    ]);
  });
  it("an event without data is dropped, and its name does not leak into the next", () => {
    expect(parseAll(["event: ping\n\ndata: z\n\n"])).toEqual([{ event: "message", data: "z" }]);
  });
  it("id, retry, comments and unknown fields are ignored; a field without a colon is an empty value", () => {
    expect(parseAll(["id: 7\nretry: soon\nfoo: bar\n: ping\ndata\ndata: q\n\n"])).toEqual([
      { event: "message", data: "\nq" },
    ]);
  });
  it("a last line held after a CR at the end of the body still makes its event", () => {
    expect(parseAll(["data: x\r"])).toEqual([{ event: "message", data: "x" }]);
  });
  it("one event larger than the bound throws, in one piece or in many", () => {
    const big = "x".repeat(MAX_SSE_EVENT_BYTES + 1);
    expect(() => parseAll([`data: ${big}\n\n`])).toThrow(`larger than ${MAX_SSE_EVENT_BYTES} bytes`);
    const pieces = Array.from({ length: 9 }, (_, i) => (i === 0 ? "data: " : "x".repeat(1024 * 1024)));
    expect(() => parseAll(pieces)).toThrow(`larger than ${MAX_SSE_EVENT_BYTES} bytes`);
  });
  it("a decoder fed a too-large event fails the stream with that reason", () => {
    const d = createStreamDecoder("chat");
    expect(d.data(Buffer.from(`data: ${"x".repeat(MAX_SSE_EVENT_BYTES + 1)}`))).toBe(false);
    const r = d.finish();
    expect(!r.ok && r.error).toBe(`one server-sent event is larger than ${MAX_SSE_EVENT_BYTES} bytes`);
  });
});

describe("isEventStream", () => {
  it.each([
    ["text/event-stream", true],
    ["text/event-stream; charset=utf-8", true],
    ["Text/Event-Stream", true],
    ["application/json", false],
    [undefined, false],
  ])("%s → %s", (ct, want) => {
    expect(isEventStream(ct)).toBe(want);
  });
});

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function decode(api: "chat" | "responses", body: string) {
  const deltas: string[] = [];
  const d = createStreamDecoder(api, (t) => deltas.push(t));
  d.data(Buffer.from(body));
  return { result: d.finish(), deltas };
}

describe("chat completion chunks", () => {
  it("text from the deltas, usage from the last chunk, [DONE] ends it", () => {
    const body = `${chunk({ role: "assistant", content: "" })}${chunk({ content: "Hel" })}${chunk({ content: "lo" })}${chunk({}, "stop")}data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } })}\n\ndata: [DONE]\n\n`;
    const { result, deltas } = decode("chat", body);
    expect(deltas).toEqual(["Hel", "lo"]);
    expect(result).toEqual({
      ok: true,
      value: { text: "Hello", usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } },
    });
  });
  it("a finish_reason without [DONE] is complete enough", () => {
    expect(decode("chat", `${chunk({ content: "ok" })}${chunk({}, "stop")}`).result).toEqual({
      ok: true,
      value: { text: "ok" },
    });
  });
  it("cut before any end marker: not a reply", () => {
    const r = decode("chat", chunk({ content: "half" })).result;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/the stream was cut after \d+ bytes, before its end \(\[DONE\]\)/);
  });
  it("an error inside the stream ends it with the server's message", () => {
    const r = decode(
      "chat",
      `${chunk({ content: "x" })}data: {"error":{"message":"model overloaded"}}\n\n`,
    ).result;
    expect(!r.ok && r.error).toBe("the stream carries an error: model overloaded");
  });
  it("an event that is not JSON is a clear error", () => {
    const r = decode("chat", "data: <html>\n\n").result;
    expect(!r.ok && r.error).toMatch(/a stream event is not JSON \(starts with "<html>"\)/);
  });
});

describe("Responses API events", () => {
  const ev = (type: string, extra: Record<string, unknown> = {}) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...extra })}\n\n`;
  it("output_text deltas, usage from response.completed", () => {
    const body =
      ev("response.created", { response: {} }) +
      ev("response.output_text.delta", { delta: "4" }) +
      ev("response.output_text.delta", { delta: "2" }) +
      ev("response.completed", { response: { usage: { input_tokens: 3, output_tokens: 1 } } });
    const { result, deltas } = decode("responses", body);
    expect(deltas).toEqual(["4", "2"]);
    expect(result).toEqual({
      ok: true,
      value: { text: "42", usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } },
    });
  });
  it.each([
    [
      ev("response.failed", { response: { error: { message: "server_error" } } }),
      "the response failed: server_error",
    ],
    [ev("error", { message: "rate limited" }), "the stream carries an error: rate limited"],
    [
      ev("response.output_text.delta", { delta: "x" }),
      /the stream was cut after \d+ bytes, before its end \(response\.completed\)/,
    ],
  ])("%#: ends as an error", (body, message) => {
    const r = decode("responses", body).result;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(message);
  });
  it("response.incomplete ends the reply as cut off at the token limit, not as an error", () => {
    const body =
      ev("response.output_text.delta", { delta: '{"thought": "' }) +
      ev("response.incomplete", { response: { incomplete_details: { reason: "max_output_tokens" } } });
    const r = decode("responses", body).result;
    expect(r).toEqual({
      ok: true,
      value: { text: '{"thought": "', cutOff: "status incomplete: max_output_tokens" },
    });
  });
});
