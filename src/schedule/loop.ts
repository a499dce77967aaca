/**
 * The polling loop shared by `schedule run` and `daemon run`: tick, sleep `poll_ms`, repeat —
 * N times or forever. A stop request (SIGTERM, SIGINT, SIGHUP) lets the current tick finish; a
 * second one aborts the running job so a stuck run cannot hold the stop hostage.
 */

import { abortableSleep } from "../core/sleep.js";
import {
  type StopControl as CoreStopControl,
  createStopControl as createCoreStopControl,
} from "../core/stop.js";
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

/** The loop's stop: the core controller, with the loop's words for what each request does. */
export function createStopControl(log: (line: string) => void, installSignals = true): StopControl {
  const control: CoreStopControl = createCoreStopControl({
    ...(installSignals ? {} : { signals: [] }),
    onFirst: (why) => log(`${why}: stopping after the current tick (send it again to abort the running job)`),
    onAgain: (why) => {
      if (!control.again.aborted) log(`${why} again: aborting the running job`);
    },
  });
  return {
    stop: control.stop,
    abortJob: control.again,
    reason: control.reason,
    request: control.request,
    dispose: control.dispose,
  };
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
    await abortableSleep(opts.pollMs, opts.control.stop);
  }
  return { ticks: done, reason: opts.control.reason() ?? "ticks" };
}
