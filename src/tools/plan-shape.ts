/**
 * The plan's one shape (docs/safety.md "Plan mode"): what the model's `plan` step
 * gives, what `scoot --plan -e … --json` prints, what `--execute-plan FILE` reads back and what
 * an approval's SHA-256 is taken of. One checker serves all of them, so a plan a planning run
 * produced is always one `--execute-plan` accepts, and the hash shown when it was approved is
 * the hash `--plan-sha256` compares.
 */
import { createHash } from "node:crypto";
import { clip } from "../core/clip.js";
import type { Result } from "../core/types.js";
import { kindOf as kind } from "./json-input.js";
import { parsePlanCommand } from "./plan-command.js";

/**
 * Steps one plan may hold: a plan is read by a person before anything runs, and a longer one is
 * a sign the goal should be split (it also keeps one correction and one record bounded).
 */
export const MAX_PLAN_STEPS = 30;
/** A step's title: one checklist line. */
export const MAX_TITLE_CHARS = 200;
/** A step's detail: a paragraph or two. */
export const MAX_DETAIL_CHARS = 4000;
/** Files, commands or hosts one step may name. */
export const MAX_STEP_ITEMS = 50;
/** One file path, command or host. */
export const MAX_ITEM_CHARS = 1000;

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

export const STEP_KEYS = ["title", "detail", "files", "commands", "hosts"] as const;
const LIST_KEYS = ["files", "commands", "hosts"] as const;
/** A file the plan names is one file: a glob would approve files nobody saw listed. */
const GLOB_CHARS = /[*?[\]{}]/;
/** Control characters: never part of a name a person reviewed. */
const CONTROL = /[\u0000-\u001f\u007f]/;
/** A host as a plan names it: a name or address, an optional port; no scheme, user or path. */
const HOST_TEXT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;

/**
 * A host in the form the narrowing compares: lower-case name, `:port` only when it is not 80 or
 * 443 (a URL on its scheme's default port carries none). Undefined: not a host.
 */
