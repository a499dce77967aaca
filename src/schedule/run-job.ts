/**
 * Runs one job firing through the same agent session runner as `-e` and the REPL. A session
 * is opened per firing and closed after it, so a long-lived daemon holds no conversation
 * (or MCP connection) between firings and its memory stays flat.
 */
import type { AgentEvent } from "../agent/events.js";
import { type ApprovedPlan, loadPlanFile } from "../agent/plan-file.js";
import type { RunStop } from "../agent/run-stop.js";
import { openAgentSession } from "../agent/session-runner.js";
import type { HomePaths } from "../config/home.js";
import type { Config } from "../config/schema.js";
import type { AuditLog } from "../store/audit-writer.js";
import type { Job } from "./jobs.js";
import type { JobOutcome, JobRunner } from "./scheduler.js";

export interface JobRunnerContext {
  config: Config;
  paths: HomePaths;
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Where a firing refused for its plan is recorded (the scheduler's audit log). */
  audit: AuditLog;
  /** The daemon's metrics listen to each run (docs/telemetry.md "Telemetry and metrics"). */
  onEvent?: (e: AgentEvent) => void;
  /** `stop` is the run's stop reason; undefined when the session could not be opened. */
  onDone?: (job: Job, status: string, stop: RunStop | undefined) => void;
}

/** Why a firing must not run for its plan: the message, and the audit record that says so. */
interface PlanRefusal {
  error: string;
  record: string;
}

/**
 * The job's plan as this firing reads it (docs/unattended.md "Jobs"): the file checked whole and
 * its plan hashed again, then held to the `plan_sha256` it was approved with. A plan that changed
 * since — edited, or rewritten by an earlier firing of the job itself — refuses the firing.
 */
function planOfFiring(job: Job, cwd: string): { plan?: ApprovedPlan; refused?: PlanRefusal } {
  if (!job.plan) return {};
  const { file, sha256: pinned } = job.plan;
  const loaded = loadPlanFile(file, cwd);
  if (!loaded.ok) {
    const error = `${loaded.error}; nothing ran (fix the file, or put the approved plan back)`;
    return { refused: { error, record: `plan not run file=${file} job=${job.id}: ${error}` } };
  }
  const { sha256, plan } = loaded.value;
  if (sha256 === pinned) return { plan: loaded.value };
  const error =
    `plan file ${file} changed since it was approved: its plan has SHA-256 ${sha256}, not the job's ` +
    `plan_sha256 ${pinned}; nothing ran. Review the plan: if you approve it as it is now, set ` +
    `plan_sha256 = "${sha256}" in the job; if not, put the approved plan back`;
  return {
    refused: {
      error,
      record: `plan not run sha256=${sha256} steps=${plan.steps.length} file=${file} job=${job.id}: it is not the approved plan (plan_sha256 ${pinned})`,
    },
  };
}

export function agentJobRunner(ctx: JobRunnerContext): JobRunner {
  return async (job: Job, signal: AbortSignal): Promise<JobOutcome> => {
    // A job bound to a plan runs only under that plan, checked again at every firing.
    const { plan, refused } = planOfFiring(job, ctx.cwd);
    if (refused) {
      ctx.log(`job ${job.id}: not run: ${refused.error}`);
      // On the security record, as a plan a person did not approve is.
      const logged = ctx.audit.emit(job.sessionId, "approval", refused.record);
      if (!logged.ok) ctx.log(`error: ${logged.error}`);
      ctx.onDone?.(job, "failed", undefined);
      return { status: "failed", error: refused.error };
    }
    const opened = await openAgentSession({
      config: ctx.config,
      paths: ctx.paths,
      cwd: ctx.cwd,
      env: ctx.env,
      sessionId: job.sessionId,
      mode: job.mode,
      unattended: true,
      job: true,
      onWarning: (w) => ctx.log(`warning: job ${job.id}: ${w}`),
      ...(ctx.onEvent ? { onEvent: ctx.onEvent } : {}),
      ...(plan ? { plan } : {}),
    });
    if (!opened.ok) {
      ctx.onDone?.(job, "failed", undefined);
      return { status: "failed", error: opened.error };
    }
    const agent = opened.value;
    let status = "failed";
    let stop: RunStop | undefined;
    try {
      const r = await agent.run(job.goal, signal);
      status = r.status;
      stop = r.stop;
      return { status: r.status, stop: r.stop, error: r.error, turns: r.turns };
    } finally {
      ctx.onDone?.(job, status, stop);
      await agent.close();
    }
  };
}
