/** One input declaration per tool gives the type, the validation, the prompt shape and a schema. */
import { describe, expect, expectTypeOf, it } from "vitest";
import { buildSystemPrompt } from "../../src/agent/prompt.js";
import { INPUT as BASH } from "../../src/tools/bash.js";
import {
  type CallSpec,
  calls,
  declareInput,
  declareText,
  type InputOf,
  oneOf,
  optInt,
  optMap,
  optObj,
  optStr,
  str,
  strOr,
} from "../../src/tools/declare.js";
import { INPUT as FINAL } from "../../src/tools/final.js";
import { INPUT as HTTP } from "../../src/tools/http_request.js";
import { INPUT as PARALLEL } from "../../src/tools/parallel.js";
import { TOOLS } from "../../src/tools/registry.js";
import { INPUT as SKILL } from "../../src/tools/skill.js";

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

describe("plain-text input (bash, final)", () => {
  const T = declareText("say", { shape: "some text", example: "hello", nonEmpty: "text" });

  it("gives the shape, the example and a string schema", () => {
    expect(T.inputShape).toBe("some text");
    expect(T.example).toBe("hello");
    expect(T.schema).toEqual({ type: "string", minLength: 1 });
    expect(declareText("x", { shape: "s", example: "e" }).schema).toEqual({ type: "string" });
  });

  it.each([
    ["hello", { ok: true, value: "hello" }],
    ['{"not":"parsed"}', { ok: true, value: '{"not":"parsed"}' }],
    ["", { ok: false, error: "say: the text must not be empty" }],
    [" \n\t", { ok: false, error: "say: the text must not be empty" }],
  ])("parse(%j)", (raw, want) => {
    expect(T.parse(raw)).toEqual(want);
  });

  it("a non-string (a caller bypassing the types) is refused with the shape", () => {
    expect(T.parse(42 as unknown as string)).toEqual({
      ok: false,
      error: "say: action_input must be the some text",
    });
  });

  it("final refuses a blank answer; bash leaves a blank command to the gate", () => {
    expect(FINAL.parse("  ")).toEqual({ ok: false, error: "final: the answer text must not be empty" });
    expect(FINAL.inputShape).toBe("answer text");
    expect(BASH.parse("   ")).toEqual({ ok: true, value: "   " });
    expect(BASH.inputShape).toBe("command string");
    expect(BASH.schema).toEqual({ type: "string" });
  });
});

describe("enum field", () => {
  const D = declareInput("e", {
    m: oneOf(["A", "B"] as const, { normalize: (s) => s.trim().toUpperCase() }),
  });

  it("types the value as the union and lists the values in shape and schema", () => {
    expectTypeOf<InputOf<typeof D.fields>["m"]>().toEqualTypeOf<"A" | "B">();
    expect(D.inputShape).toBe('{"m": "A|B"}');
    expect(D.schema).toEqual({
      type: "object",
      properties: { m: { type: "string", enum: ["A", "B"] } },
      required: ["m"],
      additionalProperties: false,
    });
  });

  it.each([
    ['{"m":"A"}', { ok: true, value: { m: "A" } }],
    ['{"m":" b "}', { ok: true, value: { m: "B" } }],
    ["{}", { ok: false, error: 'e: "m" is required; one of A, B' }],
    ['{"m":1}', { ok: false, error: 'e: "m" must be a string, got the number 1; one of A, B' }],
    ['{"m":null}', { ok: false, error: 'e: "m" must be a string, got null; one of A, B' }],
    ['{"m":"C"}', { ok: false, error: 'e: "m" must be one of A, B, got a string ("C")' }],
    ['{"m":"A","n":1}', { ok: false, error: 'e: unknown field "n"; allowed: m' }],
  ])("parse(%s)", (raw, want) => {
    expect(D.parse(raw)).toEqual(want);
  });

  it("without normalize the case must match", () => {
    const strict = declareInput("e", { m: oneOf(["A"] as const) });
    expect(strict.parse('{"m":"a"}')).toEqual({
      ok: false,
      error: 'e: "m" must be one of A, got a string ("a")',
    });
  });
});

