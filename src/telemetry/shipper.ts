/**
 * Ships the audit log to the collector from the durable cursor: read a batch after the
 * cursor, send it, and only once the collector acknowledged it, store the new cursor
 * (atomically). A crash anywhere re-sends at most the unacknowledged batch; nothing is ever
 * skipped. `shipOnce` drains and returns (`scoot audit export`); `shipFollow` keeps going
 * with backoff while the collector is down (`--follow`, `scoot daemon run`).
 *
 * A batch the collector refused for good (a non-retryable HTTP status) or took only in part
 * (a partial success) is not sent again, as the OTLP specification says: it is recorded in the
 * rejected file (`rejected.ts`) first, then the cursor moves past it, so later events do not
 * wait behind it and nothing is dropped without a record.
 */

import { abortableSleep as sleep } from "../core/sleep.js";
import type { Result } from "../core/types.js";
import { type BatchLimits, countPending, readBatch } from "./audit-source.js";
import { type Cursor, readCursor, writeCursor } from "./cursor.js";
import type { LogSink } from "./otlp.js";
import { appendRejected, type RejectedRecord, rejectedRecord } from "./rejected.js";

/** First wait after a failed batch; doubled per failure up to RETRY_MAX_MS, with jitter. */
export const RETRY_FIRST_MS = 1_000;
/** A collector down for hours is polled once a minute, not hammered. */
export const RETRY_MAX_MS = 60_000;
const RETRY_FACTOR = 2;
/** ± this share of each wait, so a fleet that lost its collector does not retry in lockstep. */
const RETRY_JITTER = 0.2;
/** How often a caught-up follower looks for new events. */
export const FOLLOW_POLL_MS = 1_000;
/** Stays well under the OpenTelemetry Collector's default request body limit. */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024;

export interface ShipperOptions {
  live: string;
  cursorFile: string;
  /** Where refused and partly rejected batches are recorded before the cursor passes them. */
  rejectedFile: string;
  key: Buffer | undefined;
  sink: LogSink;
  maxBatchRecords: number;
  log: (line: string) => void;
  /** Counters for /metrics; called after every acknowledged batch and every failure. */
  onProgress?: (p: Progress) => void;
}

export interface Progress {
  /** Events acknowledged by the collector, in total, since this shipper started. */
  exported: number;
  gaps: number;
  failures: number;
  /** Records the collector refused or rejected (set aside, not sent again). */
  rejected: number;
  /** Events written but not yet acknowledged (0 when caught up). */
  lag: number;
}

export interface OnceResult {
  exported: number;
  gaps: number;
  batches: number;
  /** Records the collector refused or rejected, and the records of them, in order. */
  rejected: number;
  setAside: RejectedRecord[];
}

interface StepResult {
  caughtUp: boolean;
  /** Events and gap records the collector took. */
  events: number;
  gaps: number;
  /** Set when the batch (or part of it) was set aside. */
  setAside?: RejectedRecord;
}

export function retryDelay(failures: number, random = Math.random): number {
  const base = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * RETRY_FACTOR ** Math.max(0, failures - 1));
  return Math.round(base * (1 + (random() * 2 - 1) * RETRY_JITTER));
}

interface Shipper {
  /** One batch: acknowledged or set aside, or the error. `caughtUp` when nothing is left now. */
  step(): Promise<Result<StepResult>>;
  progress: Progress;
  pending(): number;
}

