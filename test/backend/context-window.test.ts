/**
 * Context window discovery against a real loopback server per flavour, answering the
 * discovery endpoints in their documented shapes; the state cache; bad and slow answers.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ContextWindow,
  discoverContextWindow,
  forgetDiscoveredWindows,
  OLLAMA_DEFAULT_WINDOW,
  rootUrl,
} from "../../src/backend/context-window.js";
import { type Config, defaultConfig } from "../../src/config/schema.js";
import { removeDir, tempDir } from "../helpers/cli.js";
import {
  type ScriptedServer,
  type ScriptedServerOptions,
  startScriptedServer,
} from "../helpers/scripted-server.js";
import { FLAVOURS, flavourRoutes, SOURCE } from "../helpers/window-servers.js";

let server: ScriptedServer | undefined;
let state: string;

beforeEach(() => {
  state = tempDir("scoot-state-");
  forgetDiscoveredWindows();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(state);
});

function backend(url: string, extra: Partial<Config["backend"]> = {}): Config["backend"] {
  return { ...defaultConfig().backend, base_url: url, ...extra };
}

async function start(routes: ScriptedServerOptions["routes"]): Promise<ScriptedServer> {
  server = await startScriptedServer([], { routes });
  return server;
}

const discoveryPaths = (s: ScriptedServer) => s.requests.map((r) => `${r.method} ${r.path}`).sort();

describe("discovery per flavour", () => {
  const expected: Record<string, number | undefined> = {
    vllm: 2048,
    llamacpp: 2048,
    "ollama-loaded": 2048,
    "ollama-not-loaded": 2048,
    lmstudio: 2048,
    none: undefined,
  };
  for (const flavour of FLAVOURS) {
    it(`${flavour}: window and source`, async () => {
      const s = await start(flavourRoutes(flavour, 2048));
      const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
      expect(w.tokens).toBe(expected[flavour]);
      expect(w.source).toBe(SOURCE[flavour]);
      expect(w.notes).toEqual([]);
      expect(w.cached).toBe(false);
    });
  }

  it("llama.cpp: the per-slot n_ctx, not the trained maximum of /v1/models", async () => {
    const s = await start(flavourRoutes("llamacpp", 3072));
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    expect(w).toMatchObject({ tokens: 3072, flavour: "llamacpp" });
  });

  it("Ollama not loaded: assumes the default load window, capped by the trained maximum, and says so", async () => {
    const s = await start(flavourRoutes("ollama-not-loaded", 32_768));
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    expect(w).toMatchObject({ tokens: OLLAMA_DEFAULT_WINDOW, source: "Ollama default", flavour: "ollama" });
    expect(w.detail).toContain("model not loaded");
    expect(w.detail).toContain("trained maximum 32768");
    const show = s.requests.find((r) => r.path === "/api/show");
    expect(show?.body).toEqual({ model: "qwen2.5" });
  });

  it("Ollama not loaded with num_ctx in its Modelfile: that is the window it will load with", async () => {
    const routes = flavourRoutes("ollama-not-loaded", 32_768);
    const show = routes["POST /api/show"]!;
    routes["POST /api/show"] = (req) => {
      const a = show(req) as { body: Record<string, unknown> };
      return { body: { ...a.body, parameters: 'num_ctx                        16384\nstop "<|im_end|>"' } };
    };
    const s = await start(routes);
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    expect(w).toMatchObject({ tokens: 16_384, source: "Ollama num_ctx" });
  });

  it("Ollama matches a model named without its :latest tag, and not another loaded model", async () => {
    const s = await start(flavourRoutes("ollama-loaded", 8192, "llama3.2"));
    const mine = await discoverContextWindow({
      backend: backend(s.url, { model: "llama3.2" }),
      stateDir: state,
    });
    expect(mine).toMatchObject({ tokens: 8192, source: "Ollama loaded" });
    const other = await discoverContextWindow({
      backend: backend(s.url, { model: "qwen2.5" }),
      stateDir: state,
    });
    // /api/show is not routed (404): the default window is assumed, not llama3.2's.
    expect(other).toMatchObject({ tokens: OLLAMA_DEFAULT_WINDOW, source: "Ollama default" });
  });

  it("LM Studio: max_context_length when the model is not loaded", async () => {
    const s = await start({
      "GET /api/v0/models": () => ({
        body: {
          object: "list",
          data: [
            { id: "qwen2.5", object: "model", type: "llm", state: "not-loaded", max_context_length: 32_768 },
          ],
        },
      }),
    });
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    expect(w).toMatchObject({ tokens: 32_768, source: "LM Studio max_context_length" });
  });

  it("probes the root without /v1 and the base with it, sending the token to the same origin", async () => {
    const s = await start(flavourRoutes("none", 0));
    await discoverContextWindow({ backend: backend(s.url), token: "tok-window-123456", stateDir: state });
    expect(discoveryPaths(s)).toEqual(["GET /api/ps", "GET /api/v0/models", "GET /props", "GET /v1/models"]);
    for (const r of s.requests) expect(r.headers.authorization).toBe("Bearer tok-window-123456");
  });
});

describe("backend.context_window", () => {
  it("overrides discovery: the server is not asked", async () => {
    const s = await start(flavourRoutes("vllm", 2048));
    const w = await discoverContextWindow({
      backend: backend(s.url, { context_window: 32_768 }),
      stateDir: state,
    });
    expect(w).toMatchObject({ tokens: 32_768, source: "configured" });
    expect(s.requests).toEqual([]);
  });
});

describe("cache", () => {
  const file = () => path.join(state, "context-window.json");

  it("a second process reads the window from the state cache without asking the server", async () => {
    const s = await start(flavourRoutes("vllm", 4096));
    await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    const asked = s.requests.length;
    expect(asked).toBeGreaterThan(0);
    expect(fs.statSync(file()).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(state).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    forgetDiscoveredWindows(); // as a new process would
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    expect(w).toMatchObject({ tokens: 4096, source: "vLLM max_model_len", cached: true });
    expect(s.requests.length).toBe(asked);
  });

  it("once per process: a second call does not ask again", async () => {
    const s = await start(flavourRoutes("llamacpp", 4096));
    await discoverContextWindow({ backend: backend(s.url) });
    const asked = s.requests.length;
    await discoverContextWindow({ backend: backend(s.url) });
    expect(s.requests.length).toBe(asked);
  });

  it("is per base URL and model", async () => {
    const s = await start(flavourRoutes("vllm", 4096));
    await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    forgetDiscoveredWindows();
    const other = await discoverContextWindow({
      backend: backend(s.url, { model: "other" }),
      stateDir: state,
    });
    expect(other.cached).toBe(false);
  });

  it("expires: an old entry is asked again", async () => {
    const s = await start(flavourRoutes("vllm", 4096));
    let t = 1_000_000;
    await discoverContextWindow({ backend: backend(s.url), stateDir: state, now: () => t });
    forgetDiscoveredWindows();
    t += 6 * 60 * 1000;
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state, now: () => t });
    expect(w.cached).toBe(false);
  });

  const corrupt: [string, string][] = [
    ["not JSON", "{not json"],
    ["another version", JSON.stringify({ v: 99, entries: {} })],
    ["a window that is not a number", "WINDOW_STRING"],
    ["an unknown source", "SOURCE_BAD"],
    ["empty", ""],
  ];
  for (const [name, text] of corrupt) {
    it(`a corrupt cache (${name}) is ignored and replaced`, async () => {
      const s = await start(flavourRoutes("vllm", 4096));
      const key = `chat ${s.url} qwen2.5`;
      const entry = (e: Record<string, unknown>) =>
        JSON.stringify({
          v: 1,
          entries: { [key]: { tokens: 999_999, source: "vLLM max_model_len", at: Date.now(), ...e } },
        });
      const content =
        text === "WINDOW_STRING"
          ? entry({ tokens: "a lot" })
          : text === "SOURCE_BAD"
            ? entry({ source: "rumour" })
            : text;
      fs.writeFileSync(file(), content);
      const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
      expect(w).toMatchObject({ tokens: 4096, cached: false });
      expect(JSON.parse(fs.readFileSync(file(), "utf8")).entries[key].tokens).toBe(4096);
    });
  }

  it("a state directory that cannot be written costs nothing but the cache", async () => {
    const s = await start(flavourRoutes("vllm", 4096));
    const blocked = path.join(state, "blocked");
    fs.writeFileSync(blocked, "a file where the directory should be");
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: blocked });
    expect(w.tokens).toBe(4096);
  });

  it("a server that does not answer at all is not cached as windowless", async () => {
    const s = await start({});
    const url = s.url;
    await s.close();
    server = undefined;
    const w = await discoverContextWindow({ backend: backend(url), stateDir: state });
    expect(w.tokens).toBeUndefined();
    expect(w.notes.join("\n")).toContain("ECONNREFUSED");
    expect(fs.existsSync(file())).toBe(false);
  });

  it("an assumed Ollama window is not cached: the next run sees the loaded one", async () => {
    const s = await start(flavourRoutes("ollama-not-loaded", 32_768));
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    expect(w.source).toBe("Ollama default");
    expect(fs.existsSync(file())).toBe(false);
  });

  it("LM Studio's maximum for a model not loaded yet is not cached either", async () => {
    const s = await start({
      "GET /api/v0/models": () => ({
        body: { object: "list", data: [{ id: "qwen2.5", state: "not-loaded", max_context_length: 32_768 }] },
      }),
    });
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    expect(w.source).toBe("LM Studio max_context_length");
    expect(fs.existsSync(file())).toBe(false);
  });
});

describe("slow and bad answers fall back with a note", () => {
  const cases: [string, ScriptedServerOptions["routes"], string][] = [
    [
      "a hanging /props",
      { "GET /props": () => ({ hang: true }) },
      "GET http://127.0.0.1:PORT/props: no answer within 300 ms",
    ],
    [
      "/props that is not JSON",
      { "GET /props": () => ({ body: "<html>busy</html>" }) },
      "/props: answered something that is not JSON",
    ],
    [
      "a vLLM max_model_len that is not a window",
      { "GET /v1/models": () => ({ body: { data: [{ id: "qwen2.5", max_model_len: "huge" }] } }) },
      'max_model_len "huge" is not a window',
    ],
    [
      "an n_ctx of -1",
      { "GET /props": () => ({ body: { default_generation_settings: { n_ctx: -1 } } }) },
      "n_ctx -1 is not a window",
    ],
    [
      "a hanging /api/show",
      { "GET /api/ps": () => ({ body: { models: [] } }), "POST /api/show": () => ({ hang: true }) },
      "POST http://127.0.0.1:PORT/api/show: no answer within 300 ms",
    ],
    [
      "an Ollama context_length of 0",
      { "GET /api/ps": () => ({ body: { models: [{ name: "qwen2.5:latest", context_length: 0 }] } }) },
      "context_length 0 is not a window",
    ],
  ];
  for (const [name, routes, note] of cases) {
    it(name, async () => {
      const s = await start(routes);
      const w: ContextWindow = await discoverContextWindow({
        backend: backend(s.url),
        stateDir: state,
        timeoutMs: 300,
      });
      expect(w.tokens).toBeUndefined();
      expect(w.source).toBe("unknown");
      const port = new URL(s.url).port;
      expect(w.notes.join("\n")).toContain(note.replace("PORT", port));
    });
  }

  it("garbage in an unrelated shape is simply not that flavour", async () => {
    const s = await start({
      "GET /api/ps": () => ({ body: { models: "none" } }),
      "GET /api/v0/models": () => ({ body: [1, 2, 3] }),
      "GET /props": () => ({ body: { default_generation_settings: "x" } }),
    });
    const w = await discoverContextWindow({ backend: backend(s.url), stateDir: state });
    expect(w).toMatchObject({ source: "unknown", notes: [] });
  });
});

describe("rootUrl", () => {
  const table: [string, string][] = [
    ["http://127.0.0.1:11434/v1", "http://127.0.0.1:11434"],
    ["http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434"],
    ["http://host:8080", "http://host:8080"],
    ["https://gw.example/llm/v1", "https://gw.example/llm"],
    ["http://host/v10", "http://host/v10"],
  ];
  for (const [base, root] of table) it(`${base} → ${root}`, () => expect(rootUrl(base)).toBe(root));
});
