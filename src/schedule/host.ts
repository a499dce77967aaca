/**
 * What `schedule run` and `daemon run` share: the checks before starting, the validated
 * jobs with their start-up warnings, and a scheduler wired to the real agent runner and the
 * audit log.
 */
import type { HomePaths } from "../config/home.js";
import { ensureDir } from "../config/home.js";
import type { Config } from "../config/schema.js";
import { openHomeAudit } from "../store/guarded-stores.js";
import { type JobSet, jobWarnings, validateJobs } from "./jobs.js";
import { agentJobRunner, type JobRunnerContext } from "./run-job.js";
import { createScheduler, jobDeadlineMs, type Scheduler } from "./scheduler.js";
import { emptyState } from "./state.js";

export const NOT_ENABLED_MESSAGE =
  "scheduling is disabled: set `enabled = true` under [schedule] in config.toml (or SCOOT_SCHEDULE_ENABLED=true) to run jobs";

/** `daemon run` with nothing at all to do. */
export const NOTHING_TO_DO_MESSAGE =
  "the daemon has nothing to do: set `enabled = true` under [schedule] (or SCOOT_SCHEDULE_ENABLED=true) to run jobs, " +
  "[telemetry] otlp_endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT) to ship the audit log, or daemon.metrics_listen to serve /metrics";

/**
 * The daemon's loop without `[schedule]`: every tick fires nothing, so a daemon that only ships
 * the audit log and serves /metrics runs the same loop, stop handling and state file.
 */
export function idleScheduler(): Scheduler {
  const state = emptyState();
  return { tick: async () => ({ fired: 0, failed: 0 }), state: () => state };
}

export interface Hosted {
  jobs: JobSet;
  scheduler: Scheduler;
  deadlineMs: number;
}

export function hostScheduler(opts: {
  config: Config;
  paths: HomePaths;
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Hooks for the daemon's metrics; see run-job.ts. */
  observe?: Pick<JobRunnerContext, "onEvent" | "onDone">;
}): Hosted {
  const { config, paths, log } = opts;
  ensureDir(paths.state);
  const jobs = validateJobs(config);
  for (const w of jobWarnings(jobs)) log(`warning: ${w}`);
  if (jobs.jobs.length === 0) log("warning: schedule: no valid jobs; the scheduler will only poll");
  const audit = openHomeAudit(config, paths, "at first write");
  const deadlineMs = jobDeadlineMs(config);
  const scheduler = createScheduler({
    jobs: jobs.jobs,
    stateFile: paths.scheduleJson,
    audit,
    runJob: agentJobRunner({ config, paths, cwd: opts.cwd, env: opts.env, log, audit, ...opts.observe }),
    deadlineMs,
    log,
  });
  return { jobs, scheduler, deadlineMs };
}
