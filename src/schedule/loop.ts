/**
 * The polling loop shared by `schedule run` and `daemon run`: tick, sleep `poll_ms`, repeat —
 * N times or forever. A stop request (SIGTERM/SIGINT) lets the current tick finish; a second
 * one aborts the running job so a stuck run cannot hold the stop hostage.
 */
import type { Scheduler, TickReport } from "./scheduler.js";

export interface StopControl {
  /** Aborted by the first stop request: no new tick starts. */
  stop: AbortSignal;
  /** Aborted by the second: the running job is cut short. */
  abortJob: AbortSignal;
  /** The name of the first stop request, once there was one. */
  reason(): string | undefined;
  /** Asks for a stop as a signal would (used by tests and internal errors). */
  request(reason: string): void;
  dispose(): void;
}

const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

export function createStopControl(log: (line: string) => void, installSignals = true): StopControl {
  const stop = new AbortController();
  const abortJob = new AbortController();
  let reason: string | undefined;
  const request = (why: string) => {
    if (!stop.signal.aborted) {
      reason = why;
      log(`${why}: stopping after the current tick (send it again to abort the running job)`);
      stop.abort(new Error(why));
    } else if (!abortJob.signal.aborted) {
      log(`${why} again: aborting the running job`);
      abortJob.abort(new Error(why));
    }
  };
  const handlers = new Map<NodeJS.Signals, () => void>();
  if (installSignals) {
    for (const sig of STOP_SIGNALS) {
      const h = () => request(sig);
      handlers.set(sig, h);
      process.on(sig, h);
    }
  }
  return {
    stop: stop.signal,
    abortJob: abortJob.signal,
    reason: () => reason,
    request,
    dispose() {
      for (const [sig, h] of handlers) process.off(sig, h);
      handlers.clear();
    },
  };
}

/** Resolves after `ms`, or at once when `signal` aborts. Leaves no timer behind. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

export interface LoopOptions {
  scheduler: Scheduler;
  /** Number of polls; 0 = until stopped. */
  ticks: number;
  pollMs: number;
  control: StopControl;
  /** Called after each tick (the daemon keeps its counters current with it). */
  onTick?: (report: TickReport) => void;
}

export interface LoopResult {
  ticks: number;
  /** "ticks" when the requested number of polls ran, else the stop request's name. */
  reason: string;
}

export async function runLoop(opts: LoopOptions): Promise<LoopResult> {
  let done = 0;
  while (opts.ticks === 0 || done < opts.ticks) {
    if (opts.control.stop.aborted) break;
    const report = await opts.scheduler.tick(opts.control.abortJob);
    done += 1;
    opts.onTick?.(report);
    if (opts.ticks !== 0 && done >= opts.ticks) break;
    await sleep(opts.pollMs, opts.control.stop);
  }
  return { ticks: done, reason: opts.control.reason() ?? "ticks" };
}
