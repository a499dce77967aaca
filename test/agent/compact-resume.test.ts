/**
 * The compaction rule when the goal is the newest message (a resumed session's new goal, a later
 * REPL goal): the goal is pinned and stays last, the older history is summarised before it, and
 * when nothing can fit the error's numbers add up to the total it says is needed, which is more
 * than the budget it says is too small (docs/context.md "Context budget").
 */
import { describe, expect, it } from "vitest";
import { compactHistory, historyBytes, SUMMARY_MARKER } from "../../src/agent/compact.js";
import { ContextFit } from "../../src/agent/context-fit.js";
import { compactWithHysteresis } from "../../src/agent/hysteresis.js";
import type { ContextWindow } from "../../src/backend/context-window.js";
import { defaultConfig } from "../../src/config/schema.js";
import type { Message } from "../../src/store/session.js";
import { stepText } from "../helpers/scripted-server.js";
import { compactCases } from "./compact-cases.js";

const SYSTEM: Message = { role: "system", content: `You are Scoot. ${"rules ".repeat(100)}` };

/** Earlier goals of a session, each with `turns` long reads and an answer: a stored transcript. */
function earlier(goals: number, turns: number, observationBytes = 1500): Message[] {
  const out: Message[] = [];
  for (let g = 0; g < goals; g++) {
    out.push({ role: "user", content: `earlier goal ${g}` });
    for (let t = 0; t < turns; t++) {
      out.push({
        role: "assistant",
        content: stepText("file_read", { path: `g${g}/f${t}.ts` }, `read g${g}/f${t}.ts`),
      });
      out.push({ role: "user", content: `Observation:\n${`g${g} t${t} `.padEnd(observationBytes, "x")}` });
    }
    out.push({ role: "assistant", content: stepText("final", `answer ${g}`, "answering") });
  }
  return out;
}

/** A resumed history: the system prompt, the transcript, and the new goal last. */
function resumed(goal = "the new goal", goals = 3, turns = 8): { messages: Message[]; pinned: Set<number> } {
  const messages = [SYSTEM, ...earlier(goals, turns), { role: "user" as const, content: goal }];
  return { messages, pinned: new Set([0, messages.length - 1]) };
}

/** The numbers of a too-small error: its parts, the total it names, the budget it names. */
function numbersOf(error: string): { parts: number[]; total: number; budget: number } {
  const budget = Number(/agent\.context_budget_bytes = (\d+)/.exec(error)?.[1]);
  const total = Number(/need(?:s)? at least (\d+) bytes/.exec(error)?.[1]);
  const parts = [...error.matchAll(/\((\d+) bytes\)/g)].map((m) => Number(m[1]));
  return { parts, total, budget };
}

describe("the goal is the newest message", () => {
  for (const style of ["extractive", "drop"] as const) {
    it(`${style}: the history is summarised before the goal, which stays last; the result fits`, () => {
      const { messages, pinned } = resumed();
      const budget = Math.floor(historyBytes(messages) / 4);
      const r = compactHistory(messages, pinned, budget, style);
      expect(r.ok, !r.ok ? r.error : "").toBe(true);
      if (!r.ok || !r.value) throw new Error("expected a compaction");
      const out = r.value.messages;
      expect(out[0]).toBe(SYSTEM);
      expect(out.at(-1)).toBe(messages.at(-1));
      expect(out[1]!.content.startsWith(SUMMARY_MARKER)).toBe(true);
      expect(r.value.afterBytes).toBeLessThanOrEqual(budget);
      expect(r.value.afterBytes).toBe(historyBytes(out));
      // What stays between the summary and the goal is the newest part of the transcript, in order.
      const between = out.slice(2, -1);
      const tail = messages.slice(messages.length - 1 - between.length, -1);
      expect(between).toEqual(tail);
      expect(r.value.removed).toBe(messages.length - 2 - between.length);
      expect(r.value.pinnedAt).toEqual([0, out.length - 1]);
    });
  }

  it("with room for it, the answer before the new goal stays word for word", () => {
    const { messages, pinned } = resumed();
    const budget = historyBytes(messages) - 2000;
    const r = compactHistory(messages, pinned, budget, "extractive");
    if (!r.ok || !r.value) throw new Error(!r.ok ? r.error : "expected a compaction");
    expect(r.value.messages.at(-2)).toBe(messages.at(-2));
    expect(r.value.messages.at(-2)!.content).toContain("answer 2");
  });

  it("a budget with room only for the system prompt, the goal and a summary keeps nothing else", () => {
    const { messages, pinned } = resumed();
    const fixed = historyBytes([messages[0]!, messages.at(-1)!]);
    const r = compactHistory(messages, pinned, fixed + 200, "drop");
    if (!r.ok || !r.value) throw new Error(!r.ok ? r.error : "expected a compaction");
    expect(r.value.messages).toHaveLength(3);
    expect(r.value.messages[2]).toBe(messages.at(-1));
    expect(r.value.removed).toBe(messages.length - 2);
  });

  it("later turns of that run: the summary of older turns follows the goal, which stays pinned", () => {
    const { messages, pinned } = resumed();
    const first = compactHistory(messages, pinned, Math.floor(historyBytes(messages) / 4), "extractive");
    if (!first.ok || !first.value) throw new Error("expected a compaction");
    let h = first.value.messages;
    let goalAt = first.value.pinnedAt.at(-1)!;
    // The run goes on: each turn a step and a long observation, compacted when over the budget.
    const budget = Math.floor(historyBytes(messages) / 4);
    let compactions = 0;
    for (let t = 0; t < 30; t++) {
      h = [
        ...h,
        { role: "assistant", content: stepText("bash", `make ${t}`, `build ${t}`) },
        { role: "user", content: `Observation:\nexit code: 0\n${"y".repeat(1200)}` },
      ];
      const c = compactWithHysteresis(h, new Set([0, goalAt]), budget, "extractive");
      if (!c.ok) throw new Error(c.error);
      if (!c.value) continue;
      compactions += 1;
      h = c.value.messages;
      goalAt = c.value.pinnedAt.at(-1)!;
      expect(h[goalAt]).toBe(messages.at(-1));
      expect(historyBytes(h)).toBeLessThanOrEqual(budget);
      expect(h.filter((m) => m.content.startsWith(SUMMARY_MARKER))).toHaveLength(1);
    }
    expect(compactions).toBeGreaterThan(2);
    // Once this run's own turns are summarised, the summary comes after the goal.
    expect(goalAt).toBe(1);
    expect(h[2]!.content.startsWith(SUMMARY_MARKER)).toBe(true);
  });
});

