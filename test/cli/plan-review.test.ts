/**
 * The plan review and the checklist (docs/keyboard.md "Plan mode"), with an in-memory terminal
 * that hands keys: one key decides, `e` takes a line of feedback (Esc goes back to the
 * question), a plan taller than the screen is folded with the question still last, model text
 * is escaped, and the checklist marks what the model reported.
 */
import { describe, expect, it } from "vitest";
import { reviewPlan } from "../../src/cli/plan-review.js";
import type { QuestionIo } from "../../src/cli/question-parts.js";
import { planChecklist } from "../../src/cli/view/plan-checklist.js";
import { makeStyle } from "../../src/cli/view/style.js";
import { type Plan, planSha256 } from "../../src/tools/plan-shape.js";

function terminal(keys: string[], size = { rows: 24, columns: 80 }): QuestionIo & { shown: string } {
  const t = {
    shown: "",
    color: false,
    write(text: string) {
      t.shown += text;
    },
    async key() {
      return keys.shift();
    },
    size: () => size,
  };
  return t;
}

const PLAN: Plan = {
  steps: [
    { title: "Write the notes", files: ["NOTES.md"] },
    { title: "Run the tests", commands: ["npm test"] },
  ],
};
const SHA = planSha256(PLAN);
const signal = new AbortController().signal;

describe("the plan review", () => {
  it.each([
    ["y", { kind: "run" }],
    ["Y", { kind: "run" }],
    ["n", { kind: "drop" }],
    ["\u001b", { kind: "drop" }],
  ])("the single key %j answers %j", async (key, answer) => {
    const t = terminal([key]);
    expect(await reviewPlan(t, PLAN, SHA, signal)).toEqual(answer);
    expect(t.shown).toContain("1. Write the notes");
    expect(t.shown).toContain(`sha256 ${SHA.slice(0, 12)}`);
  });

  it("e takes a line of feedback, typed key by key, Backspace erasing", async () => {
    const t = terminal(["e", ..."use pnpx", "\u007f", "m", "\r"]);
    expect(await reviewPlan(t, PLAN, SHA, signal)).toEqual({ kind: "revise", feedback: "use pnpm" });
  });

  it("e then Esc goes back to the question, which another key answers", async () => {
    const t = terminal(["e", "x", "\u001b", "y"]);
    expect(await reviewPlan(t, PLAN, SHA, signal)).toEqual({ kind: "run" });
    expect(t.shown.match(/run this plan \(2 steps\)\? \[y\/n\/e\]/g)).toHaveLength(2);
  });

  it("another key says which keys answer, and asks again", async () => {
    const t = terminal(["q", "n"]);
    expect(await reviewPlan(t, PLAN, SHA, signal)).toEqual({ kind: "drop" });
    expect(t.shown).toContain("press y (run it), n (drop it) or e (feedback for a new plan)");
  });

  it("input that ends answers nothing: the plan is dropped, not run", async () => {
    expect(await reviewPlan(terminal([]), PLAN, SHA, signal)).toEqual({ kind: "drop" });
  });

  it("a plan taller than the screen is folded, the question still last; d pages through it", async () => {
    const tall: Plan = {
      steps: Array.from({ length: 30 }, (_, i) => ({ title: `Step ${i + 1}`, detail: "one\ntwo" })),
    };
    const t = terminal(["d", " ", " ", " ", " ", "y"]);
    expect(await reviewPlan(t, tall, planSha256(tall), signal)).toEqual({ kind: "run" });
    const question = t.shown.slice(0, t.shown.indexOf("[y/n/e]"));
    expect(question.split("\n").length).toBeLessThanOrEqual(24);
    expect(question).toMatch(/┄┄ \d+ of 90 lines folded/);
    expect(question).toContain("1. Step 1");
    expect(question).toContain("30. Step 30");
    // Paging shows every step.
    for (let i = 1; i <= 30; i++) expect(t.shown).toContain(`${i}. Step ${i}`);
  });

  it("model text cannot rewrite the question: controls and bidi are shown escaped, and warned about", async () => {
    const evil: Plan = { steps: [{ title: "Fix \u001b[2J\u202eevil", detail: "a\u0000b" }] };
    const t = terminal(["n"]);
    await reviewPlan(t, evil, planSha256(evil), signal);
    expect(t.shown).not.toContain("\u001b[2J");
    expect(t.shown).not.toContain("\u202e");
    expect(t.shown).toContain("control or invisible characters, shown escaped");
  });
});

describe("the checklist", () => {
  const style = makeStyle(false);

  it("starts pending, marks done and skipped, counts at the end", () => {
    const c = planChecklist(style, () => 80);
    expect(c.start(PLAN, SHA)).toEqual([
      `plan · 2 steps · sha256 ${SHA.slice(0, 12)}`,
      "  [ ] 1 Write the notes",
      "  [ ] 2 Run the tests",
    ]);
    expect(c.progress(1, "in_progress")).toBe("  [>] 1 Write the notes");
    expect(c.current()).toBe("plan step 1 of 2");
    expect(c.progress(1, "done")).toBe("  [x] 1 Write the notes");
    expect(c.progress(2, "skipped")).toBe("  [-] 2 Run the tests (skipped)");
    expect(c.progress(3, "done")).toBeUndefined();
    expect(c.current()).toBeUndefined();
    expect(c.end()).toBe("plan: 1 of 2 steps done · 1 skipped");
    expect(c.end()).toBeUndefined();
  });

  it("a long or hostile title is escaped and cut to the width", () => {
    const c = planChecklist(style, () => 40);
    const [, row] = c.start({ steps: [{ title: `\u001b]0;x\u0007${"a".repeat(100)}` }] }, SHA);
    expect(row).not.toContain("\u001b");
    expect([...row!].length).toBeLessThanOrEqual(40);
  });
});
