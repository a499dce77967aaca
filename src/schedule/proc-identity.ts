/**
 * Who a pid is. A pid answers signal 0 for whoever holds it now: after the
 * daemon dies, the kernel may give its pid to any process, and `daemon stop` would signal
 * that one. On Linux the start time of a process (field 22 of /proc/<pid>/stat, in clock
 * ticks since boot) is fixed for its life and differs for the next holder of the pid, so
 * the daemon records its own at start and everything that judges "is the daemon alive" or
 * signals it compares first.
 */
import fs from "node:fs";

/** Field 22 of /proc/<pid>/stat, or undefined (no such process, or no /proc here). */
export function procStartTime(pid: number): string | undefined {
  if (!Number.isSafeInteger(pid) || pid < 1) return undefined;
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count from the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const start = fields[22 - 3];
  return start && /^\d+$/.test(start) ? start : undefined;
}

/** True when /proc can answer for this process (Linux): then identity must be verified. */
export function canVerifyIdentity(): boolean {
  return procStartTime(process.pid) !== undefined;
}

export type Identity = "same" | "other" | "gone" | "unknown";

/** Whether `pid` is still the process that recorded `startTime`. */
export function sameProcess(pid: number, startTime: string | undefined): Identity {
  const now = procStartTime(pid);
  if (now === undefined) return canVerifyIdentity() ? "gone" : "unknown";
  if (startTime === undefined) return "unknown";
  return now === startTime ? "same" : "other";
}
