import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerSecret, resetSecretsForTest } from "../../src/core/redact.js";
import {
  jobSessionId,
  listSessions,
  newSessionId,
  openSession,
  readSession,
  transcriptParts,
  validateSessionId,
} from "../../src/store/session.js";
import { recallTool } from "../../src/tools/recall.js";
import { removeDir, tempDir } from "../helpers/cli.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

let dir: string;
beforeEach(() => {
  dir = tempDir();
  resetSecretsForTest();
});
afterEach(() => removeDir(dir));

describe("session ids", () => {
  it("generated ids have the documented shapes", () => {
    expect(newSessionId("cli")).toMatch(new RegExp(`^cli-\\d{13}-${process.pid}$`));
    expect(newSessionId("repl")).toMatch(new RegExp(`^repl-\\d{13}-${process.pid}$`));
    expect(jobSessionId("nightly")).toBe("job-nightly");
  });
  it.each(["a", "A.b_c-9", "x".repeat(128), "cli-1-2"])("accepts %j", (id) => {
    expect(validateSessionId(id).ok).toBe(true);
  });
  it.each(["", "x".repeat(129), "../etc", "a/b", "a b", ".", "..", "é", "a\nb", "a;b"])(
    "rejects %j",
    (id) => {
      const r = validateSessionId(id);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toContain("A-Z a-z 0-9 . _ -");
    },
  );
});

describe("transcript file", () => {
  it("holds exactly one {role, content} object per line, appended in order", () => {
    const s = openSession(dir, "t1");
    s.append({ role: "system", content: "sys" });
    s.append({ role: "user", content: "line one\nline two" });
    s.append({ role: "assistant", content: '{"thought":"x"}' });
    const lines = fs.readFileSync(s.path, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "line one\nline two" },
      { role: "assistant", content: '{"thought":"x"}' },
    ]);
    expect(Object.keys(JSON.parse(lines[0]!))).toEqual(["role", "content"]);
  });
  it("redacts secrets before they reach disk", () => {
    registerSecret("super-secret-token-1");
    const s = openSession(dir, "t2");
    s.append({ role: "user", content: "use super-secret-token-1 and sk-abcdefghijklmnop" });
    const text = fs.readFileSync(s.path, "utf8");
    expect(text).not.toContain("super-secret-token-1");
    expect(text).not.toContain("sk-abcdefghijklmnop");
    expect(text).toContain("[REDACTED]");
  });
  it("rotates into parts .1, .2, … before the append that would pass the cap, keeping every part", () => {
    // On main only `.1` was kept: each rotation renamed over it and older history was lost.
    const s = openSession(dir, "t3", 200);
    for (let i = 0; i < 20; i++) s.append({ role: "user", content: `message number ${i} ${"x".repeat(20)}` });
    expect(fs.statSync(s.path).size).toBeLessThanOrEqual(200);
    const parts = transcriptParts(s.path);
    expect(parts.length).toBeGreaterThan(3);
    expect(parts).toEqual(parts.map((_, i) => i + 1));
    for (const p of parts) expect(fs.statSync(`${s.path}.${p}`).size).toBeLessThanOrEqual(200);
    const { messages, warnings } = readSession(s.path);
    expect(warnings).toEqual([]);
    // Nothing lost, in order: parts oldest first, then the live file.
    expect(messages.map((m) => m.content.split(" ")[2])).toEqual(
      Array.from({ length: 20 }, (_, i) => String(i)),
    );
  });
  it("beyond the configured count the oldest part goes, and readers say so", () => {
    const s = openSession(dir, "t5", 120, 2);
    for (let i = 0; i < 12; i++) s.append({ role: "user", content: `message number ${i} ${"x".repeat(20)}` });
    expect(transcriptParts(s.path)).toHaveLength(2);
    const { messages, warnings } = readSession(s.path);
    expect(warnings.join()).toMatch(/parts 1\.\.\d+ were removed/);
    expect(messages.at(-1)!.content).toContain("message number 11");
  });
  it("recall reads every part", async () => {
    const s = openSession(dir, "t6", 150);
    for (let i = 0; i < 12; i++) s.append({ role: "user", content: `needle-${i} ${"x".repeat(30)}` });
    expect(transcriptParts(s.path).length).toBeGreaterThan(2);
    const out = await runTool(
      recallTool,
      { query: "needle-0 ", limit: 20 },
      makeToolContext({ sessionPath: s.path }),
    );
    expect(out).toContain("needle-0 ");
    const first = await runTool(recallTool, { seq: 1, context: 0 }, makeToolContext({ sessionPath: s.path }));
    expect(first).toContain("needle-0 ");
  });
  it("a torn last line is skipped with a warning and repaired by the next append", () => {
    const file = path.join(dir, "t4.jsonl");
    fs.writeFileSync(file, '{"role":"user","content":"ok"}\n{"role":"assis');
    let read = readSession(file);
    expect(read.messages).toHaveLength(1);
    expect(read.warnings[0]).toMatch(/torn last line/);
    openSession(dir, "t4").append({ role: "assistant", content: "next" });
    read = readSession(file);
    expect(read.messages.map((m) => m.content)).toEqual(["ok", "next"]);
  });
});

