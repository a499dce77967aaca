/** The serve wire format and loop, in process, with stand-in methods. */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Method } from "../../src/serve/methods.js";
import { encodeResponse, MAX_REQUEST_BYTES, parseRequest } from "../../src/serve/protocol.js";
import { serveLines } from "../../src/serve/server.js";

describe("a request line is parsed strictly", () => {
  it.each<[string, string, unknown, RegExp]>([
    ["not JSON", "{nope", null, /bad_json/],
    ["a JSON array", "[1,2]", null, /invalid_request/],
    ["a JSON number", "42", null, /invalid_request/],
    ["JSON null", "null", null, /invalid_request/],
    [
      "an id that is not a string or number",
      '{"id":true,"method":"x"}',
      null,
      /invalid_request.*string or a number/,
    ],
    ["no method", '{"id":1}', 1, /invalid_request.*method is missing/],
    ["a method that is not a string", '{"id":"a","method":7}', "a", /invalid_request.*non-empty string/],
    [
      "params that are not an object",
      '{"id":2,"method":"run","params":["x"]}',
      2,
      /invalid_params.*JSON object/,
    ],
  ])("%s → an error response", (_name, line, id, expected) => {
    const r = parseRequest(line);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.response.id).toEqual(id);
    expect(r.response.ok).toBe(false);
    expect(JSON.stringify(r.response)).toMatch(expected);
  });

  it("a line over the size limit is refused unparsed", () => {
    const r = parseRequest(`{"id":1,"method":"run","params":{"goal":"${"x".repeat(MAX_REQUEST_BYTES)}"}}`);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.response).toMatchObject({ id: null, ok: false, error: { code: "invalid_request" } });
  });

  it("a request without an id is still handled, as id null (the reference's behaviour)", () => {
    expect(parseRequest('{"method":"session.list"}')).toEqual({
      ok: true,
      value: { id: null, method: "session.list", params: {} },
    });
  });

  it("params may be left out", () => {
    expect(parseRequest('{"id":"q","method":"session.list"}')).toEqual({
      ok: true,
      value: { id: "q", method: "session.list", params: {} },
    });
  });
});

describe("responses are redacted field by field and stay one valid JSON line", () => {
  it("a private key block inside a string cannot swallow the rest of the line", () => {
    const key = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n";
    const line = encodeResponse({
      id: 1,
      ok: true,
      result: { reply: key, after: "kept sk-abcdefghijklmnop" },
    });
    expect(line.endsWith("\n")).toBe(true);
    expect(line.trim()).not.toContain("\n");
    const back = JSON.parse(line);
    expect(back.result).toEqual({ reply: "[REDACTED]", after: "kept [REDACTED]" });
  });
});

function harness(methods: Record<string, Method>) {
  const input = new PassThrough();
  const out: string[] = [];
  const controller = new AbortController();
  const logs: string[] = [];
  const done = serveLines({
    input,
    write: (l) => out.push(l),
    methods,
    signal: controller.signal,
    log: (l) => logs.push(l),
  });
  return { input, out, done, controller, logs, responses: () => out.map((l) => JSON.parse(l)) };
}

describe("the serve loop", () => {
  it("answers one request at a time, in order, and keeps going after bad lines", async () => {
    let active = 0;
    let maxActive = 0;
    const slow: Method = async (params) => {
      active += 1;
      maxActive = Math.max(maxActive, active);
      await new Promise((r) => setTimeout(r, 20));
      active -= 1;
      return { ok: true, result: { echo: params.x } };
    };
    const h = harness({
      echo: slow,
      fails: async () => ({ ok: false, code: "invalid_params", message: "params.x is missing" }),
      throws: async () => {
        throw new Error("bug");
      },
    });
    h.input.write('{"id":1,"method":"echo","params":{"x":"a"}}\n');
    h.input.write("garbage\n\n   \n");
    h.input.write('{"id":2,"method":"nope"}\n');
    h.input.write('{"id":3,"method":"fails"}\r\n');
    h.input.write('{"id":4,"method":"throws"}\n');
    h.input.end('{"id":5,"method":"echo","params":{"x":"b"}}');
    const summary = await h.done;
    expect(summary).toEqual({ requests: 6, errors: 4 });
    expect(maxActive).toBe(1);
    expect(h.responses()).toEqual([
      { id: 1, ok: true, result: { echo: "a" } },
      {
        id: null,
        ok: false,
        error: { code: "bad_json", message: expect.stringMatching(/not valid JSON/) },
      },
      {
        id: 2,
        ok: false,
        error: { code: "method_not_found", message: 'unknown method "nope" (known: echo, fails, throws)' },
      },
      { id: 3, ok: false, error: { code: "invalid_params", message: "params.x is missing" } },
      { id: 4, ok: false, error: { code: "internal_error", message: "throws failed: bug" } },
      { id: 5, ok: true, result: { echo: "b" } },
    ]);
    expect(h.logs.join("\n")).toMatch(/throws failed: Error: bug/);
  });

  it("when input ends mid-request, the request in hand is still answered", async () => {
    let release: () => void = () => {};
    const h = harness({
      wait: () =>
        new Promise((resolve) => {
          release = () => resolve({ ok: true, result: "late" });
        }),
    });
    h.input.end('{"id":"w","method":"wait"}\n');
    await new Promise((r) => setTimeout(r, 20));
    expect(h.out).toEqual([]);
    release();
    await h.done;
    expect(h.responses()).toEqual([{ id: "w", ok: true, result: "late" }]);
  });

  it("an abort answers the request in hand and stops reading", async () => {
    const h = harness({
      wait: (_p, signal) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () =>
            resolve({ ok: false, code: "run_failed", message: "interrupted" }),
          );
        }),
    });
    h.input.write('{"id":1,"method":"wait"}\n');
    await new Promise((r) => setTimeout(r, 20));
    h.controller.abort();
    h.input.write('{"id":2,"method":"wait"}\n');
    await h.done;
    expect(h.responses()).toEqual([
      { id: 1, ok: false, error: { code: "run_failed", message: "interrupted" } },
    ]);
  });
});
