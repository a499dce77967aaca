/**
 * Progress from evidence (src/agent/plan-evidence.ts, docs/safety.md "Plan mode"): a "done" is
 * shown done only when a call attributed to the step ran, succeeded and touched what the step
 * names; everything else the model says is a claim.
 */
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Prepared } from "../../src/agent/call-record.js";
import { planEvidence } from "../../src/agent/plan-evidence.js";
import type { CallOutcome } from "../../src/store/session.js";
import type { Plan } from "../../src/tools/plan-shape.js";
import { preparedCall } from "../helpers/calls.js";

const root = path.join(os.tmpdir(), "scoot-evidence-project");
const plan: Plan = {
  steps: [
    { title: "Write the notes", files: ["NOTES.md"] },
    { title: "Run the tests", commands: ["npm test"] },
    { title: "Look around" },
  ],
};
const call = (action: string, input: unknown): Prepared =>
  preparedCall(action, typeof input === "string" ? input : JSON.stringify(input), { cwd: root });
const ran: CallOutcome = { outcome: "ran" };

describe("what counts as evidence", () => {
  it.each<[string, number, Prepared, CallOutcome, boolean]>([
    ["the named file written", 1, call("file_write", { path: "NOTES.md", content: "x" }), ran, true],
    [
      "the named file written by its absolute path",
      1,
      call("file_write", { path: path.join(root, "NOTES.md"), content: "x" }),
      ran,
      true,
    ],
    ["another file written", 1, call("file_write", { path: "OTHER.md", content: "x" }), ran, false],
    ["the named file only read", 1, call("file_read", { path: "NOTES.md" }), ran, false],
    [
      "the named file written, but the write failed",
      1,
      call("file_write", { path: "NOTES.md", content: "x" }),
      { outcome: "failed" },
      false,
    ],
    [
      "the named file, the call denied",
      1,
      call("file_write", { path: "NOTES.md", content: "x" }),
      { outcome: "denied" },
      false,
    ],
    [
      "the named file, the call refused",
      1,
      call("file_write", { path: "NOTES.md", content: "x" }),
      { outcome: "refused", rule: "tools.rules[0]" },
      false,
    ],
    [
      "the named file, the call interrupted",
      1,
      call("file_write", { path: "NOTES.md", content: "x" }),
      { outcome: "interrupted" },
      false,
    ],
    ["the named command, exit 0", 2, call("bash", "npm test"), { outcome: "ran", exit_code: 0 }, true],
    ["the named command, exit 1", 2, call("bash", "npm test"), { outcome: "failed", exit_code: 1 }, false],
    [
      "the named command, exit 1 (a command that ran)",
      2,
      call("bash", "npm test"),
      { outcome: "ran", exit_code: 1 },
      false,
    ],
    ["another command", 2, call("bash", "npm run lint"), { outcome: "ran", exit_code: 0 }, false],
    [
      "the named command stretched",
      2,
      call("bash", "npm test --output=x"),
      { outcome: "ran", exit_code: 0 },
      false,
    ],
    [
      "a step naming nothing: any call that succeeded",
      3,
      call("file_read", { path: "README.md" }),
      ran,
      true,
    ],
    [
      "a step naming nothing: a failed call",
      3,
      call("file_read", { path: "README.md" }),
      { outcome: "failed" },
      false,
    ],
    ["no such step", 9, call("file_read", { path: "README.md" }), ran, false],
  ])("%s", (_name, step, c, outcome, counts) => {
    const e = planEvidence(plan, root);
    const got = e.attribute(step, c, outcome);
    expect(got.counts).toBe(counts);
    expect(e.claim(step, "done")).toBe(counts ? "done" : "claimed");
  });
});

describe("claims", () => {
  it("a done before any evidence is claimed; after evidence a done is done; in_progress and skipped are taken as said", () => {
    const e = planEvidence(plan, root);
    expect(e.claim(1, "done")).toBe("claimed");
    expect(e.attribute(1, call("file_write", { path: "NOTES.md", content: "x" }), ran).counts).toBe(true);
    expect(e.claim(1, "done")).toBe("done");
    expect(e.claim(2, "in_progress")).toBe("in_progress");
    expect(e.claim(3, "skipped")).toBe("skipped");
    expect(e.counts()).toEqual({ total: 3, done: 1, claimed: 0, skipped: 1 });
  });

  it("the counts say how many were claimed without evidence", () => {
    const e = planEvidence(plan, root);
    e.attribute(2, call("bash", "npm test"), { outcome: "failed", exit_code: 1 });
    e.claim(2, "done");
    e.claim(3, "done");
    expect(e.counts()).toEqual({ total: 3, done: 0, claimed: 2, skipped: 0 });
  });
});
