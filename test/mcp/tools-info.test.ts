/**
 * MCP tools described to the model (docs/mcp.md "MCP client"): whole schemas in their compact
 * shape (nested ones included, clipped with a note past their budget), the per-tool and total
 * byte budgets (a clipped description says so), the argument check against the whole schema
 * that names the JSON path, and the cache key that follows the configuration but never holds
 * a secret.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/config/schema.js";
import { checkArgs, MCP_SCHEMA_CHECK_MAX_BYTES } from "../../src/mcp/args-check.js";
import { mcpPromptSection } from "../../src/mcp/prompt.js";
import {
  boundedSchemaShape,
  MCP_TOOL_ARGS_MAX_BYTES,
  SCHEMA_CLIPPED,
  schemaShape,
} from "../../src/mcp/schema-shape.js";
import { readToolsCache, toolsCacheKey, toolsCachePath, writeToolsCache } from "../../src/mcp/tools-cache.js";
import {
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

/** The shape server-memory's create_entities has (draft-07, from zod), with a second level added. */
const ENTITIES: McpToolInfo = {
  name: "create_entities",
  description: "Create entities.",
  inputSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      entities: {
        type: "array",
        items: {
          type: "object",
          properties: {
            name: { type: "string", description: "The name" },
            observations: { type: "array", items: { type: "string" } },
            meta: {
              type: "object",
              properties: { source: { type: "string", pattern: "^[a-z]+$" }, weight: { type: "number" } },
              additionalProperties: false,
            },
          },
          required: ["name", "observations"],
          additionalProperties: false,
        },
      },
    },
    required: ["entities"],
  },
};

describe("schema shape", () => {
  it("names, types, optional marked", () => {
    expect(schemaShape(READ.inputSchema)).toBe(
      '{path: string, tail?: integer, mode?: "text"|"bytes", tags?: string[]}',
    );
    expect(schemaShape({})).toBe("{}");
  });
  it("nested objects and arrays in full, not `object[]`", () => {
    expect(schemaShape(ENTITIES.inputSchema)).toBe(
      "{entities: {name: string, observations: string[], meta?: {source?: string, weight?: number}}[]}",
    );
  });
  it("local $refs followed (a recursive one named), unions, nullables, maps and tuples", () => {
    const schema = {
      type: "object",
      properties: {
        tree: { $ref: "#/$defs/Node" },
        when: { anyOf: [{ type: "string" }, { type: "null" }] },
        labels: { type: "object", additionalProperties: { type: "integer" } },
        point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }] },
        either: { type: "array", items: { oneOf: [{ type: "string" }, { type: "integer" }] } },
        kind: { const: "leaf" },
      },
      required: ["tree"],
      $defs: {
        Node: {
          type: "object",
          properties: {
            value: { type: "string" },
            children: { type: "array", items: { $ref: "#/$defs/Node" } },
          },
          required: ["value"],
        },
      },
    };
    expect(schemaShape(schema)).toBe(
      '{tree: {value: string, children?: Node[]}, when?: string|null, labels?: {[key]: integer}, point?: [number, number], either?: (string|integer)[], kind?: "leaf"}',
    );
  });
  it("a shape past its budget is cut after a whole property and says so", () => {
    const props = Object.fromEntries(
      Array.from({ length: 120 }, (_, i) => [`property_${i}`, { type: "string" }]),
    );
    const shape = boundedSchemaShape({ type: "object", properties: props });
    expect(Buffer.byteLength(shape)).toBeLessThanOrEqual(MCP_TOOL_ARGS_MAX_BYTES);
    expect(shape.endsWith(`: string${SCHEMA_CLIPPED}`)).toBe(true);
    expect(shape).toContain("property_0?: string");
    expect(shape).not.toContain("property_119");
  });
});

