/**
 * MCP tools described to the model (docs/mcp.md "MCP servers"): compact schemas, the per-tool and
 * total byte budgets (a clipped description says so), the argument check that names the
 * field, and the cache key that follows the configuration but never holds a secret.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/config/schema.js";
import { mcpPromptSection } from "../../src/mcp/prompt.js";
import { readToolsCache, toolsCacheKey, toolsCachePath, writeToolsCache } from "../../src/mcp/tools-cache.js";
import {
  checkArgs,
  compactSchema,
  DESCRIPTION_CLIPPED,
  MCP_TOOL_PROMPT_MAX_BYTES,
  MCP_TOOLS_PROMPT_MAX_BYTES,
  type McpToolInfo,
  toolLine,
} from "../../src/mcp/tools-info.js";

const READ: McpToolInfo = {
  name: "read",
  description: "Read a file.",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string" },
      tail: { type: "integer" },
      mode: { enum: ["text", "bytes"] },
      tags: { type: "array", items: { type: "string" } },
    },
    required: ["path"],
    additionalProperties: false,
  },
};

describe("compact schema", () => {
  it("names, types, optional marked", () => {
    expect(compactSchema(READ.inputSchema)).toBe(
      '{path: string, tail?: integer, mode?: "text"|"bytes", tags?: string[]}',
    );
    expect(compactSchema({})).toBe("{}");
  });
});

describe("budgets", () => {
  it("a long description is clipped within the per-tool budget, and says so", () => {
    const line = toolLine({ ...READ, description: "word ".repeat(500) });
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(MCP_TOOL_PROMPT_MAX_BYTES);
    expect(line.endsWith(DESCRIPTION_CLIPPED)).toBe(true);
    expect(toolLine(READ)).toBe(`  - read args ${compactSchema(READ.inputSchema)}: Read a file.`);
  });
  it("past the total budget, tools are named only, and the prompt says why", () => {
    const tools = Array.from({ length: 40 }, (_, i) => ({
      ...READ,
      name: `t${i}`,
      description: "d ".repeat(200),
    }));
    const section = mcpPromptSection(
      [{ name: "s", transport: "stdio", allowed_tools: tools.map((t) => t.name) }],
      new Map([["s", tools]]),
    );
    const toolBytes = section
      .split("\n")
      .filter((l) => l.startsWith("  - t"))
      .reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    expect(toolBytes).toBeLessThanOrEqual(MCP_TOOLS_PROMPT_MAX_BYTES);
    expect(section).toMatch(/also allowed \(descriptions left out: prompt budget\): .*t39/);
  });
});

describe("arguments checked against the input schema", () => {
  it.each([
    [{}, /args\.path is required \(string\)/],
    [{ path: 3 }, /args\.path must be string, got number/],
    [{ path: "a", tail: 1.5 }, /args\.tail must be integer/],
    [{ path: "a", mode: "lines" }, /args\.mode must be one of "text"\|"bytes"/],
    [
      { path: "a", file: "b" },
      /args\.file is not a parameter of read \(parameters: path, tail, mode, tags\)/,
    ],
  ])("%j", (args, message) => {
    expect(checkArgs(READ, args as Record<string, unknown>).join("; ")).toMatch(message);
  });
  it("valid arguments pass", () => {
    expect(checkArgs(READ, { path: "a", tail: 2, mode: "text", tags: ["x"] })).toEqual([]);
  });
});

describe("the tools/list cache", () => {
  const server = (over: Partial<McpServerConfig> = {}): McpServerConfig => ({
    name: "fs",
    transport: "stdio",
    command: "node",
    args: ["server.js"],
    env: [],
    headers: [],
    allowed_tools: ["read"],
    ...over,
  });
  it("the key follows the configuration, not allowed_tools, and never a secret value", () => {
    const base = toolsCacheKey(server());
    expect(toolsCacheKey(server({ allowed_tools: ["other"] }))).toBe(base);
    expect(toolsCacheKey(server({ args: ["other.js"] }))).not.toBe(base);
    expect(toolsCacheKey(server({ env: [{ name: "A", value: "x" }] }))).not.toBe(
      toolsCacheKey(server({ env: [{ name: "A", value: "y" }] })),
    );
    expect(toolsCacheKey(server({ env: [{ name: "A", value: "s1", secret: true }] }))).toBe(
      toolsCacheKey(server({ env: [{ name: "A", value: "s2", secret: true }] })),
    );
  });
  it("written and read back; a symlink in its place is ignored", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-mcp-cache-"));
    writeToolsCache(dir, server(), [READ]);
    expect(readToolsCache(dir, server())).toEqual([READ]);
    const file = toolsCachePath(dir, server());
    fs.renameSync(file, `${file}.real`);
    fs.symlinkSync(`${file}.real`, file);
    expect(readToolsCache(dir, server())).toBeUndefined();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
