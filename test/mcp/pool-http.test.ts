import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMcpPool, type McpPool } from "../../src/mcp/pool.js";
import { hasOpenssl } from "../helpers/procs.js";
import {
  freePort,
  makeCert,
  type RecordingProxy,
  type RunningServer,
  server,
  startEverythingHttp,
  startProxy,
  tempDir,
} from "./helpers.js";

const CALL_MS = 20_000;
const TOKEN = "s3cr3t-token-value";

let streamable: RunningServer;
let sse: RunningServer;
let pools: McpPool[] = [];
let proxies: RecordingProxy[] = [];

beforeAll(async () => {
  [streamable, sse] = await Promise.all([startEverythingHttp("streamableHttp"), startEverythingHttp("sse")]);
});

afterAll(async () => {
  await Promise.all([streamable?.stop(), sse?.stop()]);
});

afterEach(async () => {
  await Promise.all(pools.map((p) => p.close()));
  await Promise.all(proxies.map((p) => p.stop()));
  pools = [];
  proxies = [];
});

function pool(...args: Parameters<typeof createMcpPool>): McpPool {
  const p = createMcpPool(...args);
  pools.push(p);
  return p;
}

async function proxy(target: string, tls?: { key: string; cert: string }): Promise<RecordingProxy> {
  const p = await startProxy(target, tls);
  proxies.push(p);
  return p;
}

const TRANSPORTS = [
  ["http", () => streamable.url],
  ["streamable_http", () => streamable.url],
  ["sse", () => sse.url],
] as const;

describe("remote transports against the reference server", () => {
  it.each(TRANSPORTS)("%s: echo renders its text and the connection is reused", async (transport, url) => {
    const p = pool([server({ name: "ev", transport, url: url(), allowed_tools: ["echo"] })], {
      env: {},
      timeoutMs: CALL_MS,
    });
    expect(await p.call("ev", "echo", { message: "over the wire" })).toEqual({
      ok: true,
      value: "Echo: over the wire",
    });
    expect(await p.call("ev", "echo", { message: "twice" })).toEqual({ ok: true, value: "Echo: twice" });
  });

  it.each(TRANSPORTS)("%s: isError results are error results", async (transport, url) => {
    const p = pool([server({ name: "ev", transport, url: url(), allowed_tools: ["echo"] })], {
      env: {},
      timeoutMs: CALL_MS,
    });
    const r = await p.call("ev", "echo", {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/Input validation error/);
  });
});

describe("headers", () => {
  it.each(TRANSPORTS)(
    "%s: value_env (with prefix) and value reach the server on every request",
    async (transport, url) => {
      const front = await proxy(url());
      const p = pool(
        [
          server({
            name: "ev",
            transport,
            url: front.url,
            allowed_tools: ["echo"],
            headers: [
              { name: "Authorization", value_env: "TEST_MCP_TOKEN", prefix: "Bearer " },
              { name: "X-Static", value: "v1" },
            ],
          }),
        ],
        { env: { TEST_MCP_TOKEN: TOKEN }, timeoutMs: CALL_MS },
      );
      expect(await p.call("ev", "echo", { message: "auth" })).toEqual({ ok: true, value: "Echo: auth" });
      const posts = front.requests.filter((r) => r.method === "POST");
      expect(posts.length).toBeGreaterThanOrEqual(2); // initialize, initialized, tools/call
      for (const r of front.requests) {
        expect(r.headers.authorization).toBe(`Bearer ${TOKEN}`);
        expect(r.headers["x-static"]).toBe("v1");
      }
    },
  );

  it.each([
    ["missing", {}],
    ["empty", { TEST_MCP_TOKEN: "" }],
  ])("a %s value_env variable fails closed without any request", async (_what, env) => {
    const front = await proxy(streamable.url);
    const p = pool(
      [
        server({
          name: "ev",
          transport: "http",
          url: front.url,
          allowed_tools: ["echo"],
          headers: [{ name: "Authorization", value_env: "TEST_MCP_TOKEN", prefix: "Bearer " }],
        }),
      ],
      { env, timeoutMs: CALL_MS },
    );
    const r = await p.call("ev", "echo", { message: "x" });
    expect(r).toEqual({
      ok: false,
      error:
        'MCP server "ev": header Authorization needs environment variable TEST_MCP_TOKEN, which is not set; not connecting',
    });
    expect(front.requests).toHaveLength(0);
  });

  it("a denied tool makes no request at all", async () => {
    const front = await proxy(streamable.url);
    const p = pool([server({ name: "ev", transport: "http", url: front.url, allowed_tools: ["echo"] })], {
      env: {},
      timeoutMs: CALL_MS,
    });
    const r = await p.call("ev", "get-env", {});
    expect(!r.ok && r.error).toMatch(/not in allowed_tools/);
    expect(front.requests).toHaveLength(0);
  });
});

describe("unavailable remote servers", () => {
  it("nothing listening: a connection error result, quickly and without hanging close", async () => {
    const port = await freePort();
    const p = pool(
      [
        server({
          name: "gone",
          transport: "http",
          url: `http://127.0.0.1:${port}/mcp`,
          allowed_tools: ["echo"],
        }),
      ],
      { env: {}, timeoutMs: CALL_MS },
    );
    const r = await p.call("gone", "echo", { message: "x" });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/MCP server "gone" failed to connect: .*ECONNREFUSED/);
  });

  it.each([
    ["streamableHttp", "http"],
    ["sse", "sse"],
  ] as const)("%s server stopped mid-run: the next call is an error result", async (kind, transport) => {
    const own = await startEverythingHttp(kind);
    try {
      const p = pool([server({ name: "ev", transport, url: own.url, allowed_tools: ["echo"] })], {
        env: {},
        timeoutMs: 5000,
      });
      expect((await p.call("ev", "echo", { message: "before" })).ok).toBe(true);
      await own.stop();
      const r = await p.call("ev", "echo", { message: "after" });
      expect(r.ok).toBe(false);
      // A kept-alive socket to the dead server ends in a reset or hang-up; a new one is refused.
      expect(!r.ok && r.error).toMatch(
        /MCP server "ev" tool "echo" failed: .*(ECONNREFUSED|ECONNRESET|socket hang up)/,
      );
      await p.close();
    } finally {
      await own.stop();
    }
  });
});

