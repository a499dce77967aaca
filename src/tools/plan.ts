/**
 * `plan`: in plan mode (docs/safety.md "Plan mode") the model answers with a plan instead of
 * acting. Like `final` it is a step, not a call: the pipeline never runs it, and it ends the run
 * with the plan. It is offered only to a planning run, so a normal run's prompt does not grow.
 */
import type { Result } from "../core/types.js";
import { checkPlan, type Plan } from "./plan-shape.js";
import { done } from "./result.js";
import type { Tool } from "./types.js";

export const PLAN_ACTION = "plan";

const EXAMPLE = '{"steps": [{"title": "Add the test", "files": ["test/a.test.ts"]}]}';

/** Validates a plan's JSON text; every refusal names the defect's place (`plan: step 3.title is required`). */
export function parsePlan(raw: string): Result<Plan> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    return {
      ok: false,
      error: `plan: action_input must be a JSON object such as ${EXAMPLE}; it is not valid JSON (${(e as Error).message})`,
    };
  }
  const plan = checkPlan(value);
  return plan.ok ? plan : { ok: false, error: `plan: ${plan.error}; e.g. ${EXAMPLE}` };
}

/** The plan as a person reads it: numbered steps, each with its detail and what it touches. */
export function formatPlan(plan: Plan): string {
  const lines: string[] = [];
  for (const [i, s] of plan.steps.entries()) {
    lines.push(`${i + 1}. ${s.title}`);
    if (s.detail) for (const l of s.detail.split("\n")) lines.push(`   ${l}`);
    if (s.files) lines.push(`   files: ${s.files.join(", ")}`);
    if (s.commands) lines.push(`   commands: ${s.commands.join("; ")}`);
    if (s.hosts) lines.push(`   hosts: ${s.hosts.join(", ")}`);
  }
  return `${lines.join("\n")}\n`;
}

export const planTool: Tool<Plan> = {
  name: PLAN_ACTION,
  describe: "Give the plan and stop; nothing is executed before the user approves it.",
  inputShape:
    '{"steps": [{"title": "...", "detail": "...", "files": [...], "commands": [...], "hosts": [...]}]}',
  inputFields: ["steps"],
  clipBytes: Number.POSITIVE_INFINITY,
  parse: parsePlan,
  enabledWhen: (run) => run.planning === true,
  endsRunAsPlan: true,
  effects() {
    return { capability: "native" };
  },
  present: (plan) => ({ title: "Plan", keyArgument: `${plan.steps.length} steps`, locations: [] }),
  async run(plan) {
    return done(formatPlan(plan));
  },
};
