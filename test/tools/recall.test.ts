import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  excerpt,
  MAX_RECALL_CONTEXT,
  MAX_RECALL_LIMIT,
  type RecallInput,
  recallTool,
} from "../../src/tools/recall.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

let dir: string;
let session: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-"));
  session = path.join(dir, "cli-1-2.jsonl");
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const msg = (role: string, content: string) => JSON.stringify({ role, content });

function parse(raw: object): RecallInput {
  const r = recallTool.parse(JSON.stringify(raw));
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

async function recall(raw: object, sessionPath: string | null = session): Promise<string> {
  return runTool(
    recallTool,
    parse(raw),
    makeToolContext({ cwd: dir, ...(sessionPath ? { sessionPath } : {}) }),
  );
}

/** The JSONL result lines (after the "[recall]" header line), parsed. */
function results(out: string): { seq: number; role: string; content: string }[] {
  return out
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
}

function writeRotated(): void {
  // .1 holds seq 1-3, the live file seq 4-7 (seq 6 is torn garbage, 7 a torn last line).
  fs.writeFileSync(
    `${session}.1`,
    [
      msg("system", "You are Scoot."),
      msg("user", "Fix the ENOENT error in build"),
      msg("assistant", '{"action":"bash"}'),
    ]
      .map((l) => `${l}\n`)
      .join(""),
  );
  fs.writeFileSync(
    session,
    `${msg("user", "observation: enoent: no such file")}\n${msg("assistant", "thinking")}\nnot json at all\n{"role":"user","cont`,
  );
}

describe("recall by query", () => {
  it("finds matches across the rotated part and the live file, case-insensitively, oldest first", async () => {
    writeRotated();
    const out = await recall({ query: "ENOENT" });
    expect(out.split("\n")[0]).toBe('[recall] 2 message(s) contain "ENOENT"');
    expect(results(out)).toEqual([
      { seq: 2, role: "user", content: "Fix the ENOENT error in build" },
      { seq: 4, role: "user", content: "observation: enoent: no such file" },
    ]);
  });

  it("skips torn and unparsable lines but keeps their numbers", async () => {
    writeRotated();
    expect(results(await recall({ query: "thinking" }))).toEqual([
      { seq: 5, role: "assistant", content: "thinking" },
    ]);
    expect(await recall({ query: "not json" })).toBe('[recall] no messages contain "not json" (7 searched)');
  });

  it("caps the limit at 20 and counts the later matches", async () => {
    fs.writeFileSync(session, Array.from({ length: 25 }, (_, i) => `${msg("user", `note ${i}`)}\n`).join(""));
    const input = parse({ query: "note", limit: 100 });
    expect(input).toEqual({ query: "note", limit: MAX_RECALL_LIMIT });
    const out = await recall({ query: "note", limit: 100 });
    expect(results(out).map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(out).toContain("[5 later match(es) not shown");
  });

  it("does not find its own steps and results", async () => {
    fs.writeFileSync(
      session,
      [
        msg("user", "the deploy key is rotated monthly"),
        msg(
          "assistant",
          '{"thought":"look back","action": "recall","action_input":"{\\"query\\":\\"deploy key\\"}"}',
        ),
        msg("user", '<observation>[recall] 1 message(s) contain "deploy key"\n{"seq":1}</observation>'),
      ]
        .map((l) => `${l}\n`)
        .join(""),
    );
    expect(results(await recall({ query: "deploy key" })).map((r) => r.seq)).toEqual([1]);
  });

  it("shows an excerpt around the match in a long message", async () => {
    const long = `${"a".repeat(50_000)} NEEDLE ${"b".repeat(50_000)}`;
    fs.writeFileSync(session, `${msg("user", long)}\n`);
    const [hit] = results(await recall({ query: "needle" }));
    expect(hit?.content).toContain("NEEDLE");
    expect(hit?.content).toMatch(/^\[\.\.\. \d+ chars before\] a+ NEEDLE b+ \[\d+ chars after \.\.\.\]$/);
    expect(hit!.content.length).toBeLessThan(13_000);
  });
});

describe("recall by seq", () => {
  it("returns the message and its neighbours across the rotation boundary", async () => {
    writeRotated();
    const out = await recall({ seq: 3, context: 1 });
    expect(out.split("\n")[0]).toBe("[recall] messages 2-4 of 7");
    expect(results(out).map((r) => r.seq)).toEqual([2, 3, 4]);
    expect(results(out)[1]).toEqual({ seq: 3, role: "assistant", content: '{"action":"bash"}' });
  });

  it("defaults context to 2 and caps it at 5", async () => {
    fs.writeFileSync(session, Array.from({ length: 30 }, (_, i) => `${msg("user", `m${i + 1}`)}\n`).join(""));
    expect(results(await recall({ seq: 10 })).map((r) => r.seq)).toEqual([8, 9, 10, 11, 12]);
    expect(parse({ seq: 10, context: 50 })).toEqual({ seq: 10, context: MAX_RECALL_CONTEXT });
    expect(results(await recall({ seq: 10, context: 50 }))).toHaveLength(11);
  });

  it("names a torn line when it is the one asked for", async () => {
    writeRotated();
    expect(await recall({ seq: 6, context: 0 })).toBe(
      "[recall] messages 6-6 of 7\n[seq 6 is not a readable message (torn or malformed line)]",
    );
  });

  it("reports a seq past the end with the count", async () => {
    writeRotated();
    expect(await recall({ seq: 99 })).toBe("recall: seq 99 is past the end; the transcript has 7 messages");
  });

  it("reads a transcript line by line: an over-long line keeps its number and reads as unreadable", async () => {
    // Issue 16: a line over the reader's 32 MiB cap is never held in memory.
    const huge = msg("user", `needle ${"x".repeat(33 * 1024 * 1024)}`);
    fs.writeFileSync(
      session,
      `${msg("user", "before")}
${huge}
${msg("user", "after needle")}
`,
    );
    expect(await recall({ seq: 2, context: 1 })).toBe(
      [
        "[recall] messages 1-3 of 3",
        JSON.stringify({ seq: 1, role: "user", content: "before" }),
        "[seq 2 is not a readable message (torn or malformed line)]",
        JSON.stringify({ seq: 3, role: "user", content: "after needle" }),
      ].join("\n"),
    );
    expect(results(await recall({ query: "needle" })).map((r) => r.seq)).toEqual([3]);
  });

  it("works without a rotated part", async () => {
    fs.writeFileSync(session, `${msg("user", "only")}\n`);
    expect(results(await recall({ seq: 1 }))).toEqual([{ seq: 1, role: "user", content: "only" }]);
  });
});

describe("recall refusals", () => {
  it("needs a session", async () => {
    expect(await recall({ query: "x" }, null)).toBe("recall: this run has no session transcript to search");
  });

  it.each([
    [{}, 'recall: give "query" (text to find) or "seq" (a message number)'],
    [{ query: "a", seq: 1 }, 'recall: give either "query" or "seq", not both'],
    [{ query: "" }, 'recall: "query" must be a non-empty string'],
    [{ query: "a", context: 1 }, 'recall: "context" goes with "seq"'],
    [{ seq: 1, limit: 3 }, 'recall: "limit" goes with "query"'],
    [{ seq: 0 }, 'recall: "seq" must be >= 1, got 0'],
    [{ seq: "4" }, 'recall: "seq" must be an integer'],
    [{ query: "a", limit: 0 }, 'recall: "limit" must be >= 1, got 0'],
    [{ query: "a", since: 3 }, 'recall: unknown field "since"'],
  ])("%o", (input, message) => {
    const r = recallTool.parse(JSON.stringify(input));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });

  it("is a native capability", () => {
    expect(recallTool.effects(parse({ query: "x" }))).toEqual({ capability: "native" });
  });
});

describe("excerpt", () => {
  it("keeps short text whole and centres long text on the match", () => {
    expect(excerpt("short", 0, 5, 100)).toBe("short");
    const text = `${"x".repeat(1000)}HERE${"y".repeat(1000)}`;
    const out = excerpt(text, 1000, 4, 200);
    expect(out).toContain("HERE");
    expect(out.startsWith("[... 950 chars before] ")).toBe(true);
  });
});
