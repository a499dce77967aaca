/**
 * The scheduler: on each tick, decide which jobs are due (a pure function of the clock, the
 * jobs and the persisted state), then run them one after another.
 *
 * Rules:
 * - `every_sec`: fires at the first tick it is seen, then whenever `interval` has passed since
 *   the last firing. The recorded firing time stays on the job's own grid (last + k·interval),
 *   so slow polls and restarts do not make it drift; missed intervals coalesce into one firing.
 * - `at_unix`: fires once, at the first tick at or after its time — also if that time passed
 *   while nothing was running — and never again for that `at_unix` value.
 * - `cron`: fires at the first tick after a matching minute that is later than both the last
 *   firing and the moment the scheduler first saw the job (no retroactive firings for a new
 *   job); slots missed while stopped coalesce into one firing, as with `every_sec`.
 * - The firing is recorded (and saved) *before* the run starts: a crash mid-run never makes a
 *   one-shot job fire twice (at most once beats at least once for unattended effects).
 * - Each run has a deadline; a run that fails, throws or overruns is audited as `system_error`
 *   in the job's session and the loop goes on. If a run ignores its abort signal, the loop
 *   stops waiting for it shortly after the deadline anyway.
 */
import type { RunStop } from "../agent/run-stop.js";
import type { Config } from "../config/schema.js";
import { effectiveBackendTimeout, effectiveToolTimeout } from "../config/schema.js";
import type { AuditLog } from "../store/audit-writer.js";
import { nextCronAfter } from "./cron.js";
import { type Job, triggerKey } from "./jobs.js";
import { type JobState, loadState, type ScheduleState, saveState } from "./state.js";

/** Upper bound of one job run, whatever the per-call deadlines add up to. */
export const JOB_DEADLINE_CAP_MS = 60 * 60 * 1000;
/** How long past its deadline the loop still waits for a run that has been aborted. */
export const ABORT_GRACE_MS = 5_000;

/**
 * A run can legitimately take every turn to its backend deadline (with retries) plus its tool
 * deadline; beyond that — or beyond the cap — something is stuck and the loop must move on.
 */
export function jobDeadlineMs(config: Config): number {
  const perTurn =
    effectiveBackendTimeout(config) * (config.backend.max_retries + 1) + effectiveToolTimeout(config);
  return Math.min(JOB_DEADLINE_CAP_MS, config.agent.max_turns * perTurn);
}

export interface JobOutcome {
  status: "final" | "plan" | "failed" | "interrupted";
  /** Why the run stopped; absent when no run started (the session could not be opened). */
  stop?: RunStop;
  error?: string;
  turns?: number;
}

export type JobRunner = (job: Job, signal: AbortSignal) => Promise<JobOutcome>;

/**
 * Makes sure every job has a record for its current trigger, and repairs records from a clock
 * that went back: a repeating job's recorded times later than `now` become `now`, so it neither
 * stalls until the old future time nor fires twice at once. Returns true if anything changed.
 */
export function syncState(state: ScheduleState, jobs: readonly Job[], now: number): boolean {
  let changed = false;
  for (const job of jobs) {
    const key = triggerKey(job.trigger);
    const entry = state.jobs[job.id];
    if (!entry || entry.trigger !== key) {
      state.jobs[job.id] = { trigger: key, since: now };
      changed = true;
      continue;
    }
    if (job.trigger.kind === "at_unix") continue;
    if (entry.since > now) {
      entry.since = now;
      changed = true;
    }
    if (entry.last_fire !== undefined && entry.last_fire > now) {
      entry.last_fire = now;
      changed = true;
    }
  }
  return changed;
}

/** When the job fires next (Unix ms), or undefined if it never will (a one-shot that fired). */
export function nextFire(job: Job, entry: JobState | undefined, now: number): number | undefined {
  const current = entry?.trigger === triggerKey(job.trigger) ? entry : undefined;
  const since = current?.since ?? now;
  const last = current?.last_fire;
  switch (job.trigger.kind) {
    case "every_sec":
      return last === undefined ? since : last + job.trigger.seconds * 1000;
    case "at_unix":
      return last === undefined ? job.trigger.seconds * 1000 : undefined;
    case "cron":
      return nextCronAfter(job.trigger.spec, last ?? since);
  }
}

export function isDue(job: Job, entry: JobState | undefined, now: number): boolean {
  const next = nextFire(job, entry, now);
  return next !== undefined && next <= now;
}

/** Records a firing at `now` (on the job's grid for every_sec). */
export function recordFire(job: Job, state: ScheduleState, now: number): void {
  const key = triggerKey(job.trigger);
  const existing = state.jobs[job.id];
  const entry = existing?.trigger === key ? existing : { trigger: key, since: now };
  let fired = now;
  if (job.trigger.kind === "every_sec" && entry.last_fire !== undefined && entry.last_fire <= now) {
    const interval = job.trigger.seconds * 1000;
    fired = entry.last_fire + Math.floor((now - entry.last_fire) / interval) * interval;
  }
  state.jobs[job.id] = { trigger: entry.trigger, since: entry.since, last_fire: fired };
}

export interface SchedulerOptions {
  jobs: readonly Job[];
  stateFile: string;
  audit: AuditLog;
  runJob: JobRunner;
  deadlineMs: number;
  /** Progress and problems, one line each (the CLI sends them to stderr). */
  log: (line: string) => void;
  now?: () => number;
  graceMs?: number;
}

