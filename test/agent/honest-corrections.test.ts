/**
 * Corrections that tell the truth (docs/context.md "Words are not calls"): a broken JSON reply is
 * named by the first defect a real JSON parser finds, at the line and column `JSON.parse` itself
 * reports; "never closes" and "cut off" only when the text really runs past its end (and "cut off
 * at the token limit" only when the server said so); a Gemma-style call that does not read is
 * named by its format, not by a JSON parser's "expected property name".
 */
import { describe, expect, it } from "vitest";
import { parseStep } from "../../src/agent/step.js";
import { jsonDefect } from "../../src/core/json-complaint.js";
import { enabledTools } from "../../src/tools/registry.js";

const TOOLS = enabledTools({ hasMcp: false, hasSkills: false });

/** Whether the parser finds nothing wrong with `text` yet: it parses, or only ended too early. */
function endedEarly(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch (e) {
    const m = (e as Error).message;
    const pos = /position (\d+)/.exec(m);
    if (pos) return Number(pos[1]) >= text.length;
    return /end of JSON input/.test(m);
  }
}

/**
 * Line and column of the first defect as the real parser sees it: the shortest prefix the parser
 * rejects for a reason other than ending early ends at it (Node 20's parser names some defects
 * without a position, so the position is found with the parser itself, never with Scoot's code).
 * Where the parser does report a position, it must be the same.
 */
function parserPosition(text: string): string {
  let at = 0;
  while (at < text.length && endedEarly(text.slice(0, at + 1))) at++;
  try {
    JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec((e as Error).message);
    if (pos) expect(Number(pos[1])).toBe(at);
  }
  const before = text.slice(0, at);
  return `line ${before.split("\n").length}, column ${at - before.lastIndexOf("\n")}`;
}

const BROKEN: [what: string, text: string][] = [
  [
    "an unescaped quote inside a string",
    '{"thought": "say "hi" now", "action": "final", "action_input": "x"}',
  ],
  ["a doubled opening brace", '{{"thought": "a", "action": "final", "action_input": "x"}}'],
  ["a missing comma between fields", '{"thought": "a"\n "action": "final", "action_input": "x"}'],
  ["a bare word as a value", '{"thought": "a", "action": final, "action_input": "x"}'],
  ["a stray token after a value", '{"thought": "a", "action": "final" x, "action_input": "y"}'],
  ["a key that is not quoted", '{"thought": "a", action: "final", "action_input": "y"}'],
  [
    "an unescaped quote that leaves the braces unbalanced",
    '{"thought": "a "}", "action": "final", "action_input": "y"}',
  ],
];

describe("a broken reply is named by the parser's first complaint, where the parser finds it", () => {
  it.each(BROKEN)("%s", (_what, text) => {
    const r = parseStep(text, TOOLS);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain(parserPosition(text));
    expect(r.error).not.toMatch(/never closes|cut off/);
  });

  it("an object that really runs past the end of the reply never closes", () => {
    const r = parseStep('{"thought": "a", "action": "final", "action_input": "half an ans', TOOLS);
    expect(!r.ok && r.error).toMatch(/never closes \(the reply ends inside it\)/);
  });

  it("jsonDefect says cut off exactly when the parser's complaint is at the end", () => {
    for (const [, text] of BROKEN) expect(jsonDefect(text)?.cutOff).toBe(false);
    for (const text of ['{"a": 1', '{"a": "b', "[1, 2", '{"a": {"b": 1}'])
      expect(jsonDefect(text)?.cutOff, text).toBe(true);
  });
});

describe("a call's arguments: cut off only at the token limit", () => {
  const calls = [{ name: "bash", arguments: '{"command": "echo $(touch MARK)"' }];

  it("arguments missing their brace are not valid JSON, at the end of them, and not 'cut off'", () => {
    const r = parseStep("", TOOLS, { calls });
    expect(!r.ok && r.error).toMatch(/not valid JSON: .* at the end of them \(line 1, column 33\)/);
    expect(!r.ok && r.error).not.toMatch(/cut off/);
  });

  it("the same arguments when the server stopped at its limit are cut off at the token limit", () => {
    const r = parseStep("", TOOLS, { calls, cutOff: "finish_reason length" });
    expect(!r.ok && r.error).toMatch(
      /cut off at the token limit \(the server reported finish_reason length\)/,
    );
  });

  it("an extra brace is named where the parser finds it", () => {
    const args = '{"command": "echo $(touch MARK)"}}';
    const r = parseStep("", TOOLS, { calls: [{ name: "bash", arguments: args }] });
    expect(!r.ok && r.error).toContain(parserPosition(args));
  });
});

describe("Gemma-style calls that do not read are named by their format", () => {
  it.each([
    [
      "FunctionGemma with a bare string",
      "<start_function_call>call:bash{command:ls -la}<end_function_call>",
      /FunctionGemma/,
    ],
    ["Gemma's call with the special tokens stripped", "call:bash{command:ls -la}", /Gemma call:name/],
    ["Gemma 4 cut inside a string", '<|tool_call>call:bash{command:<|"|>ls -la', /Gemma 4/],
    [
      "a tool_code block with a positional argument",
      '```tool_code\nbash("ls")\n```',
      /Python-style call.*positional argument/,
    ],
  ])("%s", (_what, text, format) => {
    const r = parseStep(text, TOOLS);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(format);
    expect(r.error).not.toMatch(/property name/);
    expect(r.error).toMatch(/nothing was run/);
  });
});
