/** The plan action's validation and the plan_step/plan_status keys a step may carry. */
import { describe, expect, it } from "vitest";
import { validateStep } from "../../src/agent/step.js";
import { formatPlan, parsePlan } from "../../src/tools/plan.js";
import { MAX_PLAN_STEPS } from "../../src/tools/plan-shape.js";
import { enabledTools } from "../../src/tools/registry.js";

const planning = enabledTools({ hasMcp: false, hasSkills: false, planning: true });
const normal = enabledTools({ hasMcp: false, hasSkills: false });

describe("the plan action", () => {
  it("is offered only to a planning run", () => {
    expect(planning.has("plan")).toBe(true);
    expect(normal.has("plan")).toBe(false);
  });

  it.each([
    [{ steps: [{ title: "a" }, { title: "b" }, { detail: "x" }] }, "plan: step 3.title is required"],
    [{ steps: [] }, "plan: steps is empty"],
    [{}, 'plan: "steps" is required'],
    [{ steps: [{ title: "a", files: "x" }] }, "plan: step 1.files must be a list of strings"],
    [{ steps: [{ title: "a", owner: "me" }] }, 'plan: step 1 has an unknown field "owner"'],
    [{ steps: Array(MAX_PLAN_STEPS + 1).fill({ title: "a" }) }, `the limit is ${MAX_PLAN_STEPS}`],
  ])("names the defect: %j", (input, message) => {
    const r = parsePlan(JSON.stringify(input));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });

  it("formats numbered steps", () => {
    const r = parsePlan(
      JSON.stringify({ steps: [{ title: "One", hosts: ["example.com"] }, { title: "Two" }] }),
    );
    expect(r.ok && formatPlan(r.value)).toBe("1. One\n   hosts: example.com\n2. Two\n");
  });
});

describe("plan_step and plan_status beside a step", () => {
  const base = { thought: "t", action: "final", action_input: "done" };
  it("are read and checked", () => {
    const v = validateStep({ ...base, plan_step: 2, plan_status: "done" }, normal);
    expect(v.ok && v.value.planProgress).toEqual({ step: 2, status: "done" });
    expect(v.ok && v.value.notes).toEqual([]);
  });
  it.each([
    [{ plan_step: 3 }, "left out"],
    [{ plan_step: 3, plan_status: null }, "null under a strict schema"],
  ])("plan_step without plan_status (%j, %s) is in_progress, not a correction", (extra, _how) => {
    const v = validateStep({ ...base, ...extra }, normal);
    expect(v.ok && v.value.planProgress).toEqual({ step: 3, status: "in_progress" });
  });
  it("null for both is how a strict schema leaves them out", () => {
    const v = validateStep({ ...base, plan_step: null, plan_status: null }, normal);
    expect(v.ok && v.value.planProgress).toBeUndefined();
  });
  it.each([
    [{ plan_step: 0, plan_status: "done" }, '"plan_step" must be'],
    [{ plan_step: 1, plan_status: "finished" }, '"plan_status" must be one of: in_progress, done, skipped'],
    [{ plan_status: "done" }, '"plan_step" must be'],
  ])("a bad one is a correction: %j", (extra, message) => {
    const v = validateStep({ ...base, ...extra }, normal);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.error).toContain(message);
  });
});
