/**
 * Validation that cannot stall (docs/mcp.md "MCP client", docs/commands.md "Answers in a schema"):
 * a large model-supplied array against a `uniqueItems` schema, a `$ref`/`anyOf` chain that doubles
 * at every level and a pattern with a large RE2 program each end within the tool deadline plus a
 * second (the bound: a 2 s deadline, so 3 s), through the real MCP call path (pool and
 * catalog, a stdio fixture server listing those schemas), through the step check (checkArgs) and
 * through the answer schema (`--output-schema`). Duplicates are still found, with their positions.
 */
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { compileAnswerSchema } from "../../src/agent/answer-schema.js";
import type { McpServerConfig } from "../../src/config/schema.js";
import { checkArgs } from "../../src/mcp/args-check.js";
import { createMcpCatalog, type McpCatalog } from "../../src/mcp/catalog.js";
import { createMcpPool, type McpPool } from "../../src/mcp/pool.js";
import { canonicalJson, firstDuplicate, withinBudget } from "../../src/mcp/schema-bounds.js";
import type { McpToolInfo } from "../../src/mcp/tools-info.js";
import { FIXTURES, server, tempDir } from "./helpers.js";

/** The tool deadline, and its bound: the deadline plus one second. */
const DEADLINE_MS = 2_000;
const BOUND_MS = DEADLINE_MS + 1_000;

/** Distinct small objects filling `bytes` of JSON: the worst case for a pairwise comparison. */
function distinctRecords(bytes: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let size = 2;
  for (let i = 0; size < bytes; i++) {
    const r = { id: i, ok: true };
    out.push(r);
    size += JSON.stringify(r).length + 1;
  }
  return out;
}
const RECORDS = distinctRecords(500_000);

function timed<T>(work: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}
async function timedAsync<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

/** An anyOf over two $refs to the next level, DEPTH levels deep: 2^DEPTH checks of one value. */
function doublingSchema(depth: number): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++)
    defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  defs[`a${depth}`] = { type: "string" };
  return { type: "object", $defs: defs, properties: { v: { $ref: "#/$defs/a0" } }, required: ["v"] };
}

const UNIQUE: McpToolInfo = {
  name: "put",
  description: "",
  inputSchema: {
    type: "object",
    properties: { items: { type: "array", uniqueItems: true, items: { type: "object" } } },
    required: ["items"],
  },
};

