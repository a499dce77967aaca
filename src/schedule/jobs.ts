/**
 * Scheduled jobs: validation of the raw `[[schedule.jobs]]` tables and each job's effective
 * policy mode. A bad job is skipped with a reason naming it; the good ones still run.
 *
 * Effective mode — jobs are unattended work, so they get exactly the `--unattended` clamp:
 * `effectiveUnattended(job.mode, edge.max_job_policy)`. `guarded` becomes `readonly` (its
 * screening assumes someone reads the trace). An explicit `mode = "unrestricted"` is an
 * operator's choice for *that job*, but it does not bypass the ceiling: `edge.max_job_policy`
 * is the operator's choice for *all unattended work* (default readonly), and loosening a job
 * must take both decisions. So `unrestricted` runs unrestricted only when the ceiling is also
 * `unrestricted`; otherwise it is lowered, and the warning printed at every start says so.
 * An unknown mode string becomes `readonly` with a warning, as every policy string in the
 * configuration file does: a typo never loosens the gate.
 */

import { SHA256_HEX } from "../agent/plan-file.js";
import { type Config, type JobConfig, LIMITS, type PolicyMode } from "../config/schema.js";
import type { Result } from "../core/types.js";
import { effectiveUnattended, parsePolicyMode } from "../policy/modes.js";
import { jobSessionId } from "../store/session.js";
import { type CronSpec, cronEverFires, parseCron } from "./cron.js";

export const JOB_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** An `at_unix` this large is almost certainly milliseconds written where seconds were meant. */
const AT_UNIX_MAX = 100_000_000_000;
const KNOWN_KEYS = new Set([
  "id",
  "goal",
  "every_sec",
  "at_unix",
  "cron",
  "mode",
  "plan_file",
  "plan_sha256",
]);
const TRIGGER_KEYS = ["every_sec", "at_unix", "cron"] as const;

export type Trigger =
  | { kind: "every_sec"; seconds: number }
  | { kind: "at_unix"; seconds: number }
  | { kind: "cron"; spec: CronSpec };

export interface Job {
  id: string;
  goal: string;
  trigger: Trigger;
  /** The mode as written (after alias and fallback), before the unattended clamp. */
  requestedMode: PolicyMode;
  /** The mode the job's runs get. */
  mode: PolicyMode;
  sessionId: string;
  /**
   * The approved plan every run of the job is bound to (docs/unattended.md "Jobs", docs/safety.md
   * "Plans as contracts"): its file (relative to the scheduler's directory) and the SHA-256 it was
   * approved with. Read again at every firing: a plan that changed since — even by the job's own
   * run — refuses the firing.
   */
  plan?: { file: string; sha256: string };
  /** Printed at every scheduler start: lowered or unrestricted modes, unknown keys, bad mode strings. */
  notes: string[];
}

export interface InvalidJob {
  /** The id if it is a usable string, else a position label like `jobs[2]`. */
  label: string;
  index: number;
  reason: string;
}

export interface JobSet {
  jobs: Job[];
  invalid: InvalidJob[];
}

/** A stable text form of the trigger: state is reset when the operator changes a job's trigger. */
export function triggerKey(t: Trigger): string {
  switch (t.kind) {
    case "every_sec":
      return `every_sec=${t.seconds}`;
    case "at_unix":
      return `at_unix=${t.seconds}`;
    case "cron":
      return `cron=${t.spec.source}`;
  }
}

export function describeTrigger(t: Trigger): string {
  switch (t.kind) {
    case "every_sec":
      return `every ${t.seconds} s`;
    case "at_unix":
      return `at ${new Date(t.seconds * 1000).toISOString()}`;
    case "cron":
      return `cron "${t.spec.source}" (UTC)`;
  }
}

function isWholeNumber(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v);
}

function parseTrigger(raw: JobConfig): { ok: true; value: Trigger } | { ok: false; error: string } {
  const present = TRIGGER_KEYS.filter((k) => raw[k] !== undefined);
  if (present.length === 0)
    return { ok: false, error: "needs exactly one of every_sec, at_unix, cron (none given)" };
  if (present.length > 1) {
    return {
      ok: false,
      error: `needs exactly one of every_sec, at_unix, cron (got ${present.join(" and ")})`,
    };
  }
  const key = present[0]!;
  const value = raw[key];
  if (key === "every_sec") {
    if (!isWholeNumber(value) || value < 1 || value > LIMITS.EVERY_SEC_MAX) {
      return {
        ok: false,
        error: `every_sec must be a whole number in 1..${LIMITS.EVERY_SEC_MAX}, got ${show(value)}`,
      };
    }
    return { ok: true, value: { kind: "every_sec", seconds: value } };
  }
  if (key === "at_unix") {
    if (!isWholeNumber(value) || value < 0) {
      return { ok: false, error: `at_unix must be a whole number of seconds since 1970, got ${show(value)}` };
    }
    if (value > AT_UNIX_MAX) {
      return {
        ok: false,
        error: `at_unix ${value} is too large: it looks like milliseconds; at_unix is in seconds`,
      };
    }
    return { ok: true, value: { kind: "at_unix", seconds: value } };
  }
  if (typeof value !== "string") return { ok: false, error: `cron must be a string, got ${show(value)}` };
  const spec = parseCron(value);
  if (!spec.ok) return { ok: false, error: spec.error };
  if (!cronEverFires(spec.value)) return { ok: false, error: `cron "${value}" never matches a real date` };
  return { ok: true, value: { kind: "cron", spec: spec.value } };
}

