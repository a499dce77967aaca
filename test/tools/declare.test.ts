/** One input declaration per tool gives the type, the validation, the prompt shape and a schema (issue 10). */
import { describe, expect, expectTypeOf, it } from "vitest";
import { buildSystemPrompt } from "../../src/agent/prompt.js";
import { declareInput, type InputOf, optInt, optObj, optStr, str } from "../../src/tools/declare.js";
import { TOOLS } from "../../src/tools/registry.js";

const DECL = declareInput("demo", {
  path: str('"..."', { example: '"a.txt"' }),
  note: optStr('"..."', { nonEmpty: false }),
  limit: optInt(1, "10"),
});

describe("declareInput", () => {
  it("gives the TypeScript type", () => {
    expectTypeOf<InputOf<typeof DECL.fields>>().toEqualTypeOf<
      { path: string } & { note?: string; limit?: number }
    >();
  });

  it("gives the prompt shape, the example and a strict JSON schema", () => {
    expect(DECL.inputShape).toBe('{"path": "...", "note": "...", "limit": 10}');
    expect(DECL.example).toBe('{"path": "a.txt"}');
    expect(DECL.schema).toEqual({
      type: "object",
      properties: {
        path: { type: "string", minLength: 1 },
        note: { type: "string" },
        limit: { type: "integer", minimum: 1 },
      },
      required: ["path"],
      additionalProperties: false,
    });
  });

  it.each([
    ['{"path":"a","limit":3}', { ok: true, value: { path: "a", limit: 3 } }],
    ['{"path":"a","note":""}', { ok: true, value: { path: "a", note: "" } }],
    ["{}", { ok: false, error: 'demo: "path" is required' }],
    ['{"path":"  "}', { ok: false, error: 'demo: "path" must be a non-empty string' }],
    ['{"path":"a","limit":0}', { ok: false, error: 'demo: "limit" must be >= 1, got 0' }],
    [
      '{"path":"a","limit":1.5}',
      { ok: false, error: 'demo: "limit" must be an integer, got the number 1.5' },
    ],
    ['{"path":"a","x":1}', { ok: false, error: 'demo: unknown field "x"; allowed: path, note, limit' }],
    [
      "[]",
      {
        ok: false,
        error: 'demo: action_input must be a JSON object such as {"path": "a.txt"}; got an array',
      },
    ],
  ])("parse(%s)", (raw, want) => {
    expect(DECL.parse(raw)).toEqual(want);
  });

  it("an optional object field: null counts as absent, anything else must be an object", () => {
    const d = declareInput("obj", { name: str(), args: optObj() });
    expect(d.inputShape).toBe('{"name": "...", "args": {...}}');
    expect(d.parse('{"name":"a","args":null}')).toEqual({ ok: true, value: { name: "a" } });
    expect(d.parse('{"name":"a","args":{"q":1}}')).toEqual({
      ok: true,
      value: { name: "a", args: { q: 1 } },
    });
    expect(d.parse('{"name":"a","args":[1]}')).toEqual({
      ok: false,
      error: 'obj: "args" must be a JSON object, got an array',
    });
  });

  it("refine adds checks the field list cannot say, with their own corrections", () => {
    const d = declareInput("pair", { a: str(), b: str() }, (i) =>
      i.a === i.b
        ? { ok: false, error: 'pair: "a" and "b" must differ' }
        : { ok: true, value: `${i.a}-${i.b}` },
    );
    expect(d.parse('{"a":"x","b":"x"}')).toEqual({ ok: false, error: 'pair: "a" and "b" must differ' });
    expect(d.parse('{"a":"x","b":"y"}')).toEqual({ ok: true, value: "x-y" });
  });
});

describe("the prompt shows each tool's declared shape", () => {
  it("file tools' action_input lines are their declarations", () => {
    const prompt = buildSystemPrompt({ tools: TOOLS, mode: "guarded", cwd: "/p" });
    expect(prompt).toContain("- file_read: Read a text file");
    expect(prompt).toContain('action_input: {"path": "...", "offset": 1, "limit": 200}');
    expect(prompt).toContain(
      'action_input: {"path": "...", "old": "exact unique text", "new": "replacement text"}',
    );
    expect(prompt).toContain(
      "Prefer the structured tools (file_read, file_edit, grep, glob, outline, http_request) over bash.",
    );
    expect(prompt).toContain("Calls may use: file_read, grep, glob, outline, http_request");
  });
});