describe.skipIf(!hasOpenssl())("https with backend.ca_file", () => {
  let dir: string;
  let cert: ReturnType<typeof makeCert>;
  beforeAll(() => {
    dir = tempDir();
    cert = makeCert(dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each(TRANSPORTS)("%s: trusted with the CA file, refused without it", async (transport, url) => {
    const front = await proxy(url(), { key: cert.key, cert: cert.cert });
    const cfg = [server({ name: "ev", transport, url: front.url, allowed_tools: ["echo"] })];
    const trusted = pool(cfg, { env: {}, timeoutMs: CALL_MS, caFile: cert.certFile });
    expect(await trusted.call("ev", "echo", { message: "tls" })).toEqual({ ok: true, value: "Echo: tls" });
    const untrusted = pool(cfg, { env: {}, timeoutMs: CALL_MS });
    const r = await untrusted.call("ev", "echo", { message: "tls" });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/self[- ]signed certificate/i);
  });

  it("an unreadable CA file fails closed before dialling", async () => {
    const front = await proxy(streamable.url, { key: cert.key, cert: cert.cert });
    const p = pool([server({ name: "ev", transport: "http", url: front.url, allowed_tools: ["echo"] })], {
      env: {},
      timeoutMs: CALL_MS,
      caFile: path.join(dir, "missing.pem"),
    });
    const r = await p.call("ev", "echo", { message: "x" });
    expect(!r.ok && r.error).toMatch(/cannot read backend\.ca_file .*missing\.pem/);
    expect(front.requests).toHaveLength(0);
  });
});
