/**
 * `state/schedule.json`: per job, when it was first seen and when it last fired, so a
 * restart neither fires an `at_unix` job twice nor loses an `every_sec` job's cadence.
 * One small record per job id (never a history), written atomically (temp + rename).
 */

import { atomicWriteFile } from "../core/atomic-write.js";
import { readHomeFile } from "../core/safe-open.js";

export const STATE_VERSION = 1;
const STATE_FILE_MODE = 0o600;
/** The fire history is one small record per job; a larger file is not Scoot's. */
const STATE_MAX_BYTES = 16 * 1024 * 1024;

export interface JobState {
  /** `triggerKey` of the job when this record was made; a changed trigger starts afresh. */
  trigger: string;
  /** Unix ms when the scheduler first saw this trigger (cron counts slots after it). */
  since: number;
  /** Unix ms of the last firing (recorded before the run starts). */
  last_fire?: number;
  /** How the last firing ended: final, failed, interrupted, deadline, error. */
  last_status?: string;
  /** Why the last firing's run stopped (a RunStop: final, max_turns, backend, ...); absent when no run ended. */
  last_stop?: string;
}

export interface ScheduleState {
  version: number;
  jobs: Record<string, JobState>;
}

export function emptyState(): ScheduleState {
  return { version: STATE_VERSION, jobs: {} };
}

function isJobState(v: unknown): v is JobState {
  const s = v as JobState;
  return (
    typeof s === "object" &&
    s !== null &&
    typeof s.trigger === "string" &&
    typeof s.since === "number" &&
    (s.last_fire === undefined || typeof s.last_fire === "number") &&
    (s.last_status === undefined || typeof s.last_status === "string") &&
    (s.last_stop === undefined || typeof s.last_stop === "string")
  );
}

/**
 * Reads the state. A missing file is a fresh start; an unreadable one is a fresh start with a
 * warning (entries that do not parse are dropped one by one, so one bad record costs only itself).
 */
export function loadState(file: string): { state: ScheduleState; warnings: string[] } {
  // Never a blocking open or a followed symlink.
  const read = readHomeFile(file, { noFollow: true, maxBytes: STATE_MAX_BYTES });
  if (!read.ok && read.missing) return { state: emptyState(), warnings: [] };
  if (!read.ok) {
    return { state: emptyState(), warnings: [`cannot read ${read.error}; starting with no fire history`] };
  }
  const text = read.text;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return {
      state: emptyState(),
      warnings: [`${file} is not valid JSON (${(e as Error).message}); starting with no fire history`],
    };
  }
  const jobs = (data as { jobs?: unknown } | null)?.jobs;
  if (typeof jobs !== "object" || jobs === null || Array.isArray(jobs)) {
    return { state: emptyState(), warnings: [`${file} has no "jobs" table; starting with no fire history`] };
  }
  const state = emptyState();
  const warnings: string[] = [];
  for (const [id, entry] of Object.entries(jobs)) {
    if (isJobState(entry)) state.jobs[id] = entry;
    else warnings.push(`${file}: record for job "${id}" is malformed; it starts with no fire history`);
  }
  return { state, warnings };
}

export function saveState(file: string, state: ScheduleState): { ok: true } | { ok: false; error: string } {
  const r = atomicWriteFile(file, `${JSON.stringify(state, null, 2)}\n`, { mode: STATE_FILE_MODE });
  return r.ok ? { ok: true } : { ok: false, error: `cannot write ${file}: ${r.error}` };
}
