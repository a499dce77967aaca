/**
 * The incremental step reader (docs/context.md "Streaming"): the answer is handed on only once the
 * step is known to be a final answer, decoded exactly, whatever the chunking; `settle`
 * completes or withdraws.
 */
import { describe, expect, it } from "vitest";
import { StepStreamReader } from "../../src/agent/stream-final.js";

function follow(chunks: string[], settleWith?: string | null) {
  const log: string[] = [];
  let answer = "";
  let thought = "";
  const r = new StepStreamReader({
    thought: (t) => {
      thought += t;
    },
    answer: (t) => {
      answer += t;
      log.push(`answer:${t}`);
    },
    withdrawn: (why) => log.push(`withdrawn:${why}`),
  });
  for (const c of chunks) r.push(c);
  const streamed = answer;
  if (settleWith !== undefined) r.settle(settleWith ?? undefined, "invalid");
  return { streamed, answer, thought, log };
}

/** Every split of `text` into two chunks, and one character at a time. */
function chunkings(text: string): string[][] {
  const chars = [...text];
  const out: string[][] = [chars];
  for (let i = 0; i <= chars.length; i++) out.push([chars.slice(0, i).join(""), chars.slice(i).join("")]);
  return out;
}

const ANSWERS = [
  "plain",
  'quote " and backslash \\ and /',
  "new\nline\ttab",
  "emoji 😀 and é",
  "\u0001 control",
  "\ud83d\ude00 pair",
];

describe("a final step", () => {
  for (const answer of ANSWERS) {
    const text = JSON.stringify({ thought: "t", action: "final", action_input: answer });
    it(`${JSON.stringify(answer)}: streamed text equals the answer for every chunking`, () => {
      for (const chunks of chunkings(text)) {
        const { streamed, answer: total, log } = follow(chunks, answer);
        expect(streamed).toBe(answer);
        expect(total).toBe(answer);
        expect(log.some((l) => l.startsWith("withdrawn"))).toBe(false);
      }
    });
  }

  it("\\u escapes written by the model (not by JSON.stringify) decode the same, split anywhere", () => {
    const text = '{"thought":"t","action":"final","action_input":"caf\\u00e9 \\ud83d\\ude00 \\"q\\""}';
    const expected = JSON.parse(text).action_input as string;
    for (const chunks of chunkings(text)) expect(follow(chunks, expected).streamed).toBe(expected);
  });

  it("a code fence around the object is fine", () => {
    expect(
      follow(['```json\n{"thought":"t","action":"fi', 'nal","action_input":"yes"}\n```'], "yes").streamed,
    ).toBe("yes");
  });

  it("nothing is handed on before the action is known to be final", () => {
    const r = follow(['{"thought":"t","action_input":"early text",', '"action":"final"}']);
    expect(r.log).toEqual(["answer:early text"]);
    const partial = follow(['{"thought":"t","action_input":"early text"']);
    expect(partial.streamed).toBe("");
  });

  it("nothing before the thought is complete (an invalid thought would make the step invalid)", () => {
    expect(follow(['{"action":"final","action_input":"abc"']).streamed).toBe("");
  });

  it("white space alone is not handed on (an empty answer is refused)", () => {
    expect(follow(['{"thought":"t","action":"final","action_input":"   ']).streamed).toBe("");
  });

  it("thought pieces arrive as they are decoded", () => {
    expect(follow(['{"thought":"look', ' at \\"x\\"","action":"glob"']).thought).toBe('look at "x"');
  });
});

describe("settle", () => {
  it("a non-final step hands nothing on", () => {
    const text = JSON.stringify({ thought: "t", action: "glob", action_input: "final answer-like text" });
    expect(follow([text], null).log).toEqual([]);
  });

  it("an invalid step after text was handed on withdraws it", () => {
    const r = follow(['{"thought":"t","action":"final","action_input":"partial'], null);
    expect(r.log).toEqual(["answer:partial", "withdrawn:invalid"]);
  });

  it("a repeated key stops the stream; settle completes a prefix or withdraws", () => {
    const head = '{"thought":"t","action":"final","action_input":"one"';
    const tail = ',"action_input":"two"}';
    // JSON.parse keeps the last value: "one" already handed on is not a prefix of "two".
    expect(follow([head, tail], "two").log).toEqual(["answer:one", "withdrawn:invalid"]);
    // Seen in one piece, the repeat stops the stream before anything is handed on.
    expect(follow([head + tail], "two").log).toEqual(["answer:two"]);
  });

  it("an answer given as an object (re-serialised) is handed on whole at settle", () => {
    const r = follow(['{"thought":"t","action":"final","action_input":{"a":1}}'], '{"a":1}');
    expect(r.log).toEqual(['answer:{"a":1}']);
  });
});

describe("partial: a step cut off where it stands (a reply the person interrupted)", () => {
  const partialOf = (text: string) => {
    const r = new StepStreamReader({ thought() {}, answer() {}, withdrawn() {} });
    r.push(text);
    return r.partial();
  };

  it.each([
    ['{"thought":"reading the fi', { thought: "reading the fi" }],
    ['{"thought":"done","action":"bash","action_input":"ls -', { thought: "done", action: "bash" }],
    ['{"thought":"t","action":"final"', { thought: "t", action: "final", answer: "" }],
    [
      '{"thought":"t","action":"final","action_input":"half \\u00e9 of',
      { thought: "t", action: "final", answer: "half é of" },
    ],
    [
      '{"thought":"t","action":"final","action_input":"whole"}',
      { thought: "t", action: "final", answer: "whole" },
    ],
    // An object as the answer is not a final answer's text.
    ['{"thought":"t","action":"final","action_input":{"a":', { thought: "t", action: "final" }],
    // The action known before the thought closed: no answer is handed on (as while streaming).
    ['{"action":"final","action_input":"early","thought":"la', { thought: "la", action: "final" }],
  ])("%s", (text, expected) => {
    expect(partialOf(text)).toEqual(expected);
  });
});
