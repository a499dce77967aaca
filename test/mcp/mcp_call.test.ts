import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpPool, type McpPool } from "../../src/mcp/pool.js";
import { mcpCallTool } from "../../src/tools/mcp_call.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";
import { everythingStdio, pidsIn, tempDir } from "./helpers.js";

describe("mcp_call input", () => {
  it.each([
    [
      '{"server":"demo","tool":"lookup","args":{"q":"x"}}',
      { server: "demo", tool: "lookup", args: { q: "x" } },
    ],
    ['{"server":"demo","tool":"lookup"}', { server: "demo", tool: "lookup", args: {} }],
    ['{"server":" demo ","tool":"lookup","args":null}', { server: "demo", tool: "lookup", args: {} }],
  ])("accepts %s", (raw, value) => {
    expect(mcpCallTool.parse(raw)).toEqual({ ok: true, value });
  });

  it.each([
    ["not JSON", "demo lookup", /must be a JSON object/],
    ["an array", "[]", /must be a JSON object/],
    // The declared-input messages every tool shares.
    ["no server", '{"tool":"t"}', /^mcp_call: "server" is required$/],
    ["empty server", '{"server":"","tool":"t"}', /^mcp_call: "server" must be a non-empty string$/],
    ["no tool", '{"server":"s"}', /^mcp_call: "tool" is required$/],
    ["tool not a string", '{"server":"s","tool":3}', /^mcp_call: "tool" must be a string, got the number 3$/],
    [
      "args an array",
      '{"server":"s","tool":"t","args":[1]}',
      /^mcp_call: "args" must be a JSON object, got an array$/,
    ],
    ["args a string", '{"server":"s","tool":"t","args":"q=1"}', /"args" must be a JSON object, got a string/],
    [
      "arguments instead of args",
      '{"server":"s","tool":"t","arguments":{}}',
      /^mcp_call: unknown field "arguments"; allowed: server, tool, args$/,
    ],
  ])("rejects %s", (_what, raw, message) => {
    const r = mcpCallTool.parse(raw);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(message);
  });

  it("declares exec with its MCP target for the gate", () => {
    expect(mcpCallTool.effects({ server: "demo", tool: "lookup", args: {} })).toEqual({
      capability: "exec",
      mcp: { server: "demo", tool: "lookup" },
    });
  });
});

describe("mcp_call run", () => {
  let dir: string;
  let marker: string;
  let pool: McpPool;
  beforeAll(() => {
    dir = tempDir();
    marker = path.join(dir, "spawned.txt");
    pool = createMcpPool([everythingStdio("ev", marker, ["echo"])], { env: process.env, timeoutMs: 20_000 });
  });
  afterAll(async () => {
    await pool.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("returns the rendered result as the observation", async () => {
    const ctx = makeToolContext({ services: { mcp: pool } });
    const out = await runTool(
      mcpCallTool,
      { server: "ev", tool: "echo", args: { message: "via tool" } },
      ctx,
    );
    expect(out).toBe("Echo: via tool");
  });

  it("turns errors into observations starting with `mcp_call error:`", async () => {
    const ctx = makeToolContext({ services: { mcp: pool } });
    const denied = await runTool(mcpCallTool, { server: "ev", tool: "get-env", args: {} }, ctx);
    expect(denied).toMatch(/^mcp_call error: tool "get-env" is not in allowed_tools/);
    const failed = await runTool(mcpCallTool, { server: "ev", tool: "echo", args: {} }, ctx);
    expect(failed).toMatch(/^mcp_call error: .*Input validation error/);
    expect(pidsIn(marker)).toHaveLength(1);
  });

  it("without an MCP service says so", async () => {
    const out = await runTool(mcpCallTool, { server: "ev", tool: "echo", args: {} }, makeToolContext());
    expect(out).toBe("mcp_call error: no MCP servers are configured for this run");
  });
});
