import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BODY_EXCERPT_MAX_CHARS } from "../../src/backend/body-excerpt.js";
import { type BackendOptions, createBackend } from "../../src/backend/client.js";
import type { BackendEvent, ChatMessage } from "../../src/backend/types.js";
import { type Config, defaultConfig } from "../../src/config/schema.js";
import { type ScriptedServer, type ScriptItem, startScriptedServer } from "../helpers/scripted-server.js";

const STEP_SCHEMA = {
  type: "object",
  properties: {
    thought: { type: "string" },
    action: { type: "string", enum: ["bash", "final"] },
    action_input: { type: "string" },
  },
  required: ["thought", "action", "action_input"],
  additionalProperties: false,
};
const STEP = { thought: "done", action: "final", action_input: "42" };
const MESSAGES: ChatMessage[] = [
  { role: "system", content: "You are Scoot." },
  { role: "user", content: "what is 6*7?" },
];

let servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function serve(script: ScriptItem[] = []): Promise<ScriptedServer> {
  const s = await startScriptedServer(script);
  servers.push(s);
  return s;
}

/** Plain JSON exchanges (streaming has its own tests: test/backend/stream.test.ts, test/e2e/streaming.test.ts). */
function backendConfig(over: Partial<Config["backend"]>): Config["backend"] {
  return { ...defaultConfig().backend, model: "test-model", stream: false, ...over };
}

/** A backend whose sleeps are recorded instead of waited, and whose events are kept. */
function recorded(config: Config["backend"], opts: BackendOptions = {}) {
  const sleeps: number[] = [];
  const events: BackendEvent[] = [];
  const backend = createBackend(config, {
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0,
    onEvent: (e) => events.push(e),
    ...opts,
  });
  return { backend, sleeps, events };
}