describe("checkArgs (the step check) ends in time whatever the schema", () => {
  it(`a 500 KB array of distinct objects against uniqueItems: valid, in under ${BOUND_MS} ms`, () => {
    expect(JSON.stringify({ items: RECORDS }).length).toBeGreaterThanOrEqual(500_000);
    const { value, ms } = timed(() => checkArgs(UNIQUE, { items: RECORDS }));
    expect(value).toEqual([]);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it("a duplicate is still a uniqueItems violation naming both positions, keys in any order", () => {
    const items = [...RECORDS, { ok: true, id: 7 }];
    const { value, ms } = timed(() => checkArgs(UNIQUE, { items }));
    expect(value).toEqual([
      `/items: must NOT have duplicate items (items ## 7 and ${RECORDS.length} are identical)`,
    ]);
    expect(ms).toBeLessThan(BOUND_MS);
    // Equal as JSON values: 1 and 1.0 are one number, arrays keep their order.
    expect(checkArgs(UNIQUE, { items: [{ a: [1, 2] }, { a: [2, 1] }] })).toEqual([]);
    expect(
      checkArgs(UNIQUE, {
        items: [
          { a: [1, 2], b: { c: null } },
          { b: { c: null }, a: [1, 2.0] },
        ],
      }),
    ).toEqual(["/items: must NOT have duplicate items (items ## 0 and 1 are identical)"]);
  });

  it("uniqueItems on nested arrays and on scalars is checked too", () => {
    const nested: McpToolInfo = {
      name: "n",
      description: "",
      inputSchema: {
        type: "object",
        properties: { rows: { type: "array", items: { type: "array", uniqueItems: true } } },
      },
    };
    expect(
      checkArgs(nested, {
        rows: [
          [1, 2],
          [3, "3", 3],
        ],
      }),
    ).toEqual(["/rows/1: must NOT have duplicate items (items ## 0 and 2 are identical)"]);
    expect(checkArgs(nested, { rows: [[1, "1", true, null, {}, []]] })).toEqual([]);
  });

  it("a $ref/anyOf chain that doubles at every level is left to the server, in time", () => {
    const deep: McpToolInfo = { name: "deep", description: "", inputSchema: doublingSchema(40) };
    const { value, ms } = timed(() => checkArgs(deep, { v: 1 }));
    expect(value).toEqual([]);
    expect(ms).toBeLessThan(BOUND_MS);
    // A shallow one is still checked.
    expect(checkArgs({ ...deep, inputSchema: doublingSchema(3) }, { v: 1 })).not.toEqual([]);
  });

  it("a pattern with a large RE2 program against a long string is left to the server, in time", () => {
    const match: McpToolInfo = {
      name: "match",
      description: "",
      inputSchema: {
        type: "object",
        properties: { s: { type: "string", pattern: "(a|b){1,1000}(a|c){1,1000}[cd]" } },
      },
    };
    const { value, ms } = timed(() => checkArgs(match, { s: "a".repeat(200_000) }));
    expect(value).toEqual([]);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(checkArgs(match, { s: "ab" })).toEqual([
      '/s: must match pattern "(a|b){1,1000}(a|c){1,1000}[cd]"',
    ]);
  });

  it("a schema that is slow to compile (one definition referenced 5000 times) is left to the server, in time", () => {
    const props: Record<string, unknown> = {};
    for (let i = 0; i < 150; i++) props[`p${i}`] = { type: "string", minLength: 1 };
    const many: McpToolInfo = {
      name: "many",
      description: "",
      inputSchema: {
        type: "object",
        $defs: { big: { type: "object", properties: props } },
        properties: { x: { anyOf: Array.from({ length: 5000 }, () => ({ $ref: "#/$defs/big" })) } },
      },
    };
    // Before: the refs were inlined and compiling this 120 KB schema ran Node out of memory.
    const { ms } = timed(() => checkArgs(many, { x: 1 }));
    expect(ms).toBeLessThan(BOUND_MS);
    // The shared Ajv instance still checks the next schema as always.
    expect(checkArgs(UNIQUE, { items: [{ a: 1 }, { a: 1 }] })).toEqual([
      "/items: must NOT have duplicate items (items ## 0 and 1 are identical)",
    ]);
    expect(checkArgs(UNIQUE, { items: 3 })).toEqual(["/items: must be array, got integer"]);
  });
});

describe("--output-schema: the final answer is checked in time, duplicates found", () => {
  const schema = {
    type: "object",
    properties: { items: { type: "array", uniqueItems: true } },
    required: ["items"],
  };
  it(`a 500 KB answer against uniqueItems is accepted in under ${BOUND_MS} ms`, () => {
    const compiled = compileAnswerSchema(schema, "the output schema s.json");
    if (!compiled.ok) throw new Error(compiled.error);
    const answer = JSON.stringify({ items: RECORDS });
    const { value, ms } = timed(() => compiled.value.check(answer));
    expect(value.ok).toBe(true);
    expect(ms).toBeLessThan(BOUND_MS);
  });
  it("a duplicate is a correction naming both positions", () => {
    const compiled = compileAnswerSchema(schema, "the output schema s.json");
    if (!compiled.ok) throw new Error(compiled.error);
    const answer = JSON.stringify({ items: [...RECORDS, RECORDS[42]] });
    const { value, ms } = timed(() => compiled.value.check(answer));
    expect(value).toEqual({
      ok: false,
      error: `the final answer does not fit the output schema s.json: /items: must NOT have duplicate items (items ## 42 and ${RECORDS.length} are identical)`,
    });
    expect(ms).toBeLessThan(BOUND_MS);
  });
  it("a schema whose check cannot end in time makes a correction that says so, in time", () => {
    const compiled = compileAnswerSchema(doublingSchema(40), "the output schema deep.json");
    if (!compiled.ok) throw new Error(compiled.error);
    const { value, ms } = timed(() => compiled.value.check('{"v": 1}'));
    expect(value.ok).toBe(false);
    expect(!value.ok && value.error).toMatch(
      /^the final answer could not be checked against the output schema deep\.json within \d+ ms/,
    );
    expect(ms).toBeLessThan(BOUND_MS);
    // The same shape a few levels deep is checked as always.
    const shallow = compileAnswerSchema(doublingSchema(3), "the output schema deep.json");
    if (!shallow.ok) throw new Error(shallow.error);
    expect(shallow.value.check('{"v": "s"}')).toMatchObject({ ok: true });
    expect(shallow.value.check('{"v": 1}')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/does not fit/),
    });
  });
});