export function normalHost(text: string): string | undefined {
  if (!HOST_TEXT.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${text}/`);
  } catch {
    return undefined;
  }
  const port = url.port === "" || url.port === "443" ? "" : `:${url.port}`;
  return `${url.hostname}${port}`;
}

function fail(error: string): Result<never> {
  return { ok: false, error };
}

function checkText(v: unknown, where: string, max: number): Result<string> {
  if (typeof v !== "string") return fail(`${where} must be a string, got ${kind(v)}`);
  if (v.trim() === "") return fail(`${where} is empty`);
  if (v.length > max) return fail(`${where} is ${v.length} characters; the limit is ${max}`);
  return { ok: true, value: v };
}

function checkItem(key: (typeof LIST_KEYS)[number], v: string, where: string): string | undefined {
  if (CONTROL.test(v)) return `${where} contains a control character (a newline, a tab, NUL)`;
  if (key === "files" && GLOB_CHARS.test(v))
    return `${where} "${clip(v, 80)}" is a pattern; a plan names each file it changes (globs are not allowed)`;
  if (key === "commands") {
    const command = parsePlanCommand(v);
    if (!command.ok) return `${where} "${clip(v, 80)}" ${command.error}`;
  }
  if (key === "hosts" && normalHost(v) === undefined)
    return `${where} "${clip(v, 80)}" is not a host; write a host name with an optional port, such as "api.example.com" or "localhost:8080" (no scheme, user or path)`;
  return undefined;
}

function checkList(key: (typeof LIST_KEYS)[number], v: unknown, where: string): Result<string[]> {
  if (!Array.isArray(v)) return fail(`${where} must be a list of strings, got ${kind(v)}`);
  if (v.length > MAX_STEP_ITEMS)
    return fail(`${where} names ${v.length} items; the limit is ${MAX_STEP_ITEMS}`);
  const out: string[] = [];
  for (const [i, e] of v.entries()) {
    const item = checkText(e, `${where}[${i}]`, MAX_ITEM_CHARS);
    if (!item.ok) return item;
    const bad = checkItem(key, item.value, `${where}[${i}]`);
    if (bad) return fail(bad);
    out.push(item.value);
  }
  return { ok: true, value: out };
}

function checkStep(raw: unknown, where: string): Result<PlanStep> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return fail(`${where} must be an object such as {"title": "…"}, got ${kind(raw)}`);
  const obj = raw as Record<string, unknown>;
  const unknown = Object.keys(obj).filter((k) => !(STEP_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0)
    return fail(
      `${where} has an unknown field ${unknown.map((k) => JSON.stringify(clip(k, 40))).join(", ")} (a step has ${STEP_KEYS.join(", ")})`,
    );
  if (obj.title === undefined || obj.title === null) return fail(`${where}.title is required`);
  const title = checkText(obj.title, `${where}.title`, MAX_TITLE_CHARS);
  if (!title.ok) return title;
  // Normalized so checking a checked plan changes nothing: the hash of what was printed is the
  // hash of what is read back.
  const step: PlanStep = { title: title.value.trim() };
  if (obj.detail !== undefined && obj.detail !== null) {
    if (typeof obj.detail !== "string")
      return fail(`${where}.detail must be a string, got ${kind(obj.detail)}`);
    if (obj.detail.length > MAX_DETAIL_CHARS)
      return fail(`${where}.detail is ${obj.detail.length} characters; the limit is ${MAX_DETAIL_CHARS}`);
    if (obj.detail.trim() !== "") step.detail = obj.detail;
  }
  for (const key of LIST_KEYS) {
    if (obj[key] === undefined || obj[key] === null) continue;
    const list = checkList(key, obj[key], `${where}.${key}`);
    if (!list.ok) return list;
    if (list.value.length > 0) step[key] = list.value;
  }
  return { ok: true, value: step };
}

/**
 * Checks a plan object `{"steps": […]}`. Steps are named as people number them, from 1
 * (`step 3.title is required`), as the plan is shown and as `plan_step` counts.
 */
export function checkPlan(raw: unknown): Result<Plan> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return fail(`a plan is an object {"steps": […]}, got ${kind(raw)}`);
  const obj = raw as Record<string, unknown>;
  const unknown = Object.keys(obj).filter((k) => k !== "steps");
  if (unknown.length > 0)
    return fail(
      `the plan has an unknown field ${JSON.stringify(clip(unknown[0] ?? "", 40))} (a plan has only "steps")`,
    );
  const steps = obj.steps;
  if (steps === undefined) return fail('"steps" is required');
  if (!Array.isArray(steps)) return fail(`"steps" must be a list, got ${kind(steps)}`);
  if (steps.length === 0) return fail("steps is empty: a plan has at least one step");
  if (steps.length > MAX_PLAN_STEPS)
    return fail(
      `the plan has ${steps.length} steps; the limit is ${MAX_PLAN_STEPS}: merge steps or plan a smaller goal`,
    );
  const out: PlanStep[] = [];
  for (const [i, s] of steps.entries()) {
    const step = checkStep(s, `step ${i + 1}`);
    if (!step.ok) return step;
    out.push(step.value);
  }
  return { ok: true, value: { steps: out } };
}

/** The plan object as canonical JSON (fixed key order, no whitespace): the bytes its SHA-256 is taken of. */
export function canonicalPlan(plan: Plan): string {
  return JSON.stringify({
    steps: plan.steps.map((s) => {
      const out: Record<string, unknown> = { title: s.title };
      for (const k of ["detail", ...LIST_KEYS] as const) if (s[k] !== undefined) out[k] = s[k];
      return out;
    }),
  });
}

/** Hex SHA-256 of the canonical plan: what an approval records and `--plan-sha256` compares. */
export function planSha256(plan: Plan): string {
  return createHash("sha256").update(canonicalPlan(plan)).digest("hex");
}