function createShipper(opts: ShipperOptions): Result<Shipper> {
  const read = readCursor(opts.cursorFile);
  if (!read.ok) return read;
  let cursor: Cursor | undefined = read.value;
  const limits: BatchLimits = { maxItems: opts.maxBatchRecords, maxBytes: MAX_BATCH_BYTES };
  const seen = new Set<string>();
  const progress: Progress = { exported: 0, gaps: 0, failures: 0, rejected: 0, lag: 0 };
  return {
    ok: true,
    value: {
      progress,
      pending: () => countPending(opts.live, cursor, opts.key),
      async step() {
        let batch: ReturnType<typeof readBatch>;
        try {
          batch = readBatch(opts.live, cursor, opts.key, limits);
        } catch (e) {
          return { ok: false, error: `cannot read the audit log: ${(e as Error).message}` };
        }
        for (const w of batch.warnings) {
          // A follower passes the same damaged line again only after a failure: say it once.
          if (seen.has(w)) continue;
          seen.add(w);
          opts.log(`warning: ${w}`);
        }
        let events = batch.items.filter((i) => i.type === "event").length;
        let gaps = batch.items.length - events;
        let setAside: RejectedRecord | undefined;
        if (batch.items.length > 0) {
          const sent = await opts.sink.send(batch.items);
          const base = { items: batch.items, from: cursor, to: batch.next };
          if (!sent.ok && sent.error.retryable) {
            progress.failures += 1;
            return { ok: false, error: sent.error.message };
          }
          if (!sent.ok) {
            setAside = rejectedRecord({
              ...base,
              reason: "refused",
              ...(sent.error.status !== undefined ? { status: sent.error.status } : {}),
              message: sent.error.message,
              rejected: batch.items.length,
            });
            events = 0;
            gaps = 0;
          } else if (sent.value.partial && sent.value.partial.rejected > 0) {
            const { rejected, message } = sent.value.partial;
            setAside = rejectedRecord({ ...base, reason: "partial", message, rejected });
            // Which records were dropped the collector does not say: the count comes off the events.
            events = Math.max(0, events - rejected);
          } else if (sent.value.partial) {
            opts.log(
              `warning: telemetry: the collector accepted the batch and said: ${sent.value.partial.message}`,
            );
          }
          if (setAside) {
            const kept = appendRejected(opts.rejectedFile, setAside);
            if (!kept.ok) return { ok: false, error: kept.error };
          }
        }
        const moved =
          !cursor ||
          cursor.generation !== batch.next.generation ||
          cursor.offset !== batch.next.offset ||
          cursor.hash !== batch.next.hash;
        if (moved) {
          const w = writeCursor(opts.cursorFile, batch.next);
          if (!w.ok) return { ok: false, error: w.error };
          cursor = batch.next;
        }
        progress.exported += events;
        progress.gaps += gaps;
        if (setAside) progress.rejected += setAside.rejected;
        if (batch.caughtUp) progress.lag = 0;
        opts.onProgress?.(progress);
        return {
          ok: true,
          value: { caughtUp: batch.caughtUp, events, gaps, ...(setAside ? { setAside } : {}) },
        };
      },
    },
  };
}

/** Drains what is in the log now; the first failed batch ends it (the cursor keeps the place). */
export async function shipOnce(
  opts: ShipperOptions,
): Promise<Result<OnceResult, { error: string; pending: number; done: OnceResult; local?: true }>> {
  const made = createShipper(opts);
  if (!made.ok)
    return {
      ok: false,
      // Not the collector's doing: the cursor file is damaged (the message says how to fix it).
      error: { error: made.error, pending: 0, done: emptyResult(), local: true },
    };
  const s = made.value;
  const done = emptyResult();
  for (;;) {
    const r = await s.step();
    if (!r.ok) return { ok: false, error: { error: r.error, pending: safePending(s), done } };
    if (r.value.events + r.value.gaps > 0 || r.value.setAside) done.batches += 1;
    done.exported += r.value.events;
    done.gaps += r.value.gaps;
    if (r.value.setAside) {
      done.rejected += r.value.setAside.rejected;
      done.setAside.push(r.value.setAside);
    }
    if (r.value.caughtUp) return { ok: true, value: done };
  }
}

function emptyResult(): OnceResult {
  return { exported: 0, gaps: 0, batches: 0, rejected: 0, setAside: [] };
}

/** One line for a batch set aside: what the collector did, what it said, where the record is. */
export function setAsideLine(r: RejectedRecord, file: string): string {
  const what =
    r.reason === "refused"
      ? `the collector refused a batch of ${r.events + r.gaps} record(s) (${r.message}); it is not sent again`
      : `the collector rejected ${r.rejected} of ${r.events + r.gaps} record(s) of a batch${r.message ? ` (${r.message})` : ""}`;
  return `${what}: recorded in ${file}`;
}

function safePending(s: Shipper): number {
  try {
    return s.pending();
  } catch {
    return 0;
  }
}

/** Ships until `stop` aborts: new events within FOLLOW_POLL_MS, backoff while the collector fails. */
export async function shipFollow(
  opts: ShipperOptions,
  stop: AbortSignal,
  pollMs = FOLLOW_POLL_MS,
): Promise<Result<void>> {
  const made = createShipper(opts);
  if (!made.ok) return made;
  const s = made.value;
  let failures = 0;
  while (!stop.aborted) {
    const r = await s.step();
    if (!r.ok) {
      failures += 1;
      s.progress.lag = safePending(s);
      opts.onProgress?.(s.progress);
      const wait = retryDelay(failures);
      opts.log(
        `telemetry: export failed (${r.error}); ${s.progress.lag} event(s) waiting, next try in ${Math.round(wait / 100) / 10} s`,
      );
      await sleep(wait, stop);
      continue;
    }
    if (r.value.setAside) opts.log(`error: telemetry: ${setAsideLine(r.value.setAside, opts.rejectedFile)}`);
    if (failures > 0)
      opts.log(`telemetry: the collector answers again (after ${failures} failed attempt(s))`);
    failures = 0;
    if (r.value.caughtUp) await sleep(pollMs, stop);
  }
  return { ok: true, value: undefined };
}
