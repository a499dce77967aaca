/**
 * An approved plan read back from a file (docs/safety.md "Plans as contracts"): what
 * `scoot --execute-plan FILE` and a job's `plan_file` take. The file holds the output of
 * `scoot --plan -e goal --json` (`{"status": "plan", "plan": {"steps": […]}, …}`) or just its
 * `plan` object (its shape: docs/safety.md "Plans as contracts"). It is checked whole — every step, every
 * field — and its SHA-256 is taken of the plan object as canonical JSON (keys in a fixed order,
 * no whitespace), so the same plan hashes the same whether it came wrapped or bare, pretty-printed
 * or not, and an edit to any step changes the hash.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Result } from "../core/types.js";

/** A plan file is a reviewed document, not data: anything larger is not a plan someone read. */
export const MAX_PLAN_FILE_BYTES = 1024 * 1024;
/** Steps a plan may hold: the producer's bound, with room to spare (a plan is read by a person). */
export const MAX_PLAN_STEPS = 50;
/** A step's title: one short line. */
export const MAX_TITLE_CHARS = 200;
/** A step's detail: a paragraph or two. */
export const MAX_DETAIL_CHARS = 4000;
/** Files, commands or hosts one step may name. */
export const MAX_STEP_ITEMS = 100;
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

/** A plan checked and hashed: what a run binds itself to. */
export interface ApprovedPlan {
  plan: Plan;
  /** Hex SHA-256 of the canonical plan object. */
  sha256: string;
  /** Where it was read from, as given (audit and errors name it). */
  source: string;
}

const STEP_KEYS = ["title", "detail", "files", "commands", "hosts"] as const;
const LIST_KEYS = ["files", "commands", "hosts"] as const;
/** A file the plan names is one file: a glob would approve files nobody saw listed. */
const GLOB_CHARS = /[*?[\]{}]/;
/** Control characters: never part of a name a person reviewed. */
const CONTROL = /[\u0000-\u001f\u007f]/;
/** A host as a plan names it: a name or address, an optional port; no scheme, user or path. */
const HOST_TEXT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;
/** 64 hex digits. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The plan object as canonical JSON: the bytes its SHA-256 is taken of. */
export function canonicalPlan(plan: Plan): string {
  return JSON.stringify({
    steps: plan.steps.map((s) => {
      const out: Record<string, unknown> = { title: s.title };
      for (const k of ["detail", ...LIST_KEYS] as const) if (s[k] !== undefined) out[k] = s[k];
      return out;
    }),
  });
}

export function planSha256(plan: Plan): string {
  return createHash("sha256").update(canonicalPlan(plan)).digest("hex");
}