describe("listing", () => {
  it("lists id, mtime, count and first user message, newest first", () => {
    const a = openSession(dir, "older");
    a.append({ role: "system", content: "s" });
    a.append({ role: "user", content: "first goal" });
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(a.path, past, past);
    const b = openSession(dir, "newer");
    b.append({ role: "user", content: "second goal" });
    const { sessions } = listSessions(dir);
    expect(sessions.map((s) => s.id)).toEqual(["newer", "older"]);
    expect(sessions[1]).toMatchObject({ messages: 2, firstUser: "first goal" });
  });
  it("a goal line's person's words (goal) are what the listing shows; lines before the field still list", () => {
    registerSecret("super-secret-token-2");
    const a = openSession(dir, "planned");
    a.append({ role: "system", content: "s" });
    a.append({
      role: "user",
      content: "tidy with super-secret-token-2\n\n[scoot: this run carries out an approved plan …]",
      goal: "tidy with super-secret-token-2",
    });
    a.append({ role: "user", content: "a later goal" });
    const text = fs.readFileSync(a.path, "utf8");
    expect(text).not.toContain("super-secret-token-2");
    expect(JSON.parse(text.split("\n")[1]!)).toEqual({
      role: "user",
      content: "tidy with [REDACTED]\n\n[scoot: this run carries out an approved plan …]",
      goal: "tidy with [REDACTED]",
    });
    // A transcript from before the field, and one whose goal is not text (skipped with a warning).
    fs.writeFileSync(path.join(dir, "old.jsonl"), '{"role":"user","content":"old goal"}\n');
    fs.writeFileSync(
      path.join(dir, "odd.jsonl"),
      '{"role":"user","content":"x","goal":7}\n{"role":"user","content":"next"}\n',
    );
    const { sessions, warnings } = listSessions(dir);
    const first = Object.fromEntries(sessions.map((s) => [s.id, s.firstUser]));
    expect(first).toEqual({ planned: "tidy with [REDACTED]", old: "old goal", odd: "next" });
    expect(warnings).toHaveLength(1);
    expect(readSession(a.path).messages[1]!.goal).toBe("tidy with [REDACTED]");
  });
  it("counts and warns about lines before the first user message exactly as parsing them would", () => {
    // The lines before the first user message are checked as bytes, not parsed: each of these
    // is shaped like a writer record, and only the valid ones may count.
    const lines = [
      String.raw`{"role":"system","content":"escapes \\ \" \/ \b \f \n \r \t \u00e9 fine"}`,
      String.raw`{"role":"system","content":"bad escape \q"}`,
      String.raw`{"role":"system","content":"short \u00e"}`,
      `{"role":"system","content":"raw\tcontrol"}`,
      `{"role":"system","content":"inner "quote"}`,
      String.raw`{"role":"assistant","content":"{\"thought\":\"t\"}"}`,
      `{"role":"user","content":"the goal"}`,
      `{"role":"assistant","content":"after"}`,
    ];
    fs.writeFileSync(path.join(dir, "edge.jsonl"), `${lines.join("\n")}\n`);
    const parsed = lines.filter((l) => {
      try {
        JSON.parse(l);
        return true;
      } catch {
        return false;
      }
    });
    const { sessions, warnings } = listSessions(dir);
    expect(sessions[0]).toMatchObject({ id: "edge", messages: parsed.length, firstUser: "the goal" });
    expect(warnings.map((w) => w.replace(/^.*:(\d+): /, "$1 "))).toEqual([
      "2 skipped a line that is not valid JSON",
      "3 skipped a line that is not valid JSON",
      "4 skipped a line that is not valid JSON",
      "5 skipped a line that is not valid JSON",
    ]);
  });
});