describe("map field", () => {
  const D = declareInput("m", { h: optMap() });

  it("types, shapes and schemas an object of strings", () => {
    expectTypeOf<InputOf<typeof D.fields>["h"]>().toEqualTypeOf<Record<string, string> | undefined>();
    expect(D.inputShape).toBe('{"h": {"name": "value"}}');
    expect(D.schema).toMatchObject({
      properties: { h: { type: "object", additionalProperties: { type: "string" } } },
      required: [],
    });
  });

  it.each([
    ['{"h":{"a":"1","b":""}}', { ok: true, value: { h: { a: "1", b: "" } } }],
    ['{"h":null}', { ok: true, value: {} }],
    ["{}", { ok: true, value: {} }],
    [
      '{"h":["a"]}',
      { ok: false, error: 'm: "h" must be a JSON object of name to string value, got an array' },
    ],
    [
      '{"h":"a:1"}',
      { ok: false, error: 'm: "h" must be a JSON object of name to string value, got a string ("a:1")' },
    ],
    ['{"h":{"a":1}}', { ok: false, error: 'm: "h" entry "a" must be a string, got the number 1' }],
    ['{"h":{"a":{"b":"c"}}}', { ok: false, error: 'm: "h" entry "a" must be a string, got an object' }],
  ])("parse(%s)", (raw, want) => {
    expect(D.parse(raw)).toEqual(want);
  });
});

describe("string with a default", () => {
  const D = declareInput("d", { p: strOr("X.md") });

  it("is always present in the type, shows the default, and is optional in the schema", () => {
    expectTypeOf<InputOf<typeof D.fields>["p"]>().toEqualTypeOf<string>();
    expect(D.inputShape).toBe('{"p": "X.md"}');
    expect(D.schema).toMatchObject({ properties: { p: { type: "string" } }, required: [] });
  });

  it.each([
    ["{}", { ok: true, value: { p: "X.md" } }],
    ['{"p":null}', { ok: true, value: { p: "X.md" } }],
    ['{"p":"  "}', { ok: true, value: { p: "X.md" } }],
    ['{"p":"a/b.md"}', { ok: true, value: { p: "a/b.md" } }],
    ['{"p":3}', { ok: false, error: 'd: "p" must be a string, got the number 3' }],
    ['{"p":["a"]}', { ok: false, error: 'd: "p" must be a string, got an array' }],
    ['{"q":"a"}', { ok: false, error: 'd: unknown field "q"; allowed: p' }],
  ])("parse(%s)", (raw, want) => {
    expect(D.parse(raw)).toEqual(want);
  });

  it("a nullable optional string treats null as absent; a plain one does not", () => {
    const n = declareInput("n", { b: optStr('"..."', { nonEmpty: false, nullable: true }) });
    expect(n.parse('{"b":null}')).toEqual({ ok: true, value: {} });
    expect(n.parse('{"b":""}')).toEqual({ ok: true, value: { b: "" } });
    expect(n.parse('{"b":1}')).toEqual({ ok: false, error: 'n: "b" must be a string, got the number 1' });
    const plain = declareInput("n", { b: optStr() });
    expect(plain.parse('{"b":null}')).toEqual({ ok: false, error: 'n: "b" must be a string, got null' });
  });
});