/**
 * A host in the form the narrowing compares: lower-case name, `:port` only when it is not
 * 80 or 443 (a URL on its scheme's default port carries none). Undefined: not a host.
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

type Checked<T> = Result<T>;

function checkString(v: unknown, where: string, max: number): Checked<string> {
  if (typeof v !== "string") return { ok: false, error: `${where} must be a string` };
  if (v.trim() === "") return { ok: false, error: `${where} is empty` };
  if (v.length > max) return { ok: false, error: `${where} is ${v.length} characters; the limit is ${max}` };
  return { ok: true, value: v };
}

function checkItem(key: (typeof LIST_KEYS)[number], v: string, where: string): string | undefined {
  if (CONTROL.test(v)) return `${where} contains a control character (a newline, a tab, NUL)`;
  if (key === "files" && GLOB_CHARS.test(v))
    return `${where} "${v}" is a pattern; a plan names each file it changes (globs are not allowed)`;
  if (key === "hosts" && normalHost(v) === undefined)
    return `${where} "${v}" is not a host; write a host name with an optional port, such as "api.example.com" or "localhost:8080" (no scheme, user or path)`;
  return undefined;
}

function checkStep(raw: unknown, where: string): Checked<PlanStep> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { ok: false, error: `${where} must be an object with a "title"` };
  const obj = raw as Record<string, unknown>;
  for (const k of Object.keys(obj))
    if (!(STEP_KEYS as readonly string[]).includes(k))
      return {
        ok: false,
        error: `${where} has an unknown field "${k}" (a step has ${STEP_KEYS.join(", ")})`,
      };
  const title = checkString(obj.title, `${where}.title`, MAX_TITLE_CHARS);
  if (!title.ok) return title;
  const step: PlanStep = { title: title.value };
  if (obj.detail !== undefined) {
    const detail = checkString(obj.detail, `${where}.detail`, MAX_DETAIL_CHARS);
    if (!detail.ok) return detail;
    step.detail = detail.value;
  }
  for (const key of LIST_KEYS) {
    const list = obj[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return { ok: false, error: `${where}.${key} must be a list of strings` };
    if (list.length > MAX_STEP_ITEMS)
      return {
        ok: false,
        error: `${where}.${key} names ${list.length} items; the limit is ${MAX_STEP_ITEMS}`,
      };
    const out: string[] = [];
    for (let i = 0; i < list.length; i++) {
      const item = checkString(list[i], `${where}.${key}[${i}]`, MAX_ITEM_CHARS);
      if (!item.ok) return item;
      const bad = checkItem(key, item.value, `${where}.${key}[${i}]`);
      if (bad) return { ok: false, error: bad };
      out.push(item.value);
    }
    step[key] = out;
  }
  return { ok: true, value: step };
}

/** Checks a parsed plan document: the `--plan --json` output or its `plan` object. */
export function checkPlanDocument(doc: unknown): Checked<Plan> {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    return {
      ok: false,
      error: 'a plan file holds a JSON object: {"steps": […]} or the output of scoot --plan --json',
    };
  let plan = doc as Record<string, unknown>;
  if (!("steps" in plan) && "plan" in plan) {
    const status = plan.status;
    if (status !== undefined && status !== "plan")
      return { ok: false, error: `status is "${String(status)}", not "plan": this output holds no plan` };
    if (typeof plan.plan !== "object" || plan.plan === null || Array.isArray(plan.plan))
      return { ok: false, error: 'plan must be an object {"steps": […]}' };
    plan = plan.plan as Record<string, unknown>;
  }
  for (const k of Object.keys(plan))
    if (k !== "steps")
      return { ok: false, error: `plan has an unknown field "${k}" (a plan has only "steps")` };
  const steps = plan.steps;
  if (!Array.isArray(steps)) return { ok: false, error: 'plan has no "steps" list' };
  if (steps.length === 0) return { ok: false, error: "plan.steps is empty: a plan has at least one step" };
  if (steps.length > MAX_PLAN_STEPS)
    return { ok: false, error: `plan has ${steps.length} steps; the limit is ${MAX_PLAN_STEPS}` };
  const out: PlanStep[] = [];
  for (let i = 0; i < steps.length; i++) {
    // People number steps from 1, as the plan is shown.
    const step = checkStep(steps[i], `step ${i + 1}`);
    if (!step.ok) return step;
    out.push(step.value);
  }
  return { ok: true, value: { steps: out } };
}

/**
 * Reads, checks and hashes a plan file. `file` is resolved against `cwd`; `expectedSha256`
 * (the hash recorded when the plan was approved) refuses a file whose plan changed since.
 * Every error names the file.
 */
export function loadPlanFile(file: string, cwd: string, expectedSha256?: string): Result<ApprovedPlan> {
  const fail = (why: string): Result<ApprovedPlan> => ({ ok: false, error: `plan file ${file}: ${why}` });
  if (expectedSha256 !== undefined && !SHA256_HEX.test(expectedSha256))
    return fail(`the expected SHA-256 "${expectedSha256}" is not 64 lower-case hex digits`);
  const abs = path.resolve(cwd, file);
  let text: string;
  try {
    const st = fs.statSync(abs);
    if (!st.isFile()) return fail("is not a regular file");
    if (st.size > MAX_PLAN_FILE_BYTES)
      return fail(
        `is ${st.size} bytes; the limit is ${MAX_PLAN_FILE_BYTES} (a plan is a document a person reviewed)`,
      );
    text = fs.readFileSync(abs, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return fail(code === "ENOENT" ? "does not exist" : `cannot be read: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return fail(`is not JSON: ${(e as Error).message}`);
  }
  const plan = checkPlanDocument(doc);
  if (!plan.ok) return fail(plan.error);
  const sha256 = planSha256(plan.value);
  if (expectedSha256 !== undefined && sha256 !== expectedSha256)
    return fail(
      `its plan has SHA-256 ${sha256}, not the approved ${expectedSha256}: it changed after approval; review it again and pass its new hash`,
    );
  return { ok: true, value: { plan: plan.value, sha256, source: file } };
}
