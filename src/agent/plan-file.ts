/**
 * An approved plan read back from a file (docs/safety.md "Plans as contracts"): what
 * `scoot --execute-plan FILE` and a job's `plan_file` take. The file holds the output of
 * `scoot --plan -e goal --json` (`{"status": "plan", "plan": {"steps": […]}, …}`) or just its
 * `plan` object (its shape: docs/safety.md "Plans as contracts"). It is checked whole — every step, every
 * field — and its SHA-256 is taken of the plan object as canonical JSON (keys in a fixed order,
 * no whitespace), so the same plan hashes the same whether it came wrapped or bare, pretty-printed
 * or not, and an edit to any step changes the hash.
 */
import fs from "node:fs";
import path from "node:path";
import type { Result } from "../core/types.js";
import { checkPlan, type Plan, planSha256 } from "../tools/plan-shape.js";

/** A plan file is a reviewed document, not data: anything larger is not a plan someone read. */
export const MAX_PLAN_FILE_BYTES = 1024 * 1024;

/** A plan checked, hashed and approved: what a run carries out. */
export interface ApprovedPlan {
  plan: Plan;
  /** Hex SHA-256 of the canonical plan object. */
  sha256: string;
  /** Who approved it, as the audit record names it: `file=plan.json` or `by=user via=repl`. */
  origin: string;
  /** Whether the gate is narrowed to it (docs/safety.md "Plans as contracts"). */
  binds: boolean;
}

/**
 * A plan a person approved in a session (the REPL's `y`, an editor's permission): its hash
 * taken now, bound only when `agent.plan_binding = "strict"`.
 */
export function approvedInSession(plan: Plan, via: "repl" | "acp", binds: boolean): ApprovedPlan {
  return { plan, sha256: planSha256(plan), origin: `by=user via=${via}`, binds };
}

/** 64 hex digits. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Checks a parsed plan document: the `--plan --json` output or its `plan` object. */
export function checkPlanDocument(doc: unknown): Result<Plan> {
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
  return checkPlan(plan);
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
  // A plan file is an approval committed ahead of the run: it always binds.
  return { ok: true, value: { plan: plan.value, sha256, origin: `file=${file}`, binds: true } };
}
