/**
 * Plan mode, decided and carried out once (docs/safety.md "Plan mode"). Whether a goal is
 * planned first and whether an approved plan binds the gate are decided here for every front
 * end; the plan → review → run loop is one function, and who reviews is a `PlanReviewer`, as
 * `Approver` answers a call: the REPL's keyboard (cli/repl.ts) and the editor (acp/plan-turn.ts)
 * implement it.
 */
import type { Config } from "../config/schema.js";
import type { Result } from "../core/types.js";
import type { Plan } from "../tools/plan-shape.js";
import { NOTE_PREFIX } from "./history.js";
import type { RunResult } from "./loop.js";
import { approvedInSession } from "./plan-file.js";
import type { RunHow } from "./session-runner.js";

/** Whether a goal is planned first: asked for (`--plan`, `/plan`, the editor's mode) or the configured default. */
export function plansFirst(config: Config, asked: { plan?: boolean; acting?: boolean } = {}): boolean {
  if (asked.plan) return true;
  // A run told to act (`--execute-plan`, `--output-schema`) does not plan first by default.
  return !asked.acting && config.agent.default_mode === "plan";
}

/** Whether a plan the person approved in the session narrows the gate to what it names. */
export function planBinds(config: Config): boolean {
  return config.agent.plan_binding === "strict";
}

/** A person's answer to a plan: run it, drop it (and why), or plan again with their feedback. */
export type PlanVerdict =
  | { kind: "run" }
  | { kind: "drop"; why: string; cancelled?: boolean }
  | { kind: "revise"; feedback: string };

/** Who reviews a plan. Its `review` shows the plan and waits for the answer. */
export interface PlanReviewer {
  review(plan: Plan, signal: AbortSignal): Promise<PlanVerdict>;
}

/** How a planned goal ended: a run's result, a plan that was not run, or a record that could not be written. */
export type PlannedEnd =
  | { kind: "result"; result: RunResult }
  | { kind: "not_run"; plan: Plan; why: string; cancelled: boolean }
  | { kind: "unrecorded"; error: string };

export interface PlannedGoal {
  goal: string;
  via: "repl" | "acp";
  binds: boolean;
  reviewer: PlanReviewer;
  signal: AbortSignal;
  /** One run of the session (planning or carrying out). */
  run(request: string, how: RunHow): Promise<RunResult>;
  /** The session's record of a plan not run, or sent back for a new one. */
  planReviewed(plan: Plan, outcome: { notRun: string } | "revise"): Result<void, string>;
  /** Each run's result as it comes (the REPL shows it). */
  onResult?(r: RunResult): void;
}

/** Plan the goal, have the plan reviewed, then run it, drop it, or plan again with the feedback. */
export async function planThenRun(g: PlannedGoal): Promise<PlannedEnd> {
  let request = g.goal;
  for (;;) {
    const planned = await g.run(request, { plan: true });
    g.onResult?.(planned);
    const plan = planned.plan;
    if (planned.stop !== "plan" || !plan) return { kind: "result", result: planned };
    const verdict = await g.reviewer.review(plan, g.signal);
    if (verdict.kind === "run" && !g.signal.aborted) {
      const result = await g.run(g.goal, { execute: approvedInSession(plan, g.via, g.binds) });
      g.onResult?.(result);
      return { kind: "result", result };
    }
    const dropped =
      verdict.kind === "run"
        ? { why: "the prompt was cancelled", cancelled: true }
        : verdict.kind === "drop"
          ? { why: verdict.why, cancelled: verdict.cancelled === true }
          : undefined;
    const recorded = g.planReviewed(plan, dropped ? { notRun: dropped.why } : "revise");
    if (!recorded.ok) return { kind: "unrecorded", error: recorded.error };
    if (dropped) return { kind: "not_run", plan, ...dropped };
    if (verdict.kind === "revise") request = revisionRequest(g.goal, verdict.feedback);
  }
}

/** The person's feedback, as the next planning request carries it. */
export function revisionRequest(goal: string, feedback: string): string {
  return `${feedback}\n\n${NOTE_PREFIX}the user's feedback on the plan above: reply with a new plan for the goal "${goal}"]`;
}
