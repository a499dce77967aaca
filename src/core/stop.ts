/**
 * One stop controller for the commands that run until told to stop: SIGINT and SIGTERM (or the
 * signals a command names) become requests; the first aborts `stop`, the second aborts `again`.
 * What each request says or does beyond that is the command's (a run prints and ends at once on
 * the second, the scheduler aborts its running job), so those are hooks.
 */

export interface StopControl {
  /** Aborted by the first request. */
  readonly stop: AbortSignal;
  /** Aborted by the second. */
  readonly again: AbortSignal;
  /** The name of the first request (the signal's name), once there was one. */
  reason(): string | undefined;
  /** Asks for a stop as a signal would (tests, internal errors). */
  request(why: string): void;
  /** Removes the signal handlers. */
  dispose(): void;
}

export interface StopOptions {
  /** The signals that request a stop; none installs no handler. */
  signals?: readonly NodeJS.Signals[];
  /** Runs on the first request, before `stop` aborts. */
  onFirst?: (why: string) => void;
  /** Runs on every later request; on the second, before `again` aborts. */
  onAgain?: (why: string) => void;
  /** The abort reason both signals carry; the request's name by default. */
  error?: (why: string) => Error;
}

export const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

export function createStopControl(opts: StopOptions = {}): StopControl {
  const stop = new AbortController();
  const again = new AbortController();
  const error = opts.error ?? ((why: string) => new Error(why));
  let reason: string | undefined;
  const request = (why: string) => {
    if (!stop.signal.aborted) {
      reason = why;
      opts.onFirst?.(why);
      stop.abort(error(why));
      return;
    }
    opts.onAgain?.(why);
    if (!again.signal.aborted) again.abort(error(why));
  };
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const sig of opts.signals ?? STOP_SIGNALS) {
    const h = () => request(sig);
    handlers.set(sig, h);
    process.on(sig, h);
  }
  return {
    stop: stop.signal,
    again: again.signal,
    reason: () => reason,
    request,
    dispose() {
      for (const [sig, h] of handlers) process.off(sig, h);
      handlers.clear();
    },
  };
}