/** A loopback port with nothing listening. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

type Body = Record<string, unknown>;
const bodyOf = (s: ScriptedServer, i: number) => s.completions()[i]!.body as Body;
const formatOf = (s: ScriptedServer, i: number) => {
  const b = bodyOf(s, i);
  const f = (b.response_format ?? (b.text as Body | undefined)?.format) as Body | undefined;
  return f?.type ?? "none";
};

describe("chat API happy path", () => {
  it("posts model, messages and the strict step schema; reads text and usage", async () => {
    const s = await serve([{ reply: STEP, usage: { prompt_tokens: 11, completion_tokens: 4 } }]);
    const { backend } = recorded(backendConfig({ base_url: `${s.url}/`, api: "chat" }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });

    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(JSON.parse(r.value.text)).toEqual(STEP);
    expect(r.value.usage).toEqual({ prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });
    expect(r.value.level).toBe("json_schema");
    expect(r.value.attempts).toBe(1);
    expect(r.value.requestBytes).toBe(Buffer.byteLength(s.completions()[0]!.raw));
    expect(r.value.responseBytes).toBeGreaterThan(0);

    const req = s.completions()[0]!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.body).toEqual({
      model: "test-model",
      messages: MESSAGES,
      response_format: {
        type: "json_schema",
        json_schema: { name: "scoot_step", strict: true, schema: STEP_SCHEMA },
      },
    });
  });

  it.each([
    ["with a token", "tok-secret-123456", "Bearer tok-secret-123456"],
    ["without a token", undefined, undefined],
  ])("Authorization header %s", async (_name, token, header) => {
    const s = await serve([{ reply: "x" }]);
    const { backend } = recorded(backendConfig({ base_url: s.url }), { token });
    expect((await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA })).ok).toBe(true);
    expect(s.completions()[0]!.headers.authorization).toBe(header);
  });

  it("merges extra_body but keeps model, messages and stream; warns once", async () => {
    const s = await serve([{ reply: "a" }, { reply: "b" }]);
    const { backend, events } = recorded(
      backendConfig({
        base_url: s.url,
        extra_body: {
          temperature: 0.2,
          model: "evil",
          messages: [],
          stream: true,
          options: { num_ctx: 8192 },
        },
      }),
    );
    await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });

    const body = bodyOf(s, 0);
    expect(body.model).toBe("test-model");
    expect(body.messages).toEqual(MESSAGES);
    expect("stream" in body).toBe(false);
    expect(body.temperature).toBe(0.2);
    expect(body.options).toEqual({ num_ctx: 8192 });
    const warnings = events.filter((e) => e.type === "warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ message: expect.stringContaining("model, messages, stream") });
  });
});

describe("responses API happy path", () => {
  it("posts instructions, input, store and text.format; concatenates output_text parts", async () => {
    const s = await serve([{ reply: STEP, usage: { prompt_tokens: 20, completion_tokens: 5 } }]);
    const { backend } = recorded(
      backendConfig({
        base_url: s.url,
        api: "responses",
        store: false,
        extra_body: { input: "evil", instructions: "evil", reasoning: { effort: "low" } },
      }),
      { token: "tok-abcdef-responses" },
    );
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });

    expect(r.ok && JSON.parse(r.value.text)).toEqual(STEP);
    expect(r.ok && r.value.usage).toEqual({ prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 });
    const req = s.completions()[0]!;
    expect(req.path).toBe("/v1/responses");
    expect(req.headers.authorization).toBe("Bearer tok-abcdef-responses");
    expect(req.body).toEqual({
      model: "test-model",
      instructions: "You are Scoot.",
      input: [{ role: "user", content: "what is 6*7?" }],
      store: false,
      text: { format: { type: "json_schema", name: "scoot_step", strict: true, schema: STEP_SCHEMA } },
      reasoning: { effort: "low" },
    });
  });
});

describe("transient errors are retried", () => {
  it("429 waits exactly the Retry-After the server asked for", async () => {
    const s = await serve([{ status: 429, retryAfter: 2 }, { reply: "ok" }]);
    const { backend, sleeps, events } = recorded(backendConfig({ base_url: s.url }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok && r.value.text).toBe("ok");
    expect(r.ok && r.value.attempts).toBe(2);
    expect(sleeps).toEqual([2000]);
    expect(events.find((e) => e.type === "retry")).toMatchObject({ reason: "HTTP 429", delayMs: 2000 });
  });

  it("500 then success backs off with jitter from the base step", async () => {
    const s = await serve([{ status: 500 }, { reply: "ok" }]);
    const { backend, sleeps } = recorded(backendConfig({ base_url: s.url }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok && r.value.text).toBe("ok");
    expect(sleeps).toEqual([125]); // equal jitter with random() = 0: half of 250 ms
    expect(s.completions()).toHaveLength(2);
  });

  it("exhausted retries fail with the status and the server's message", async () => {
    const s = await serve([
      { status: 503, body: { error: { message: "overloaded" } } },
      { status: 503, body: { error: { message: "overloaded" } } },
      { status: 503, body: { error: { message: "overloaded" } } },
    ]);
    const { backend, sleeps } = recorded(backendConfig({ base_url: s.url, max_retries: 2 }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ kind: "http", status: 503, url: `${s.url}/chat/completions` });
    expect(r.error.message).toContain("503 Service Unavailable: overloaded (after 3 attempts)");
    expect(s.completions()).toHaveLength(3);
    expect(sleeps).toEqual([125, 250]); // doubling per retry
  });

  it("the --retries override wins over backend.max_retries", async () => {
    const s = await serve([{ status: 500 }, { reply: "unused" }]);
    const { backend } = recorded(backendConfig({ base_url: s.url, max_retries: 5 }), { retries: 0 });
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    expect(s.completions()).toHaveLength(1);
  });

  it("a dropped connection is retried", async () => {
    const s = await serve([{ drop: true }, { reply: "after drop" }]);
    const { backend, events } = recorded(backendConfig({ base_url: s.url }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok && r.value.text).toBe("after drop");
    expect(s.completions()).toHaveLength(2);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
  });

  it("a timeout is retried, and the retry can succeed", async () => {
    const s = await serve([{ hang: true }, { reply: "second try" }]);
    const { backend } = recorded(backendConfig({ base_url: s.url, timeout_ms: 300, max_retries: 1 }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok && r.value.text).toBe("second try");
  });

  it("connection refused names the URL and what to try", async () => {
    const port = await closedPort();
    const { backend, sleeps } = recorded(
      backendConfig({ base_url: `http://127.0.0.1:${port}/v1`, max_retries: 1 }),
    );
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("network");
    expect(r.error.message).toContain(`http://127.0.0.1:${port}/v1/chat/completions`);
    expect(r.error.message).toContain("connection refused (after 2 attempts)");
    expect(r.error.message).toContain("scoot doctor");
    expect(r.error.message).toContain("SCOOT_BACKEND_BASE_URL");
    expect(sleeps).toHaveLength(1);
  });
});

describe("other failures are not retried", () => {
  const LEAK = "sk-proj-abcdefghijklmnop123456";

  it.each([
    [400, "none"],
    [401, "auto"],
    [403, "auto"],
    [404, "auto"],
    [422, "none"],
  ] as const)("%i fails at once with the redacted server message", async (status, level) => {
    const s = await serve([
      { status, body: { error: { message: `bad request for key ${LEAK}` } } },
      { reply: "must not be reached" },
    ]);
    const { backend, sleeps } = recorded(backendConfig({ base_url: s.url, structured_output: level }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("http");
    expect(r.error.status).toBe(status);
    expect(r.error.message).toContain(`answered ${status}`);
    expect(r.error.message).toContain("bad request for key [REDACTED]");
    expect(r.error.message).not.toContain(LEAK);
    expect(r.error.message).not.toContain("\n");
    expect(s.completions()).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  /** A web server's own error page, as nginx and most frameworks send it. */
  const PAGE = (status: string) =>
    `<!DOCTYPE html>\n<html><head><title>${status}</title><style>body { color: red; }</style>` +
    `<script>var tracking = "${"x".repeat(5000)}";</script></head>\n<body>\n<center><h1>${status}</h1></center>\n` +
    `<hr><center>nginx/1.24.0</center>\n${"<p>padding &amp; more padding</p>\n".repeat(200)}</body></html>`;

  it.each([
    [404, "404 Not Found", "/"],
    [405, "405 Not Allowed", "/v1"],
    [501, "501 Not Implemented", "/v1"],
  ])(
    "%i from a server that is not OpenAI-compatible there: one request, the URL, status, a short excerpt and where to look",
    async (status, title, basePath) => {
      const s = await startScriptedServer([], {
        routes: {
          [`POST ${basePath === "/" ? "" : basePath}/chat/completions`]: () => ({
            status,
            body: PAGE(title),
            contentType: "text/html",
          }),
        },
      });
      servers.push(s);
      const root = s.url.replace(/\/v1$/, "");
      const base = basePath === "/" ? root : s.url;
      const { backend, sleeps } = recorded(backendConfig({ base_url: base, max_retries: 3 }));
      const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(s.requests).toHaveLength(1);
      expect(sleeps).toEqual([]);
      expect(r.error.status).toBe(status);
      const said = r.error.message;
      expect(said).toContain(`the backend at ${base}/chat/completions answered ${status}`);
      // The page's text, not its markup, scripts or styles, and cut short.
      expect(said).toContain(`: ${title} ${title} nginx/1.24.0 padding & more padding`);
      expect(said).not.toMatch(/<|tracking|color: red/);
      const excerpt = said.slice(said.indexOf(": ") + 2, said.indexOf(" — "));
      expect(excerpt.length).toBeLessThanOrEqual(BODY_EXCERPT_MAX_CHARS + 1);
      expect(excerpt.endsWith("…")).toBe(true);
      if (basePath === "/")
        expect(said).toContain(
          `— is backend.base_url right? OpenAI-compatible servers answer at ${root}/v1/chat/completions: add /v1 (base_url = "${root}/v1")`,
        );
      else
        expect(said).toContain(
          "— is backend.base_url right? OpenAI-compatible servers answer at …/v1/chat/completions (check backend.api too)",
        );
    },
  );

  it("a 404 about the model (the right URL, an unknown model) names the models the server lists", async () => {
    const s = await startScriptedServer(
      [{ status: 404, body: { error: 'model "nope" not found, try pulling it first' } }],
      { models: ["qwen2.5:7b", "llama3.2"] },
    );
    servers.push(s);
    const { backend } = recorded(backendConfig({ base_url: s.url }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(!r.ok && r.error.message).toContain(
      'answered 404 Not Found: model "nope" not found, try pulling it first — backend.model "test-model" is not among the models the server lists: qwen2.5:7b, llama3.2; set backend.model (or --model) to one of them',
    );
    expect(s.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
      "POST /v1/chat/completions",
      "GET /v1/models",
    ]);
  });

  it("a 404 about the model keeps the model hint when the server lists the model, or gives no list", async () => {
    const listed = await startScriptedServer(
      [{ status: 404, body: { error: 'model "test-model" not found, try pulling it first' } }],
      { models: ["test-model"] },
    );
    const unlisted = await startScriptedServer(
      [{ status: 404, body: { error: 'model "test-model" not found, try pulling it first' } }],
      {
        routes: {
          "GET /v1/models": () => ({ status: 404, body: "404 page not found", contentType: "text/plain" }),
        },
      },
    );
    servers.push(listed, unlisted);
    for (const s of [listed, unlisted]) {
      const { backend } = recorded(backendConfig({ base_url: s.url }));
      const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
      expect(!r.ok && r.error.message).toContain(
        "try pulling it first — check backend.base_url, backend.api and backend.model",
      );
    }
  });

  it("a server echoing the token never gets it into the error", async () => {
    const token = "plain-token-without-known-shape";
    const s = await serve([{ status: 401, body: { error: { message: `invalid api key ${token}` } } }]);
    const { backend } = recorded(backendConfig({ base_url: s.url }), { token });
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.message).not.toContain(token);
    expect(r.error.message).toContain("check the token");
  });

  it("a token inside a longer key does not leave the rest of that key readable", async () => {
    const s = await serve([{ status: 401, body: { error: { message: "wrong key sk-abcdefghijklmnop" } } }]);
    const { backend } = recorded(backendConfig({ base_url: s.url }), { token: "abcdefgh" });
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.message).toContain("wrong key [REDACTED]");
    expect(r.error.message).not.toContain("ijklmnop");
  });

  it.each([
    ["chat", "not a chat completion"],
    ["responses", "not a Responses API reply"],
  ] as const)("%s: a malformed 200 body is a protocol error", async (api, wanted) => {
    const s = await serve([{ malformed: true }, { reply: "must not be reached" }]);
    const { backend } = recorded(backendConfig({ base_url: s.url, api }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("protocol");
    expect(r.error.message).toContain(wanted);
    expect(r.error.message).toContain("not JSON");
    expect(s.completions()).toHaveLength(1);
  });

  it("a hang past the deadline is a timeout error", async () => {
    const s = await serve([{ hang: true }]);
    const { backend } = recorded(backendConfig({ base_url: s.url, timeout_ms: 300, max_retries: 0 }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("timeout");
    expect(r.error.message).toContain("did not answer within 300 ms");
    expect(r.error.message).toContain("backend.timeout_ms");
  });
});

describe("structured output levels", () => {
  it.each(["chat", "responses"] as const)(
    "%s: auto steps down json_schema → json_object → none and keeps the level that worked",
    async (api) => {
      const s = await serve([
        { rejectFormat: true },
        { rejectFormat: true },
        { reply: "one" },
        { reply: "two" },
      ]);
      const { backend, events, sleeps } = recorded(
        backendConfig({ base_url: s.url, api, structured_output: "auto" }),
      );
      const first = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
      expect(first.ok && first.value).toMatchObject({ text: "one", level: "none", attempts: 3 });
      expect(backend.level()).toBe("none");

      const second = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
      expect(second.ok && second.value).toMatchObject({ text: "two", level: "none", attempts: 1 });

      expect([0, 1, 2, 3].map((i) => formatOf(s, i))).toEqual(["json_schema", "json_object", "none", "none"]);
      const downgrades = events.filter((e) => e.type === "downgrade");
      expect(downgrades).toMatchObject([
        { from: "json_schema", to: "json_object", status: 400 },
        { from: "json_object", to: "none", status: 400 },
      ]);
      expect(sleeps).toEqual([]); // a downgrade is not a retry
    },
  );

  it("auto stops at json_object when that works", async () => {
    const s = await serve([{ rejectFormat: "json_schema" }, { reply: "obj" }, { reply: "obj again" }]);
    const { backend } = recorded(backendConfig({ base_url: s.url }));
    await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok && r.value.level).toBe("json_object");
    expect([0, 1, 2].map((i) => formatOf(s, i))).toEqual(["json_schema", "json_object", "json_object"]);
  });

  it("auto does not remember a level that never worked", async () => {
    const reject = { status: 400, body: { error: { message: "context length exceeded" } } } as const;
    const s = await serve([reject, reject, reject]);
    const { backend } = recorded(backendConfig({ base_url: s.url }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain("context length exceeded");
    expect(backend.level()).toBe("json_schema");
  });

  it.each(["json_schema", "json_object"] as const)("explicit %s never downgrades", async (level) => {
    const s = await serve([{ rejectFormat: true }, { reply: "must not be reached" }]);
    const { backend, events } = recorded(backendConfig({ base_url: s.url, structured_output: level }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.status).toBe(400);
    expect(r.error.message).toContain("response_format json_schema not supported");
    expect(r.error.message).toContain('structured_output = "auto"');
    expect(s.completions()).toHaveLength(1);
    expect(formatOf(s, 0)).toBe(level);
    expect(events.some((e) => e.type === "downgrade")).toBe(false);
  });

  it("explicit none sends no format at all", async () => {
    const s = await serve([{ reply: "x" }]);
    const { backend } = recorded(backendConfig({ base_url: s.url, structured_output: "none" }));
    await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect("response_format" in bodyOf(s, 0)).toBe(false);
  });
});

describe("abort signal", () => {
  it("an already-aborted signal sends nothing", async () => {
    const s = await serve([{ reply: "x" }]);
    const { backend } = recorded(backendConfig({ base_url: s.url }));
    const r = await backend.complete({
      messages: MESSAGES,
      stepSchema: STEP_SCHEMA,
      signal: AbortSignal.abort(),
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.kind).toBe("aborted");
    expect(s.completions()).toHaveLength(0);
  });

  it("aborting a waiting request ends it at once, without retry", async () => {
    const ctrl = new AbortController();
    const s = await serve([
      () => {
        // The request has arrived: interrupt it while the server holds it.
        setImmediate(() => ctrl.abort());
        return { hang: true };
      },
      { reply: "must not be reached" },
    ]);
    const { backend, sleeps } = recorded(backendConfig({ base_url: s.url, max_retries: 3 }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA, signal: ctrl.signal });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("aborted");
    expect(r.error.message).toContain("interrupted");
    expect(s.completions()).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("the real backoff sleep ends when the signal aborts", async () => {
    const ctrl = new AbortController();
    const s = await serve([{ status: 503, retryAfter: 30 }, { reply: "must not be reached" }]);
    // No injected sleep: the default one must wake up on abort instead of waiting 30 s.
    const backend = createBackend(backendConfig({ base_url: s.url }), {
      onEvent: (e) => {
        if (e.type === "retry") setImmediate(() => ctrl.abort());
      },
    });
    const SENTINEL = "the 30 s Retry-After was slept through";
    let guard: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA, signal: ctrl.signal }),
      new Promise<string>((resolve) => {
        guard = setTimeout(() => resolve(SENTINEL), 20_000);
      }),
    ]);
    clearTimeout(guard);
    expect(result).not.toBe(SENTINEL);
    expect(typeof result === "object" && !result.ok && result.error.kind).toBe("aborted");
    expect(s.completions()).toHaveLength(1);
  });
});

describe("configuration errors", () => {
  it("a bad base_url is reported without a request", async () => {
    const { backend } = recorded(backendConfig({ base_url: "localhost:11434" }));
    const r = await backend.complete({ messages: MESSAGES, stepSchema: STEP_SCHEMA });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.kind).toBe("config");
      expect(r.error.message).toContain("backend.base_url");
    }
  });
});
