/**
 * Runs one job firing through the same agent session runner as `-e` and the REPL. A session
 * is opened per firing and closed after it, so a long-lived daemon holds no conversation
 * (or MCP connection) between firings and its memory stays flat.
 */
import type { AgentEvent } from "../agent/events.js";
import { loadPlanFile } from "../agent/plan-file.js";
import type { RunStop } from "../agent/run-stop.js";
import { openAgentSession } from "../agent/session-runner.js";
import type { HomePaths } from "../config/home.js";
import type { Config } from "../config/schema.js";
import type { Job } from "./jobs.js";
import type { JobOutcome, JobRunner } from "./scheduler.js";

export interface JobRunnerContext {
  config: Config;
  paths: HomePaths;
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** The daemon's metrics listen to each run (docs/telemetry.md "Telemetry and metrics"). */
  onEvent?: (e: AgentEvent) => void;
  /** `stop` is the run's stop reason; undefined when the session could not be opened. */
  onDone?: (job: Job, status: string, stop: RunStop | undefined) => void;
}

export function agentJobRunner(ctx: JobRunnerContext): JobRunner {
  return async (job: Job, signal: AbortSignal): Promise<JobOutcome> => {
    // A job bound to a plan runs only under that plan, checked again at every firing.
    const plan = job.plan ? loadPlanFile(job.plan.file, ctx.cwd, job.plan.sha256) : undefined;
    if (plan && !plan.ok) {
      ctx.log(`job ${job.id}: not run: ${plan.error}`);
      ctx.onDone?.(job, "failed", undefined);
      return { status: "failed", error: plan.error };
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
      ...(plan?.ok ? { plan: plan.value } : {}),
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
