import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { probeBackend, probeBackendInfo } from "../../src/backend/probe.js";
import { type Config, defaultConfig } from "../../src/config/schema.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function backendConfig(over: Partial<Config["backend"]>): Config["backend"] {
  return { ...defaultConfig().backend, ...over };
}

describe("probeBackend (doctor)", () => {
  it("lists the models and says whether backend.model is among them", async () => {
    server = await startScriptedServer([], { models: ["qwen2.5:latest", "llama3"] });
    const r = await probeBackend(
      backendConfig({ base_url: server.url, model: "qwen2.5" }),
      "tok-probe-123456",
      2000,
    );
    expect(r.ok && r.value).toMatch(/^2 models listed, qwen2\.5 among them \(\d+ ms\)$/);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ method: "GET", path: "/v1/models" });
    expect(server.requests[0]!.headers.authorization).toBe("Bearer tok-probe-123456");
    expect(server.remaining()).toBe(0);
  });

  it("names a configured model the server does not list", async () => {
    server = await startScriptedServer([], { models: ["llama3"] });
    const r = await probeBackend(backendConfig({ base_url: server.url, model: "qwen2.5" }), undefined, 2000);
    expect(r.ok && r.value).toContain("backend.model qwen2.5 not among them");
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });

  it("connection refused is one error line with what to try", async () => {
    const s = http.createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
    const { port } = s.address() as AddressInfo;
    await new Promise<void>((r) => s.close(() => r()));

    const r = await probeBackend(
      backendConfig({ base_url: `http://127.0.0.1:${port}/v1/` }),
      undefined,
      2000,
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain(`http://127.0.0.1:${port}/v1/models`);
    expect(r.error).toContain("connection refused");
    expect(r.error).toContain("is the server running?");
    expect(r.error).not.toContain("\n");
  });

  it("a server that does not answer in time is a timeout", async () => {
    // Accepts the connection and never replies.
    const silent = http.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const { port } = silent.address() as AddressInfo;
    try {
      const r = await probeBackendInfo(
        backendConfig({ base_url: `http://127.0.0.1:${port}/v1` }),
        undefined,
        300,
      );
      expect(r.ok).toBe(false);
      if (!r.ok)
        expect(r.error).toMatchObject({ kind: "timeout", message: expect.stringContaining("300 ms") });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it("an HTTP error carries the status", async () => {
    server = await startScriptedServer();
    // No such route on the scripted server: 404 with its message.
    const r = await probeBackendInfo(backendConfig({ base_url: `${server.url}/nope` }), undefined, 2000);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("http");
    expect(r.error.status).toBe(404);
    expect(r.error.message).toContain(
      "is backend.base_url right? OpenAI-compatible servers answer at …/v1/models",
    );
  });
});