function show(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (v === null || v === undefined) return String(v);
  if (typeof v === "object") return Array.isArray(v) ? "a list" : "a table";
  return String(v);
}

/** Where the hash a job's `plan_sha256` pins comes from, for the messages that ask for it. */
const WHERE_THE_HASH_IS =
  'scoot --plan -e "goal" --json prints it as "plan_sha256" beside the plan; the plan\'s audit records name it as sha256=…';

/**
 * `plan_file` and `plan_sha256`: their types here; the file itself is checked at every firing.
 * A plan file is pinned: without `plan_sha256` a plan the job's own run rewrote would run.
 */
function parseJobPlan(raw: JobConfig): Result<Job["plan"]> {
  const file = raw.plan_file;
  const sha = raw.plan_sha256;
  if (file === undefined) {
    if (sha !== undefined) return { ok: false, error: "plan_sha256 needs plan_file" };
    return { ok: true, value: undefined };
  }
  if (typeof file !== "string" || file.trim() === "")
    return { ok: false, error: `plan_file must be the path of a plan file, got ${show(file)}` };
  if (sha === undefined)
    return {
      ok: false,
      error: `plan_file ${show(file)} needs plan_sha256, the SHA-256 of the plan as it was approved (${WHERE_THE_HASH_IS}), so that a plan that changed never runs`,
    };
  if (typeof sha !== "string" || !SHA256_HEX.test(sha))
    return {
      ok: false,
      error: `plan_sha256 must be 64 lower-case hex digits, got ${show(sha)} (${WHERE_THE_HASH_IS})`,
    };
  return { ok: true, value: { file, sha256: sha } };
}

/** Validates one job table; `seen` maps ids already taken to their index. */
function validateJob(
  raw: JobConfig,
  index: number,
  seen: Map<string, number>,
  ceiling: PolicyMode,
): { ok: true; job: Job } | { ok: false; bad: InvalidJob } {
  const id = typeof raw.id === "string" ? raw.id : undefined;
  const label = id !== undefined && JOB_ID_PATTERN.test(id) ? id : `jobs[${index}]`;
  const bad = (reason: string) => ({ ok: false as const, bad: { label, index, reason } });
  if (raw.id === undefined) return bad("id is missing");
  if (id === undefined || !JOB_ID_PATTERN.test(id)) {
    return bad(`id ${show(raw.id)} is invalid: use 1-64 characters from A-Z a-z 0-9 . _ -`);
  }
  const first = seen.get(id);
  if (first !== undefined) return bad(`duplicate id (jobs[${first}] already uses "${id}")`);
  seen.set(id, index);
  if (typeof raw.goal !== "string" || raw.goal.trim() === "") return bad("goal must be a non-empty string");
  const trigger = parseTrigger(raw);
  if (!trigger.ok) return bad(trigger.error);

  const plan = parseJobPlan(raw);
  if (!plan.ok) return bad(plan.error);

  const notes: string[] = [];
  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) notes.push(`unknown key "${key}" ignored (check the spelling)`);
  }
  let requested: PolicyMode = "readonly";
  if (raw.mode !== undefined) {
    const parsed = parsePolicyMode(raw.mode);
    if (parsed) requested = parsed;
    else {
      // A typo never loosens: the strictest mode (docs/safety.md "Policy modes").
      requested = "readonly";
      notes.push(`unknown mode ${show(raw.mode)}; using "readonly" (valid: readonly, guarded, unrestricted)`);
    }
  }
  const mode = effectiveUnattended(requested, ceiling);
  if (requested === "unrestricted" && mode === "unrestricted") {
    notes.push(`runs UNRESTRICTED: mode = "unrestricted" and edge.max_job_policy = "unrestricted"`);
  } else if (requested === "unrestricted") {
    notes.push(`mode "unrestricted" lowered to "${mode}" by edge.max_job_policy = "${ceiling}"`);
  } else if (requested === "guarded") {
    notes.push(`mode "guarded" runs as "readonly" (unattended work is never guarded)`);
  }
  const job: Job = {
    id,
    goal: raw.goal,
    trigger: trigger.value,
    requestedMode: requested,
    mode,
    sessionId: jobSessionId(id),
    ...(plan.value ? { plan: plan.value } : {}),
    notes,
  };
  return { ok: true, job };
}

/** Validates every job table. Order is kept; the first of two equal ids wins. */
export function validateJobs(config: Config): JobSet {
  const set: JobSet = { jobs: [], invalid: [] };
  const seen = new Map<string, number>();
  for (const [index, raw] of config.schedule.jobs.entries()) {
    const r = validateJob(raw, index, seen, config.edge.max_job_policy);
    if (r.ok) set.jobs.push(r.job);
    else set.invalid.push(r.bad);
  }
  return set;
}

/** The warning lines a scheduler prints when it starts (and `schedule list` on stderr). */
export function jobWarnings(set: JobSet): string[] {
  const out: string[] = [];
  for (const bad of set.invalid) out.push(`schedule: job ${bad.label} skipped: ${bad.reason}`);
  for (const job of set.jobs) for (const note of job.notes) out.push(`schedule: job ${job.id}: ${note}`);
  return out;
}
