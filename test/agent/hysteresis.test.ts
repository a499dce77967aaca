/**
 * Compaction with hysteresis (docs/context.md "Context budget and the server's cache"): nothing under
 * the budget; over it, down to about half; the full budget when half cannot hold the minimum.
 */
import { describe, expect, it } from "vitest";
import { historyBytes } from "../../src/agent/compact.js";
import { compactWithHysteresis } from "../../src/agent/hysteresis.js";
import type { Message } from "../../src/store/session.js";

function conversation(turns: number, observationBytes: number): Message[] {
  const out: Message[] = [
    { role: "system", content: "You are Scoot." },
    { role: "user", content: "the goal" },
  ];
  for (let t = 0; t < turns; t++) {
    out.push({
      role: "assistant",
      content: JSON.stringify({ thought: `t${t}`, action: "glob", action_input: "{}" }),
    });
    out.push({ role: "user", content: `observation ${t} ${"x".repeat(observationBytes)}` });
  }
  return out;
}

describe("compactWithHysteresis", () => {
  it("leaves a history under the budget alone", () => {
    const h = conversation(3, 100);
    expect(compactWithHysteresis(h, new Set([0, 1]), historyBytes(h) + 1, "extractive")).toEqual({
      ok: true,
      value: undefined,
    });
  });

  it("over the budget, compacts to at most half of it, so the next turns append without compacting", () => {
    const budget = 8_000;
    let h = conversation(30, 400);
    const c = compactWithHysteresis(h, new Set([0, 1]), budget, "extractive");
    expect(c.ok && c.value).toBeTruthy();
    if (!c.ok || !c.value) return;
    expect(c.value.afterBytes).toBeLessThanOrEqual(budget / 2);
    // The following turns append to it; the first several need no compaction at all.
    h = c.value.messages;
    let quiet = 0;
    for (let t = 0; t < 20; t++) {
      h = [...h, ...conversation(1, 400).slice(2)];
      const again = compactWithHysteresis(h, new Set([0, 1]), budget, "extractive");
      if (again.ok && again.value) break;
      quiet++;
    }
    expect(quiet).toBeGreaterThanOrEqual(4);
  });

  it("when half the budget cannot hold the minimum, fits the budget itself", () => {
    const h = conversation(6, 1_500);
    const minimumish = historyBytes([h[0]!, h[1]!, h.at(-1)!]) + 400;
    const budget = Math.ceil(minimumish * 1.5);
    const c = compactWithHysteresis(h, new Set([0, 1]), budget, "drop");
    expect(c.ok && c.value).toBeTruthy();
    if (c.ok && c.value) {
      expect(c.value.afterBytes).toBeLessThanOrEqual(budget);
      expect(c.value.afterBytes).toBeGreaterThan(budget / 2);
    }
  });

  it("a budget too small even for the minimum is the same clear error as before", () => {
    const h = conversation(4, 2_000);
    const c = compactWithHysteresis(h, new Set([0, 1]), 500, "extractive");
    expect(c.ok).toBe(false);
    expect(!c.ok && c.error).toMatch(/agent\.context_budget_bytes = 500\) is too small/);
  });
});
