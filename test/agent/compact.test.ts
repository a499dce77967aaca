/**
 * Linear compaction: the summary is exactly what the quadratic implementation
 * produced (compact-expected.json was written by it, before the rewrite, from the cases in
 * compact-cases.ts), and a long history costs a number of step parses linear in its length.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  compactHistory,
  compactStats,
  extractiveSummary,
  historyBytes,
  SUMMARY_MARKER,
} from "../../src/agent/compact.js";
import type { Message } from "../../src/store/session.js";
import { compactCases } from "./compact-cases.js";
import expected from "./compact-expected.json" with { type: "json" };

/** The same digest of a result that compact-expected.json holds. */
function digestOf(r: ReturnType<typeof compactHistory>, pinnedCount: number): unknown {
  if (!r.ok) return { error: r.error };
  if (r.value === undefined) return { unchanged: true };
  return {
    removed: r.value.removed,
    beforeBytes: r.value.beforeBytes,
    afterBytes: r.value.afterBytes,
    count: r.value.messages.length,
    // The new summary: after the pinned messages, or before a goal that was the newest message.
    summary: (
      r.value.messages.find((m) => m.content.startsWith(SUMMARY_MARKER)) ?? r.value.messages[pinnedCount]!
    ).content,
    sha256: createHash("sha256").update(JSON.stringify(r.value.messages)).digest("hex"),
  };
}

const table = expected as Record<string, unknown>;

describe("compaction output is unchanged", () => {
  const cases = compactCases();
  it("covers every case the expected table holds", () => {
    expect(cases.map((c) => c.name).sort()).toEqual(Object.keys(table).sort());
    // The table exercises every outcome: unchanged, compacted and too small.
    const kinds = new Set(Object.values(table).map((v) => Object.keys(v as object)[0]));
    expect(kinds).toEqual(new Set(["unchanged", "removed", "error"]));
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s", (name, c) => {
    const got = compactHistory(c.messages, new Set(c.pinned), c.budget, c.style);
    expect(digestOf(got, c.pinned.length)).toEqual(table[name]);
  });

  it("gives the same result when called again on the same message objects (cached facts)", () => {
    for (const c of cases.filter((x) => x.style === "extractive")) {
      const first = compactHistory(c.messages, new Set(c.pinned), c.budget, c.style);
      const again = compactHistory(c.messages, new Set(c.pinned), c.budget, c.style);
      expect(again).toEqual(first);
    }
  });

  it("re-reads a message whose content changed in place", () => {
    const m: Message = {
      role: "assistant",
      content: JSON.stringify({ thought: "one", action: "bash", action_input: "ls" }),
    };
    expect(extractiveSummary([m])).toContain("Notes: one");
    m.content = JSON.stringify({ thought: "two", action: "bash", action_input: "ls" });
    expect(extractiveSummary([m])).toContain("Notes: two");
  });
});

describe("compaction cost", () => {
  function longHistory(turns: number): Message[] {
    const messages: Message[] = [
      { role: "system", content: "system prompt" },
      { role: "user", content: "the goal" },
    ];
    for (let i = 0; i < turns; i++) {
      messages.push({
        role: "assistant",
        content: JSON.stringify({
          thought: `turn ${i}`,
          action: "file_read",
          action_input: JSON.stringify({ path: `f${i}.ts` }),
        }),
      });
      messages.push({ role: "user", content: `Observation:\n${"line of the file\n".repeat(20)}` });
    }
    return messages;
  }

  it("parses each message of a 300-message history at most once", () => {
    const messages = longHistory(150); // 302 messages, 150 of them steps
    expect(messages.length).toBe(302);
    const assistant = messages.filter((m) => m.role === "assistant").length;
    compactStats.stepParses = 0;
    const r = compactHistory(messages, new Set([0, 1]), Math.floor(historyBytes(messages) / 4), "extractive");
    if (!r.ok || !r.value) throw new Error("expected a compaction");
    expect(r.value.removed).toBeGreaterThan(150);
    // The quadratic search parsed every removed step once per candidate cut: thousands here.
    expect(compactStats.stepParses).toBeLessThanOrEqual(assistant);
    expect(compactStats.stepParses).toBeGreaterThan(0);
  });

  it("does not parse again the messages it kept when the next turn compacts", () => {
    const messages = longHistory(150);
    const budget = Math.floor(historyBytes(messages) / 4);
    const first = compactHistory(messages, new Set([0, 1]), budget, "extractive");
    if (!first.ok || !first.value) throw new Error("expected a compaction");
    const next = [
      ...first.value.messages,
      {
        role: "assistant" as const,
        content: JSON.stringify({ thought: "more", action: "grep", action_input: "{}" }),
      },
      { role: "user" as const, content: `Observation:\n${"x\n".repeat(2000)}` },
    ];
    compactStats.stepParses = 0;
    const second = compactHistory(next, new Set([0, 1]), budget, "extractive");
    expect(second.ok && second.value).toBeTruthy();
    expect(compactStats.stepParses).toBe(1); // only the new step
  });

  it("grows linearly: twice the history costs at most twice the parses", () => {
    const parses = (turns: number) => {
      const messages = longHistory(turns);
      compactStats.stepParses = 0;
      compactHistory(messages, new Set([0, 1]), Math.floor(historyBytes(messages) / 4), "extractive");
      return compactStats.stepParses;
    };
    const small = parses(150);
    const big = parses(300);
    expect(big).toBeLessThanOrEqual(2 * small);
  });
});
