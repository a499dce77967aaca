import { describe, expect, it } from "vitest";
import { prepareCall } from "../../src/agent/call-prepare.js";
import { defaultConfig } from "../../src/config/schema.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import { CLIP } from "../../src/tools/clip.js";
import { finalTool } from "../../src/tools/final.js";
import { MAX_PARALLEL_CALLS, type ParallelInput, parallelTool } from "../../src/tools/parallel.js";
import { TOOLS, TOOLS_BY_NAME } from "../../src/tools/registry.js";
import type { ToolContext } from "../../src/tools/types.js";
import { makeToolContext, NO_TARGET } from "../helpers/tool-context.js";

function parse(raw: object): ParallelInput {
  const r = parallelTool.parse(JSON.stringify(raw));
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

const read = (p: string) => ({ action: "file_read", input: { path: p } });

describe("parallel validation fails the whole call before anything runs", () => {
  it("allows exactly the read-only actions (declared on each tool)", () => {
    expect(TOOLS.filter((t) => t.parallelChild).map((t) => t.name)).toEqual([
      "file_read",
      "grep",
      "glob",
      "outline",
      "http_request",
    ]);
    expect(MAX_PARALLEL_CALLS).toBe(4);
  });

  it.each([
    [{ calls: [] }, 'parallel: "calls" must hold 1 to 4 calls, got 0'],
    [
      { calls: [read("a"), read("b"), read("c"), read("d"), read("e")] },
      '"calls" must hold 1 to 4 calls, got 5',
    ],
    [{}, 'parallel: "calls" is required'],
    [{ calls: "file_read" }, '"calls" must be an array, got a string'],
    [{ calls: [read("a")], mode: "fast" }, 'parallel: unknown field "mode"'],
    [{ calls: [42] }, "calls[0] must be an object"],
    [{ calls: [{ action: "file_read" }] }, 'calls[0]."input" must be a string or an object, got undefined'],
    [
      { calls: [{ action: "file_read", input: 3 }] },
      'calls[0]."input" must be a string or an object, got the number 3',
    ],
    [{ calls: [{ action: "file_read", input: {}, why: "x" }] }, 'calls[0] has unknown field(s) "why"'],
    [{ calls: [read("a"), { action: "nope", input: "" }] }, 'calls[1]: "nope" is not allowed in parallel'],
    [{ calls: [{ action: "bash", input: "ls" }] }, 'calls[0]: "bash" is not allowed in parallel'],
    [{ calls: [{ action: "file_write", input: { path: "a", content: "" } }] }, '"file_write" is not allowed'],
    [{ calls: [{ action: "file_edit", input: {} }] }, '"file_edit" is not allowed'],
    [{ calls: [{ action: "skill", input: { name: "x" } }] }, '"skill" is not allowed'],
    [{ calls: [{ action: "recall", input: { query: "x" } }] }, '"recall" is not allowed'],
    [{ calls: [{ action: "mcp_call", input: {} }] }, '"mcp_call" is not allowed'],
    [{ calls: [{ action: "parallel", input: { calls: [read("a")] } }] }, '"parallel" is not allowed'],
    [{ calls: [{ action: "final", input: "done" }] }, '"final" is not allowed'],
    [
      { calls: [{ action: "http_request", input: { method: "POST", url: "http://x.test/", body: "{}" } }] },
      "calls[0]: http_request in parallel must use GET or HEAD, not POST",
    ],
    [
      { calls: [{ action: "http_request", input: { url: "http://x.test/" } }] },
      'calls[0]: http_request: "method" is required',
    ],
    [
      { calls: [{ action: "http_request", input: "GET http://x.test/" }] },
      "calls[0]: http_request: action_input must be a JSON object",
    ],
    [
      { calls: [read("a"), { action: "outline", input: { path: 5, bogus: 1 } }] },
      'calls[1]: outline: unknown field "bogus"; allowed: path',
    ],
    [
      { calls: [{ action: "outline", input: { path: 5 } }] },
      'calls[0]: outline: "path" must be a string, got the number 5',
    ],
    [
      { calls: [read("a"), { action: "grep", input: { pattern: "(", path: "a" } }] },
      "calls[1]: grep: invalid pattern",
    ],
    [
      { calls: [{ action: "glob", input: { pattern: "../x" } }] },
      'calls[0]: glob: the pattern may not contain ".."',
    ],
    [{ calls: [{ action: "file_read", input: "{}" }] }, 'calls[0]: file_read: "path" is required'],
  ])("%o", (input, message) => {
    // The whole call pipeline up to the gate: shape in parse, every child against its own tool.
    const settings = buildGateSettings(defaultConfig(), process.cwd(), { mode: "unrestricted" });
    const r = prepareCall("parallel", JSON.stringify(input), { settings, tools: TOOLS_BY_NAME });
    expect(r.kind).toBe("invalid");
    if (r.kind === "invalid") expect(r.error).toContain(message);
  });

  it("re-serialises object inputs and keeps string inputs as given", () => {
    expect(
      parse({
        calls: [
          { action: "file_read", input: { path: "README.md" } },
          { action: "grep", input: '{"pattern":"x","path":"a"}' },
          { action: "http_request", input: { method: "head", url: "http://x.test/" } },
          { action: "outline", input: { path: "a.ts" } },
        ],
      }),
    ).toEqual({
      calls: [
        { action: "file_read", input: '{"path":"README.md"}' },
        { action: "grep", input: '{"pattern":"x","path":"a"}' },
        { action: "http_request", input: '{"method":"head","url":"http://x.test/"}' },
        { action: "outline", input: '{"path":"a.ts"}' },
      ],
    });
  });

  it("is a read effect that declares its children, each judged on its own", () => {
    const input = parse({ calls: [read("a")] });
    expect(parallelTool.effects(input)).toEqual({ capability: "read" });
    expect(parallelTool.children?.(input)).toEqual([{ action: "file_read", input: '{"path":"a"}' }]);
  });
});

describe("parallel run", () => {
  it("runs every child through ctx.call concurrently and keeps call order", async () => {
    const called: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const call: ToolContext["call"] = async (action, input) => {
      called.push(`${action} ${input}`);
      // The pipeline answers a denied child itself, with this text.
      if (input.includes("secret")) return "denied: secret-like path";
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      // Later calls finish first, so order in the output must come from the call order.
      const delay = input.includes("a.txt") ? 60 : input.includes("b.txt") ? 30 : 5;
      await new Promise((r) => setTimeout(r, delay));
      inFlight--;
      if (input.includes("boom")) throw new Error("child exploded");
      return `${action} result for ${input}`;
    };
    const input = parse({
      calls: [
        read("a.txt"),
        read(".env.secret"),
        read("b.txt"),
        { action: "glob", input: { pattern: "boom/*" } },
      ],
    });
    const out = (await parallelTool.run(input, makeToolContext({ call }), NO_TARGET)).text;
    expect(out).toBe(
      [
        '[1] file_read {"path":"a.txt"}\nfile_read result for {"path":"a.txt"}',
        '[2] file_read {"path":".env.secret"}\ndenied: secret-like path',
        '[3] file_read {"path":"b.txt"}\nfile_read result for {"path":"b.txt"}',
        '[4] glob {"pattern":"boom/*"}\nerror: child exploded',
      ].join("\n\n"),
    );
    expect(called).toHaveLength(4);
    expect(maxInFlight).toBe(3);
  });

  it("clips each child to its share so every result keeps its head and tail", async () => {
    const call: ToolContext["call"] = async (_a, input) => `START ${input} ${"z".repeat(20_000)} END`;
    const input = parse({ calls: [read("a"), read("b"), read("c")] });
    const out = (await parallelTool.run(input, makeToolContext({ call }), NO_TARGET)).text;
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(CLIP.parallel + 64);
    for (const p of ["a", "b", "c"]) expect(out).toContain(`START {"path":"${p}"}`);
    expect(out.match(/ END/g)).toHaveLength(3);
    expect(out.match(/bytes clipped/g)).toHaveLength(3);
  });
});

describe("final", () => {
  it("returns the answer text unchanged and ends nothing else", async () => {
    const r = finalTool.parse("The answer is 42.\n\n- detail");
    expect(r).toEqual({ ok: true, value: "The answer is 42.\n\n- detail" });
    if (r.ok)
      expect((await finalTool.run(r.value, makeToolContext(), NO_TARGET)).text).toBe(
        "The answer is 42.\n\n- detail",
      );
    expect(finalTool.effects("x")).toEqual({ capability: "native" });
  });

  it("takes JSON-looking text as plain text", () => {
    expect(finalTool.parse('{"path": "x"}')).toEqual({ ok: true, value: '{"path": "x"}' });
  });

  it.each(["", "   \n"])("refuses an empty answer %j", (raw) => {
    expect(finalTool.parse(raw)).toEqual({ ok: false, error: "final: the answer text must not be empty" });
  });
});
