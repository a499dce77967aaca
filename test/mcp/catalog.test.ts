/**
 * Tool lists that stay true (docs/mcp.md "Tool lists that stay true"), with the real pool and a
 * fixture server built on the official SDK whose list changes while it runs: the list is read
 * again on notifications/tools/list_changed, compared on connect with the cached one, and read
 * again once older than MCP_TOOLS_MAX_AGE_MS; a call is checked against the newest schema and,
 * when refused, never reaches the server.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/config/schema.js";
import { createMcpCatalog, MCP_TOOLS_MAX_AGE_MS, type McpCatalog } from "../../src/mcp/catalog.js";
import { createMcpPool, type McpPool } from "../../src/mcp/pool.js";
import { readToolsCache, writeToolsCache } from "../../src/mcp/tools-cache.js";
import { FIXTURES, server, spawnsIn, tempDir } from "./helpers.js";

const CALL_MS = 20_000;
let dir: string;
let pool: McpPool | undefined;

afterEach(async () => {
  await pool?.close();
  pool = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

function changing(): McpServerConfig {
  dir = tempDir();
  return server({
    name: "live",
    command: process.execPath,
    args: [path.join(FIXTURES, "changing-server.mjs")],
    env: [
      { name: "CALLS", value: path.join(dir, "calls.jsonl") },
      { name: "STATE", value: path.join(dir, "state") },
      { name: "MARKER", value: path.join(dir, "spawned") },
    ],
    allowed_tools: ["grow", "weather"],
  });
}

function calls(): { name: string; arguments?: unknown }[] {
  const file = path.join(dir, "calls.jsonl");
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { name: string });
}

/** The real pool wired to a catalog the way a session wires them. */
function wired(s: McpServerConfig, now?: () => number): { catalog: McpCatalog; said: string[] } {
  const said: string[] = [];
  let catalog: McpCatalog | undefined;
  pool = createMcpPool([s], {
    env: process.env,
    timeoutMs: CALL_MS,
    onToolsStale: (name, why) => catalog?.stale(name, why),
    checkCall: async (name, tool, args) => catalog?.checkCall(name, tool, args),
  });
  catalog = createMcpCatalog({
    servers: [s],
    lister: pool,
    stateDir: path.join(dir, "state-dir"),
    say: (m) => said.push(m),
    ...(now ? { now } : {}),
  });
  return { catalog, said };
}

const names = (c: McpCatalog) => (c.tools.get("live") ?? []).map((t) => t.name);

describe("the list is read again when the server says it changed", () => {
  it("notifications/tools/list_changed: the new tool is listed before the next request", async () => {
    const s = changing();
    const { catalog, said } = wired(s);
    await catalog.load();
    expect(names(catalog)).toEqual(["grow"]);
    const v = catalog.version();
    expect(await pool!.call("live", "grow", {})).toEqual({ ok: true, value: "the weather plugin is loaded" });
    await catalog.settle();
    expect(names(catalog)).toEqual(["grow", "weather"]);
    expect(catalog.version()).toBe(v + 1);
    expect(said).toContain(
      "tools of live changed (notifications/tools/list_changed): added weather; the next request describes the new list",
    );
    // The cache follows, so the next run starts from the new list.
    expect(readToolsCache(path.join(dir, "state-dir"), s)?.tools.map((t) => t.name)).toEqual([
      "grow",
      "weather",
    ]);
  });

  it("the new tool's arguments are checked against its new schema, and a refused call is not sent", async () => {
    const { catalog } = wired(changing());
    await catalog.load();
    expect((await pool!.call("live", "grow", {})).ok).toBe(true);
    // No settle in between: the call itself waits for the re-list under way.
    const bad = await pool!.call("live", "weather", { city: 5 });
    expect(bad).toEqual({
      ok: false,
      error:
        'MCP server "live" tool "weather": the arguments do not fit the input schema live lists for weather now: /city: must be string, got integer; not sent',
    });
    expect(await pool!.call("live", "weather", { city: "Oslo" })).toEqual({
      ok: true,
      value: "sunny in Oslo",
    });
    expect(calls().map((c) => c.name)).toEqual(["grow", "weather"]);
    expect(calls()[1]!.arguments).toEqual({ city: "Oslo" });
  });
});

describe("the cached list is compared on connect", () => {
  it("a server that changed since the cache was written: its first connection replaces the list", async () => {
    const s = changing();
    // An earlier run cached the list [grow]; since then the server grew.
    fs.writeFileSync(path.join(dir, "state"), "grown\n");
    const stateDir = path.join(dir, "state-dir");
    writeToolsCache(stateDir, s, [
      { name: "grow", description: "Loads the weather plugin.", inputSchema: {} },
    ]);
    const { catalog, said } = wired(s);
    await catalog.load();
    expect(names(catalog)).toEqual(["grow"]);
    expect(spawnsIn(path.join(dir, "spawned"))).toBe(0);
    expect(said[0]).toMatch(/^tools of live described from the cache \(1 listed 0 min ago\)/);
    // The first call connects; the list is read again on that connection.
    expect(await pool!.call("live", "grow", {})).toEqual({ ok: true, value: "the weather plugin is loaded" });
    await catalog.settle();
    expect(names(catalog)).toEqual(["grow", "weather"]);
    expect(said.join("\n")).toMatch(
      /tools of live changed \(compared on connect\): added weather; changed grow/,
    );
  });
});

describe("a list older than MCP_TOOLS_MAX_AGE_MS is read again", () => {
  it("a stale cache is listed at the start", async () => {
    const s = changing();
    const stateDir = path.join(dir, "state-dir");
    writeToolsCache(
      stateDir,
      s,
      [{ name: "old", description: "", inputSchema: {} }],
      Date.now() - MCP_TOOLS_MAX_AGE_MS - 1,
    );
    const { catalog, said } = wired(s);
    await catalog.load();
    expect(names(catalog)).toEqual(["grow"]);
    expect(said).toContain(
      "tools of live changed (older than 10 min): added grow; removed old; the next request describes the new list",
    );
  });

  it("during a long session: before a request, once the list has aged", async () => {
    let clock = Date.now();
    const { catalog, said } = wired(changing(), () => clock);
    await catalog.load();
    await catalog.settle();
    expect(said).toEqual(["listed 1 tools of live (cached for later runs)"]);
    clock += MCP_TOOLS_MAX_AGE_MS;
    await catalog.settle();
    expect(said.at(-1)).toBe("tools of live listed again (older than 10 min): unchanged");
    // Read again once, not at every request.
    await catalog.settle();
    expect(said).toHaveLength(2);
  });
});