describe("when nothing fits, the error tells the truth", () => {
  it("a goal larger than the budget: names the goal and its size, says to shorten it; the numbers add up", () => {
    const goal = `fix it: ${"all of this ".repeat(400)}`;
    const { messages, pinned } = resumed(goal);
    const budget = 3000;
    const r = compactWithHysteresis(messages, pinned, budget, "extractive");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain(`the goal (${Buffer.byteLength(goal) + 32} bytes)`);
    expect(r.error).toMatch(/Shorten the goal/);
    const n = numbersOf(r.error);
    expect(n.budget).toBe(budget);
    expect(n.parts.reduce((a, b) => a + b, 0)).toBe(n.total);
    expect(n.total).toBeGreaterThan(budget);
  });

  it("every error of the compaction table: its parts add up to the total, which exceeds the budget", () => {
    let errors = 0;
    for (const c of compactCases()) {
      for (const style of ["extractive", "drop"] as const) {
        const r = compactHistory(c.messages, new Set(c.pinned), c.budget, style);
        if (r.ok) continue;
        errors += 1;
        const n = numbersOf(r.error);
        expect(n.budget, c.name).toBe(c.budget);
        expect(
          n.parts.reduce((a, b) => a + b, 0),
          c.name,
        ).toBe(n.total);
        expect(n.total, c.name).toBeGreaterThan(c.budget);
        // The goal of these cases is short: the advice is about the budget, not the goal.
        expect(r.error, c.name).toMatch(/Raise the budget or set it to 0/);
      }
    }
    expect(errors).toBeGreaterThan(10);
  });

  it("an extractive summary that leaves no room gives way to a drop marker before failing", () => {
    const { messages, pinned } = resumed("the new goal", 6, 12);
    const fixed = historyBytes([messages[0]!, messages.at(-1)!]);
    // Room for a count marker, not for the digest of 6 goals of reads.
    const budget = fixed + 250;
    expect(compactHistory(messages, pinned, budget, "extractive").ok).toBe(false);
    const r = compactWithHysteresis(messages, pinned, budget, "extractive");
    if (!r.ok || !r.value) throw new Error(!r.ok ? r.error : "expected a compaction");
    expect(r.value.messages[1]!.content).toMatch(/earlier messages were dropped/);
    expect(r.value.messages.at(-1)).toBe(messages.at(-1));
  });
});

describe("the window sets the budget", () => {
  const window: ContextWindow = {
    tokens: 8192,
    source: "llama.cpp n_ctx",
    flavour: "llamacpp",
    notes: [],
    cached: false,
  };

  it("a resumed history longer than the window compacts around its goal", () => {
    const fit = new ContextFit(window, defaultConfig(), 1500);
    const { messages, pinned } = resumed("the new goal", 4, 10);
    expect(historyBytes(messages)).toBeGreaterThan(fit.budget().bytes);
    const r = fit.compact(messages, pinned, "extractive");
    if (!r.ok || !r.value) throw new Error(!r.ok ? r.error : "expected a compaction");
    expect(r.value.afterBytes).toBeLessThanOrEqual(fit.budget().bytes);
    expect(r.value.messages.at(-1)).toBe(messages.at(-1));
  });

  it("when even the latest step cannot fit, the window asked for holds what is needed", () => {
    const fit = new ContextFit(window, defaultConfig(), 1500);
    const messages: Message[] = [
      SYSTEM,
      { role: "user", content: "the goal" },
      ...earlier(1, 3),
      { role: "assistant", content: stepText("file_read", { path: "big.ts" }) },
      { role: "user", content: `Observation:\n${"z".repeat(fit.budget().bytes)}` },
    ];
    const r = fit.compact(messages, new Set([0, 1]), "extractive");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const need = Number(/need at least (\d+) bytes/.exec(r.error)?.[1]);
    expect(need).toBeGreaterThan(fit.budget().bytes);
    // The fix asks for a window whose history room (after the answer reserve and schema) holds it.
    const asked = Number(/-c (\d+)/.exec(r.error)?.[1]);
    expect(Math.floor(asked * 0.75 * fit.ratio()) - 1500).toBeGreaterThanOrEqual(need);
  });
});
