/**
 * Plan mode decided once (src/agent/plan-review.ts): whether a goal is planned first and
 * whether an approved plan binds, for every front end; and the one plan → review → run loop
 * the REPL and the editor both drive through their own `PlanReviewer`.
 */
import { describe, expect, it } from "vitest";
import type { RunResult } from "../../src/agent/loop.js";
import {
  type PlanVerdict,
  planBinds,
  plansFirst,
  planThenRun,
  revisionRequest,
} from "../../src/agent/plan-review.js";
import type { RunHow } from "../../src/agent/session-runner.js";
import { defaultConfig } from "../../src/config/schema.js";
import type { Plan } from "../../src/tools/plan-shape.js";

const PLAN: Plan = { steps: [{ title: "write the notes", files: ["NOTES.md"] }] };

describe("decided once", () => {
  it.each<[string, "plan" | "goal", { plan?: boolean; acting?: boolean }, boolean]>([
    ["asked to plan", "goal", { plan: true }, true],
    ["the configured default", "plan", {}, true],
    ["the default, but told to act (--execute-plan, --output-schema)", "plan", { acting: true }, false],
    ["asked to plan while told to act", "goal", { plan: true, acting: true }, true],
    ["nothing asked, acting by default", "goal", {}, false],
  ])("%s", (_name, mode, asked, want) => {
    const config = defaultConfig();
    config.agent.default_mode = mode;
    expect(plansFirst(config, asked)).toBe(want);
  });

  it("a plan approved in the session binds only with agent.plan_binding = strict", () => {
    const config = defaultConfig();
    config.agent.plan_binding = "strict";
    expect(planBinds(config)).toBe(true);
    config.agent.plan_binding = "off";
    expect(planBinds(config)).toBe(false);
  });
});

/** A session whose planning runs end with PLAN and whose other runs end with an answer. */
function session(verdicts: PlanVerdict[]) {
  const runs: { request: string; how: RunHow }[] = [];
  const reviewed: unknown[] = [];
  const result = (over: Partial<RunResult>): RunResult =>
    ({
      stop: "final",
      status: "final",
      turns: 1,
      toolCalls: 0,
      denials: 0,
      refusals: 0,
      errors: 0,
      wallMs: 1,
      ...over,
    }) as RunResult;
  return {
    runs,
    reviewed,
    goal: {
      goal: "add notes",
      via: "repl" as const,
      binds: true,
      signal: new AbortController().signal,
      reviewer: { review: async () => verdicts.shift()! },
      run: async (request: string, how: RunHow) => {
        runs.push({ request, how });
        return how.plan
          ? result({ stop: "plan", status: "plan" as RunResult["status"], plan: PLAN })
          : result({});
      },
      planReviewed: (plan: Plan, outcome: { notRun: string } | "revise") => {
        reviewed.push([plan.steps.length, outcome]);
        return { ok: true as const, value: undefined };
      },
    },
  };
}

describe("plan → review → run", () => {
  it("approved: the goal runs bound to the plan, by the person, in this session", async () => {
    const s = session([{ kind: "run" }]);
    const end = await planThenRun(s.goal);
    expect(end.kind).toBe("result");
    expect(
      s.runs.map((r) => [r.request, Boolean(r.how.plan), r.how.execute?.origin, r.how.execute?.binds]),
    ).toEqual([
      ["add notes", true, undefined, undefined],
      ["add notes", false, "by=user via=repl", true],
    ]);
    expect(s.reviewed).toEqual([]);
  });

  it("dropped: nothing runs, and the plan not run is recorded with why", async () => {
    const s = session([{ kind: "drop", why: "the user dropped it" }]);
    expect(await planThenRun(s.goal)).toMatchObject({
      kind: "not_run",
      why: "the user dropped it",
      cancelled: false,
    });
    expect(s.runs).toHaveLength(1);
    expect(s.reviewed).toEqual([[1, { notRun: "the user dropped it" }]]);
  });

  it("revised: planned again with the feedback, then run", async () => {
    const s = session([{ kind: "revise", feedback: "also a README" }, { kind: "run" }]);
    await planThenRun(s.goal);
    expect(s.runs.map((r) => r.request)).toEqual([
      "add notes",
      revisionRequest("add notes", "also a README"),
      "add notes",
    ]);
    expect(s.reviewed).toEqual([[1, "revise"]]);
  });

  it("a record that cannot be written stops the goal", async () => {
    const s = session([{ kind: "drop", why: "no" }]);
    s.goal.planReviewed = () => ({ ok: false, error: "disk full" }) as never;
    expect(await planThenRun(s.goal)).toEqual({ kind: "unrecorded", error: "disk full" });
  });
});