describe("calls field", () => {
  const D = declareInput("fan", { calls: calls(2, "[...]", '[{"action": "a", "input": {}}]') });

  it("types the calls, uses the example, and bounds the array in the schema", () => {
    expectTypeOf<InputOf<typeof D.fields>["calls"]>().toEqualTypeOf<CallSpec[]>();
    expect(D.inputShape).toBe('{"calls": [...]}');
    expect(D.example).toBe('{"calls": [{"action": "a", "input": {}}]}');
    expect(D.schema).toMatchObject({
      properties: { calls: { type: "array", minItems: 1, maxItems: 2 } },
      required: ["calls"],
    });
  });

  it.each([
    [
      '{"calls":[{"action":"a","input":{"x":1}},{"action":"b","input":"t"}]}',
      {
        ok: true,
        value: {
          calls: [
            { action: "a", input: '{"x":1}' },
            { action: "b", input: "t" },
          ],
        },
      },
    ],
    ["{}", { ok: false, error: 'fan: "calls" is required' }],
    ['{"calls":{}}', { ok: false, error: 'fan: "calls" must be an array, got an object' }],
    ['{"calls":[]}', { ok: false, error: 'fan: "calls" must hold 1 to 2 calls, got 0' }],
    [
      '{"calls":[{"action":"a","input":""},{"action":"a","input":""},{"action":"a","input":""}]}',
      { ok: false, error: 'fan: "calls" must hold 1 to 2 calls, got 3' },
    ],
    [
      '{"calls":["a"]}',
      {
        ok: false,
        error:
          'fan: calls[0] must be an object like {"action": "file_read", "input": {...}}, got a string ("a")',
      },
    ],
    [
      '{"calls":[{"action":"a","input":"","why":1}]}',
      { ok: false, error: 'fan: calls[0] has unknown field(s) "why"; allowed: action, input' },
    ],
    [
      '{"calls":[{"action":"","input":""}]}',
      { ok: false, error: 'fan: calls[0]."action" must be a non-empty string' },
    ],
    [
      '{"calls":[{"action":"a","input":""},{"action":"b","input":null}]}',
      { ok: false, error: 'fan: calls[1]."input" must be a string or an object, got null' },
    ],
    [
      '{"calls":[{"action":"a","input":""}],"x":1}',
      { ok: false, error: 'fan: unknown field "x"; allowed: calls' },
    ],
    [
      '"calls"',
      { ok: false, error: expect.stringContaining("fan: action_input must be a JSON object such as") },
    ],
  ])("parse(%s)", (raw, want) => {
    expect(D.parse(raw)).toEqual(want);
  });
});

describe("every tool's input comes from one declaration", () => {
  it.each([
    ["bash", BASH],
    ["final", FINAL],
    ["http_request", HTTP],
    ["parallel", PARALLEL],
    ["skill", SKILL],
  ] as const)("%s: the registry's shape and parse are its declaration's", (name, decl) => {
    const tool = TOOLS.find((t) => t.name === name);
    expect(tool?.inputShape).toBe(decl.inputShape);
    expect(tool?.parse).toBe(decl.parse);
  });

  it("the prompt shapes of the five newly declared tools are unchanged", () => {
    expect(HTTP.inputShape).toBe(
      '{"method": "GET|POST|PUT|DELETE|HEAD|PATCH", "url": "https://...", "body": "optional text", ' +
        '"headers": {"optional-name": "value"}}',
    );
    expect(HTTP.example).toBe('{"method": "GET", "url": "https://..."}');
    expect(SKILL.inputShape).toBe('{"name": "...", "path": "SKILL.md"}');
    expect(PARALLEL.inputShape).toBe(
      '{"calls": [{"action": "file_read", "input": {"path": "..."}}, {"action": "grep", "input": {...}}]}',
    );
  });

  it("http_request refines the declared fields: URL, body per method, header rules", () => {
    expect(HTTP.parse('{"method":"get","url":" http://a.example ","body":null}')).toEqual({
      ok: true,
      value: { method: "GET", url: "http://a.example/", headers: {} },
    });
    expect(HTTP.parse('{"method":"GET","url":"x"}')).toEqual({
      ok: false,
      error: 'http_request: "url" is not an absolute URL: x',
    });
    expect(HTTP.parse('{"method":"GET","url":"http://a/","headers":{"HOST":"e"}}')).toEqual({
      ok: false,
      error: 'http_request: header "HOST" is set by Scoot and cannot be overridden',
    });
  });

  it("skill refines: path checks, name trimmed, default path", () => {
    expect(SKILL.parse('{"name":" demo "}')).toEqual({ ok: true, value: { name: "demo", path: "SKILL.md" } });
    expect(SKILL.parse('{"name":"demo","path":"../x"}')).toEqual({
      ok: false,
      error: 'skill: "path" must not contain `..` segments',
    });
    expect(SKILL.parse('{"name":"demo","path":"/etc/passwd"}')).toEqual({
      ok: false,
      error: 'skill: "path" must be relative to the skill directory, got absolute "/etc/passwd"',
    });
  });
});
