/**
 * What `schedule run` and `daemon run` share: the checks before starting, the validated
 * jobs with their start-up warnings, and a scheduler wired to the real agent runner and the
 * audit log.
 */
import type { HomePaths } from "../config/home.js";
import { ensureDir } from "../config/home.js";
import type { Config } from "../config/schema.js";
import { auditOptions, createAuditLog } from "../store/audit-writer.js";
import { guardAuditLog } from "../store/guarded-stores.js";
import { type JobSet, jobWarnings, validateJobs } from "./jobs.js";
import { agentJobRunner, type JobRunnerContext } from "./run-job.js";
import { createScheduler, jobDeadlineMs, type Scheduler } from "./scheduler.js";

export const NOT_ENABLED_MESSAGE =
  "scheduling is disabled: set `enabled = true` under [schedule] in config.toml (or SCOOT_SCHEDULE_ENABLED=true) to run jobs";

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
  const audit = guardAuditLog(createAuditLog(auditOptions(config.audit, paths.audit)), paths.audit);
  const deadlineMs = jobDeadlineMs(config);
  const scheduler = createScheduler({
    jobs: jobs.jobs,
    stateFile: paths.scheduleJson,
    audit,
    runJob: agentJobRunner({ config, paths, cwd: opts.cwd, env: opts.env, log, ...opts.observe }),
    deadlineMs,
    log,
  });
  return { jobs, scheduler, deadlineMs };
}