/** How one firing ended: the status recorded in the state, and the audited problem if any. */
interface Fired {
  status: string;
  /** The run's own stop reason, when a run ended (not for a deadline, an abandoned run or a throw). */
  stop?: RunStop;
  problem?: string;
}

export interface TickReport {
  fired: number;
  failed: number;
}

export interface Scheduler {
  /** One poll: runs every due job in order. `abort` cuts the running job short (a second stop signal). */
  tick(abort?: AbortSignal): Promise<TickReport>;
  /** The state as last saved (for `schedule list`-style views and tests). */
  state(): ScheduleState;
}

export function createScheduler(opts: SchedulerOptions): Scheduler {
  const clock = opts.now ?? Date.now;
  const graceMs = opts.graceMs ?? ABORT_GRACE_MS;
  const loaded = loadState(opts.stateFile);
  for (const w of loaded.warnings) opts.log(`warning: ${w}`);
  const state = loaded.state;
  let saveWarned = false;
  /** Job ids whose one-shot firing could not be recorded (bounded by the number of jobs). */
  const unrecorded = new Set<string>();

  const save = (): boolean => {
    const r = saveState(opts.stateFile, state);
    if (!r.ok) {
      if (!saveWarned) opts.log(`error: ${r.error}`);
      saveWarned = true;
      return false;
    }
    saveWarned = false;
    return true;
  };

  const auditError = (job: Job, msg: string) => {
    const r = opts.audit.emit(job.sessionId, "system_error", msg);
    if (!r.ok) opts.log(`error: ${r.error}`);
  };

  /** Audits a problem with a firing and hands it back for the log line. */
  const problem = (job: Job, status: string, msg: string): Fired => {
    auditError(job, msg);
    return { status, problem: msg };
  };

  const runOne = async (job: Job, abort: AbortSignal | undefined): Promise<Fired> => {
    // One controller per firing, fed by the deadline and by the long-lived stop signal. (Not
    // AbortSignal.any: tying a fresh signal to a long-lived one per firing is the kind of
    // bookkeeping that grows in a process meant to run for months.)
    const deadline = new AbortController();
    const run = new AbortController();
    const timer = setTimeout(() => {
      const reason = new Error(`job ${job.id} exceeded its deadline of ${opts.deadlineMs} ms`);
      deadline.abort(reason);
      run.abort(reason);
    }, opts.deadlineMs);
    const onStop = () => run.abort(abort?.reason);
    if (abort?.aborted) onStop();
    else abort?.addEventListener("abort", onStop, { once: true });
    const signal = run.signal;
    let graceTimer: NodeJS.Timeout | undefined;
    // A run that ignores its signal must not hold the loop: stop waiting a little after the deadline.
    const abandoned = new Promise<"abandoned">((resolve) => {
      const onAbort = () => {
        graceTimer = setTimeout(() => resolve("abandoned"), graceMs);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const outcome = await Promise.race([opts.runJob(job, signal), abandoned]);
      if (outcome === "abandoned") {
        return problem(
          job,
          "abandoned",
          `job ${job.id}: the run did not stop within ${graceMs} ms of being aborted; the scheduler moved on`,
        );
      }
      if (deadline.signal.aborted) {
        return problem(
          job,
          "deadline",
          `job ${job.id} exceeded its deadline of ${opts.deadlineMs} ms and was aborted`,
        );
      }
      if (outcome.status !== "final") {
        // The loop has audited the cause already; this line ties it to the job firing.
        const detail = outcome.error ? `: ${outcome.error}` : "";
        const fired = problem(job, outcome.status, `job ${job.id} run ${outcome.status}${detail}`);
        return outcome.stop ? { ...fired, stop: outcome.stop } : fired;
      }
      return { status: "final", stop: "final" };
    } catch (e) {
      return problem(job, "error", `job ${job.id} run threw: ${(e as Error)?.message ?? String(e)}`);
    } finally {
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      abort?.removeEventListener("abort", onStop);
    }
  };

  return {
    state: () => state,
    async tick(abort) {
      const report: TickReport = { fired: 0, failed: 0 };
      if (syncState(state, opts.jobs, clock())) save();
      for (const job of opts.jobs) {
        if (abort?.aborted) break;
        const now = clock();
        if (!isDue(job, state.jobs[job.id], now)) continue;
        const before = state.jobs[job.id];
        recordFire(job, state, now);
        if (!save() && job.trigger.kind === "at_unix") {
          // Without a durable record a one-shot job could fire again after a restart: do not
          // run it; try again at the next tick (reported once, not at every poll).
          if (before) state.jobs[job.id] = before;
          if (!unrecorded.has(job.id)) {
            auditError(job, `job ${job.id} not run: its firing could not be recorded in ${opts.stateFile}`);
            unrecorded.add(job.id);
          }
          report.failed += 1;
          continue;
        }
        unrecorded.delete(job.id);
        report.fired += 1;
        opts.log(`job ${job.id} fired (session ${job.sessionId}, mode ${job.mode})`);
        const fired = await runOne(job, abort);
        if (fired.status !== "final") report.failed += 1;
        opts.log(
          fired.problem
            ? `job ${job.id} ended (${fired.status}): ${fired.problem}`
            : `job ${job.id} finished`,
        );
        const entry = state.jobs[job.id];
        if (entry) {
          entry.last_status = fired.status;
          if (fired.stop) entry.last_stop = fired.stop;
          else delete entry.last_stop;
          save();
        }
      }
      return report;
    },
  };
}
