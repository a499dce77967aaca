/**
 * Progress from evidence (docs/safety.md "Plan mode"): while a plan runs, a step the model says
 * is done is shown done only when a call it attributed to that step (`plan_step: N` on the step
 * that made the call) ran and succeeded and touched what the step names — one of its files
 * written, or one of its commands run — or, for a step that names neither, when any call
 * attributed to it succeeded. A denied, refused, failed or interrupted call never counts. A
 * "done" without evidence is shown as claimed; a later "done" for the step, once a call has
 * given the evidence, shows it done.
 */
import path from "node:path";
import type { CallOutcome } from "../store/session.js";
import type { Plan } from "../tools/plan-shape.js";
import type { Prepared } from "./call-record.js";
import { commandNotInPlan, planScope } from "./plan-narrow.js";
import type { PlanStatus } from "./step.js";

/** How a step stands on the checklist: the model's word, or "claimed" for a "done" without evidence. */
export type PlanStepState = PlanStatus | "claimed";

/** What a call attributed to a step showed, in words for the audit. */
export interface StepEvidence {
  step: number;
  /** The call counts as evidence that the step was done. */
  counts: boolean;
  /** Why (or why not), for the audit record. */
  why: string;
}

export interface PlanEvidence {
  /** A call attributed to step `step` ended with `outcome`: whether it counts, and why. */
  attribute(step: number, call: Prepared, outcome: CallOutcome): StepEvidence;
  /** The model said step `step` stands at `status`: the state shown. */
  claim(step: number, status: PlanStatus): PlanStepState;
  /** Counts for the closing line. */
  counts(): { total: number; done: number; claimed: number; skipped: number };
}

function shownCommand(command: string): string {
  const one = command.trim().replace(/\s+/g, " ");
  return JSON.stringify(one.length > 80 ? `${one.slice(0, 79)}…` : one);
}

export function planEvidence(plan: Plan, root: string): PlanEvidence {
  const scopes = plan.steps.map((s) => planScope({ steps: [s] }, root));
  const proven = new Set<number>();
  const states = new Map<number, PlanStepState>();

  /** What the call did that the step names, or undefined when it touched nothing the step names. */
  const touchedNamed = (step: number, call: Prepared): string | undefined => {
    const scope = scopes[step - 1]!;
    const effects = call.kind === "invalid" ? undefined : call.effects;
    if (scope.files.size === 0 && scope.commands.length === 0) return "the step names no file or command";
    if (effects?.command !== undefined && commandNotInPlan(effects.command, scope) === undefined)
      return `ran ${shownCommand(effects.command)}, which the step names`;
    const written = (effects?.writePaths ?? []).map((p) => path.resolve(root, p));
    const named = written.find((p) => scope.files.has(p));
    if (named !== undefined) return `wrote ${path.relative(root, named) || named}, which the step names`;
    return undefined;
  };

  return {
    attribute(step, call, outcome) {
      if (step < 1 || step > plan.steps.length) return { step, counts: false, why: "no such step" };
      const what = call.action;
      const exit = outcome.exit_code;
      if (outcome.outcome === "ran" && exit !== undefined && exit !== 0)
        return { step, counts: false, why: `${what} exited ${exit}: not evidence` };
      if (outcome.outcome !== "ran") {
        const code = exit !== undefined ? ` (exit ${exit})` : "";
        return { step, counts: false, why: `${what} ${outcome.outcome}${code}: not evidence` };
      }
      const touched = touchedNamed(step, call);
      if (touched === undefined)
        return {
          step,
          counts: false,
          why: `${what} succeeded but touched nothing step ${step} names: not evidence`,
        };
      proven.add(step);
      return { step, counts: true, why: `${what} succeeded and ${touched}` };
    },
    claim(step, status) {
      const state: PlanStepState = status === "done" && !proven.has(step) ? "claimed" : status;
      states.set(step, state);
      return state;
    },
    counts() {
      const all = [...states.values()];
      const n = (k: PlanStepState) => all.filter((s) => s === k).length;
      return { total: plan.steps.length, done: n("done"), claimed: n("claimed"), skipped: n("skipped") };
    },
  };
}