describe("budgets", () => {
  it("a long description is clipped within the per-tool budget, and says so", () => {
    const line = toolLine({ ...READ, description: "word ".repeat(500) });
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(MCP_TOOL_PROMPT_MAX_BYTES);
    expect(line.endsWith(DESCRIPTION_CLIPPED)).toBe(true);
    expect(toolLine(READ)).toBe(`  - read args ${schemaShape(READ.inputSchema)}: Read a file.`);
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

describe("arguments checked against the whole input schema, naming the JSON path", () => {
  it.each([
    [{}, /^\/path: is required \(string\)$/],
    [{ path: 3 }, /^\/path: must be string, got integer$/],
    [{ path: "a", tail: 1.5 }, /^\/tail: must be integer, got number$/],
    [{ path: "a", mode: "lines" }, /^\/mode: must be one of "text"\|"bytes"$/],
    [{ path: "a", tags: ["x", 2] }, /^\/tags\/1: must be string, got integer$/],
    [{ path: "a", file: "b" }, /^\/file: is not a parameter of read \(parameters: path, tail, mode, tags\)$/],
  ])("%j", (args, message) => {
    expect(checkArgs(READ, args as Record<string, unknown>).join("; ")).toMatch(message);
  });
  it("valid arguments pass", () => {
    expect(checkArgs(READ, { path: "a", tail: 2, mode: "text", tags: ["x"] })).toEqual([]);
  });
  it.each([
    [{ entities: [{ name: 5, observations: [] }] }, ["/entities/0/name: must be string, got integer"]],
    [{ entities: [{ name: "a" }] }, ["/entities/0/observations: is required (array)"]],
    [
      { entities: [{ name: "a", observations: [], extra: 1 }] },
      ["/entities/0/extra: is not allowed here (properties: name, observations, meta)"],
    ],
    [
      { entities: [{ name: "a", observations: ["x", {}] }] },
      ["/entities/0/observations/1: must be string, got object"],
    ],
    [
      { entities: [{ name: "a", observations: [], meta: { source: "Web" } }] },
      ['/entities/0/meta/source: must match pattern "^[a-z]+$"'],
    ],
  ])("nested: %j", (args, problems) => {
    expect(checkArgs(ENTITIES, args)).toEqual(problems);
  });
  it("nested valid arguments pass", () => {
    expect(
      checkArgs(ENTITIES, { entities: [{ name: "a", observations: ["x"], meta: { source: "web" } }] }),
    ).toEqual([]);
  });
  it("a pattern that would backtrack for ever runs in linear time (RE2)", () => {
    const evil: McpToolInfo = {
      name: "evil",
      description: "",
      inputSchema: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } },
    };
    expect(checkArgs(evil, { s: `${"a".repeat(50_000)}!` })).toEqual(['/s: must match pattern "^(a+)+$"']);
  });
  it("what cannot be checked here is left to the server, never refused", () => {
    const remote: McpToolInfo = {
      name: "remote",
      description: "",
      inputSchema: { type: "object", properties: { a: { $ref: "https://example.com/schema.json" } } },
    };
    expect(checkArgs(remote, { a: 1 })).toEqual([]);
    const lookahead: McpToolInfo = {
      name: "look",
      description: "",
      inputSchema: { type: "object", properties: { s: { type: "string", pattern: "^(?=x)x$" } } },
    };
    expect(checkArgs(lookahead, { s: "y" })).toEqual([]);
    expect(checkArgs(lookahead, { s: 1 })).toEqual(["/s: must be string, got integer"]);
    const huge: McpToolInfo = {
      name: "huge",
      description: "",
      inputSchema: {
        type: "object",
        properties: { a: { type: "string", description: "x".repeat(MCP_SCHEMA_CHECK_MAX_BYTES) } },
      },
    };
    expect(checkArgs(huge, { a: 1 })).toEqual([]);
  });
  it("the 2020-12 draft by default: prefixItems are checked", () => {
    const tuple: McpToolInfo = {
      name: "tuple",
      description: "",
      inputSchema: {
        type: "object",
        properties: { p: { type: "array", prefixItems: [{ type: "number" }] } },
      },
    };
    expect(checkArgs(tuple, { p: ["x"] })).toEqual(["/p/0: must be number, got string"]);
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
    writeToolsCache(dir, server(), [READ], 1234);
    expect(readToolsCache(dir, server())).toEqual({ tools: [READ], listedAt: 1234 });
    const file = toolsCachePath(dir, server());
    fs.renameSync(file, `${file}.real`);
    fs.symlinkSync(`${file}.real`, file);
    expect(readToolsCache(dir, server())).toBeUndefined();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
