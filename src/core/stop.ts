/**
 * One stop controller for the commands that run until told to stop: SIGINT, SIGTERM and SIGHUP
 * (or the signals a command names) become requests; the first aborts `stop`, the second aborts
 * `again`. What each request says or does beyond that is the command's (a run prints, and ends
 * at once on a second Ctrl-C; the scheduler aborts its running job), so those are hooks.
 *
 * SIGHUP is a closed terminal or SSH session, the common way a session on a server ends: left
 * to its default it would end the process at once, with a command still running and its records
 * open (docs/reliability.md "Signals"). A terminal that is gone answers every write with EIO; a
 * command with a stop control drops those writes instead of crashing on them.
 */
import fs from "node:fs";
import tty from "node:tty";
import { onProcessEnd } from "./process-end.js";

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

/** The signals that end a process from outside: a supervisor's or `kill`'s SIGTERM, a closed terminal's SIGHUP. */
export const END_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGHUP"];
/** Ctrl-C, and the signals that end a process from outside. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", ...END_SIGNALS];

/**
 * Whether a repeated request ends the process at once: only a person's second Ctrl-C does. A
 * supervisor's SIGTERM sent again, or the hang-ups a closing terminal sends, wait for the stop
 * already under way (it is bounded), so nothing is left half-done: no command running on, no
 * run without its closing record.
 */
export function forcesEnd(why: string): boolean {
  return why === "SIGINT";
}

let keepingOutput = false;

/**
 * Writes to a terminal that is gone fail with EIO, each one an error event that would crash the
 * process on its way out. They are dropped; any other error keeps Node's default (thrown when
 * nobody else listens).
 */
function keepThroughHangUp(): void {
  if (keepingOutput) return;
  keepingOutput = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EIO") return;
      if (stream.listenerCount("error") === 1) throw e;
    });
  }
  const terminals = STDIO_FDS.filter((fd) => tty.isatty(fd));
  if (terminals.length > 0) onProcessEnd(() => letGoOfGoneTerminal(terminals));
}

const STDIO_FDS = [0, 1, 2];

/**
 * As it exits, Node puts the terminal's settings back as they were at its start, and Node 20 and
 * 22 abort when that fails: a process whose terminal hung up would crash on its way out instead
 * of exiting with its code. A terminal that hung up is a terminal no more (isatty fails on it
 * with EIO); its descriptors are closed first, so Node finds nothing to put back.
 */
function letGoOfGoneTerminal(fds: readonly number[]): void {
  for (const fd of fds) {
    if (tty.isatty(fd)) continue;
    try {
      fs.closeSync(fd);
    } catch {
      // Already closed: nothing to put back either.
    }
  }
}

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
  const signals = opts.signals ?? STOP_SIGNALS;
  if (signals.includes("SIGHUP")) keepThroughHangUp();
  for (const sig of signals) {
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
