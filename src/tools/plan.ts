/**
 * `plan`: in plan mode (docs/safety.md "Plan mode") the model answers with a plan instead of
 * acting. Like `final` it is a step, not a call: the pipeline never runs it, and it ends the run
 * with the plan. It is offered only to a planning run, so a normal run's prompt does not grow.
 */
import { clip } from "../core/clip.js";
import type { Result } from "../core/types.js";
import { kindOf, parseObject } from "./json-input.js";
import { done } from "./result.js";
import type { Tool } from "./types.js";

export const PLAN_ACTION = "plan";

/**
 * Steps one plan may hold: a plan is read by a person before anything runs, and a longer one
 * is a sign the goal should be split (and keeps one step's correction and record bounded).
 */
export const MAX_PLAN_STEPS = 30;
/** Characters of one title: a checklist line. */
export const MAX_TITLE_CHARS = 200;
/** Characters of one step's detail. */
export const MAX_DETAIL_CHARS = 2000;
/** Entries in one step's `files`, `commands` or `hosts`. */
export const MAX_LIST_ENTRIES = 50;
/** Characters of one entry of those lists. */
export const MAX_ENTRY_CHARS = 500;

export interface PlanStep {
  title: string;
  detail?: string;
  files?: string[];
  commands?: string[];
  hosts?: string[];
}

export interface Plan {
  steps: PlanStep[];
}

const STEP_KEYS = ["title", "detail", "files", "commands", "hosts"] as const;
const LIST_KEYS = ["files", "commands", "hosts"] as const;
const EXAMPLE = '{"steps": [{"title": "Add the test", "files": ["test/a.test.ts"]}]}';

function fail(error: string): Result<never> {
  return { ok: false, error };
}

function stringList(where: string, v: unknown): Result<string[]> {
  if (!Array.isArray(v)) return fail(`${where} must be an array of strings, got ${kindOf(v)}`);
  if (v.length > MAX_LIST_ENTRIES)
    return fail(`${where} has ${v.length} entries; at most ${MAX_LIST_ENTRIES}`);
  for (const [i, e] of v.entries()) {
    if (typeof e !== "string") return fail(`${where}[${i}] must be a string, got ${kindOf(e)}`);
    if (e.length > MAX_ENTRY_CHARS)
      return fail(`${where}[${i}] is longer than ${MAX_ENTRY_CHARS} characters`);
  }
  return { ok: true, value: v as string[] };
}

function planStep(i: number, v: unknown): Result<PlanStep> {
  const where = `plan: steps[${i}]`;
  if (v === null || typeof v !== "object" || Array.isArray(v))
    return fail(`${where} must be an object such as {"title": "…"}, got ${kindOf(v)}`);
  const o = v as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !(STEP_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0)
    return fail(
      `${where} has the unknown key ${unknown.map((k) => JSON.stringify(clip(k, 40))).join(", ")}; allowed: ${STEP_KEYS.join(", ")}`,
    );
  if (o.title === undefined) return fail(`${where}.title is required`);
  if (typeof o.title !== "string" || o.title.trim() === "")
    return fail(`${where}.title must be a non-empty string`);
  if (o.title.length > MAX_TITLE_CHARS)
    return fail(`${where}.title is longer than ${MAX_TITLE_CHARS} characters`);
  const step: PlanStep = { title: o.title.trim() };
  if (o.detail !== undefined && o.detail !== null) {
    if (typeof o.detail !== "string")
      return fail(`${where}.detail must be a string, got ${kindOf(o.detail)}`);
    if (o.detail.length > MAX_DETAIL_CHARS)
      return fail(`${where}.detail is longer than ${MAX_DETAIL_CHARS} characters`);
    if (o.detail.trim() !== "") step.detail = o.detail;
  }
  for (const key of LIST_KEYS) {
    if (o[key] === undefined || o[key] === null) continue;
    const list = stringList(`${where}.${key}`, o[key]);
    if (!list.ok) return list;
    if (list.value.length > 0) step[key] = list.value;
  }
  return { ok: true, value: step };
}

/** Validates a plan's JSON text; every refusal names the defect's place (`plan: steps[2].title is required`). */
export function parsePlan(raw: string): Result<Plan> {
  const obj = parseObject(PLAN_ACTION, raw, ["steps"], EXAMPLE);
  if (!obj.ok) return obj;
  const steps = obj.value.steps;
  if (steps === undefined) return fail(`plan: "steps" is required, e.g. ${EXAMPLE}`);
  if (!Array.isArray(steps)) return fail(`plan: "steps" must be an array, got ${kindOf(steps)}`);
  if (steps.length === 0) return fail("plan: steps is empty; a plan has at least one step");
  if (steps.length > MAX_PLAN_STEPS)
    return fail(`plan: ${steps.length} steps; at most ${MAX_PLAN_STEPS}: merge steps or plan a smaller goal`);
  const out: PlanStep[] = [];
  for (const [i, s] of steps.entries()) {
    const step = planStep(i, s);
    if (!step.ok) return step;
    out.push(step.value);
  }
  return { ok: true, value: { steps: out } };
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