describe("the real MCP call path (pool and catalog, a stdio server) keeps its deadline", () => {
  let dir: string;
  let pool: McpPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function costly(): McpServerConfig {
    dir = tempDir();
    return server({
      name: "costly",
      command: process.execPath,
      args: [path.join(FIXTURES, "costly-schema-server.mjs")],
      env: [{ name: "CALLS", value: path.join(dir, "calls.jsonl") }],
      allowed_tools: ["put", "deep", "match"],
    });
  }
  function sent(): { name: string; size: number }[] {
    const file = path.join(dir, "calls.jsonl");
    if (!fs.existsSync(file)) return [];
    return fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { name: string; size: number });
  }
  async function wired(): Promise<McpCatalog> {
    const s = costly();
    let catalog: McpCatalog | undefined;
    pool = createMcpPool([s], {
      env: process.env,
      timeoutMs: DEADLINE_MS,
      checkCall: async (name, tool, args) => catalog?.checkCall(name, tool, args),
    });
    catalog = createMcpCatalog({
      servers: [s],
      lister: pool,
      stateDir: path.join(dir, "state"),
      say: () => {},
    });
    await catalog.load();
    expect((catalog.tools.get("costly") ?? []).map((t) => t.name)).toEqual(["put", "deep", "match"]);
    return catalog;
  }

  it(`a 500 KB unique array is sent and answered within the ${DEADLINE_MS} ms deadline + 1 s`, async () => {
    await wired();
    const { value, ms } = await timedAsync(() => pool!.call("costly", "put", { items: RECORDS }));
    expect(value).toMatchObject({ ok: true, value: expect.stringMatching(/^put got \d+ bytes$/) });
    expect(ms).toBeLessThan(BOUND_MS);
    expect(sent().map((c) => c.name)).toEqual(["put"]);
  });

  it("a duplicate is refused with its positions, in time, and never sent", async () => {
    await wired();
    const items = [...RECORDS, RECORDS[3]];
    const { value, ms } = await timedAsync(() => pool!.call("costly", "put", { items }));
    expect(value).toEqual({
      ok: false,
      error: `MCP server "costly" tool "put": the arguments do not fit the input schema costly lists for put now: /items: must NOT have duplicate items (items ## 3 and ${RECORDS.length} are identical); not sent`,
    });
    expect(ms).toBeLessThan(BOUND_MS);
    expect(sent()).toEqual([]);
  });

  it("the doubling schema and the costly pattern: left to the server, answered in time", async () => {
    await wired();
    const deep = await timedAsync(() => pool!.call("costly", "deep", { v: 1 }));
    expect(deep.value).toMatchObject({ ok: true });
    expect(deep.ms).toBeLessThan(BOUND_MS);
    const match = await timedAsync(() => pool!.call("costly", "match", { s: "a".repeat(200_000) }));
    expect(match.value).toMatchObject({ ok: true });
    expect(match.ms).toBeLessThan(BOUND_MS);
    expect(sent().map((c) => c.name)).toEqual(["deep", "match"]);
  });
});

describe("the pieces", () => {
  it("canonicalJson sorts keys at every depth and survives nesting deeper than the stack", () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: "x" })).toBe('{"a":"x","b":[{"c":2,"d":1}]}');
    expect(canonicalJson([1, "1", null, true, [], {}])).toBe('[1,"1",null,true,[],{}]');
    const deep = JSON.parse(`${"[".repeat(200_000)}${"]".repeat(200_000)}`) as unknown;
    expect(canonicalJson(deep).length).toBe(400_000);
    expect(firstDuplicate([deep, 1, deep])).toEqual({ earlier: 0, later: 2 });
    expect(firstDuplicate([1, "1", [1], { a: 1 }])).toBeUndefined();
  });
  it("withinBudget returns the value, passes errors through and stops what runs too long", () => {
    expect(withinBudget(() => 42, 1000)).toEqual({ done: true, value: 42 });
    expect(() =>
      withinBudget(() => {
        throw new Error("boom");
      }, 1000),
    ).toThrow("boom");
    const started = performance.now();
    expect(
      withinBudget(() => {
        for (;;) {}
      }, 200),
    ).toEqual({ done: false });
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
    // Nested budgets: the inner one ends first, the outer one goes on.
    expect(withinBudget(() => withinBudget(() => "in", 100), 1000)).toEqual({
      done: true,
      value: { done: true, value: "in" },
    });
  });
});
