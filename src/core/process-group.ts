/**
 * Process groups: a tool's child leads its own group (spawned `detached`), so one signal
 * reaches the shell, its children and their children alike. Tearing the group down is
 * how Scoot makes sure nothing a tool started outlives the tool call.
 */
import { readdir, readFile } from "node:fs/promises";
import { onProcessEnd } from "./process-end.js";

/** Time a group gets to exit after SIGTERM before it is sent SIGKILL (1 s). */
export const KILL_GRACE_MS = 1000;
/** How long to wait for the kernel to finish a SIGKILLed group before giving up on it. */
const KILL_SETTLE_MS = 1000;
/** How often a terminating group is checked for live members. */
const POLL_MS = 25;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Sends `signal` to every member of group `pgid`. False when no member could be signalled. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: the group is gone; EPERM: a member changed identity and is not ours to signal.
    return false;
  }
}

/**
 * True while any member of the group is still running. `kill(-pgid, 0)` alone is not
 * enough: it also succeeds for zombies, and orphaned zombies stay forever when PID 1 does
 * not reap (common in containers). On Linux, /proc tells a zombie from a live process.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== "linux") return true;
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, "latin1");
    } catch {
      continue; // exited while we looked
    }
    // Fields after the parenthesised command name: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const state = fields[0];
    if (Number(fields[2]) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}

/** Waits until the group has no live member or `ms` passed; true when it emptied. */
async function waitEmpty(pgid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (!(await groupAlive(pgid))) return true;
    if (Date.now() >= until) return false;
    await sleep(POLL_MS);
  }
}

export type Teardown = "already-gone" | "terminated" | "killed" | "unkillable";

/**
 * SIGTERM the group, SIGKILL whatever is left after `graceMs`, and wait for the group to
 * empty. Bounded: resolves after at most `graceMs + KILL_SETTLE_MS` (plus one poll).
 */
export async function terminateGroup(pgid: number, graceMs: number = KILL_GRACE_MS): Promise<Teardown> {
  if (!(await groupAlive(pgid))) return "already-gone";
  signalGroup(pgid, "SIGTERM");
  // A stopped member would never act on SIGTERM; SIGCONT lets it.
  signalGroup(pgid, "SIGCONT");
  if (await waitEmpty(pgid, graceMs)) return "terminated";
  signalGroup(pgid, "SIGKILL");
  return (await waitEmpty(pgid, KILL_SETTLE_MS)) ? "killed" : "unkillable";
}

/** The groups of tool calls still running (holdGroup), each ended if the process ends first. */
const held = new Set<number>();
let endHooked = false;

/**
 * Marks group `pgid` as a running tool call's until the returned release is called (once the
 * group was torn down). Should the process end while the call runs (a second Ctrl-C ends it at
 * once, docs/reliability.md "Signals"), the group is SIGKILLed on the way out: a forced end
 * does not wait for a grace, but leaves no process of the command behind either.
 */
export function holdGroup(pgid: number): () => void {
  held.add(pgid);
  if (!endHooked) {
    endHooked = true;
    onProcessEnd(() => {
      for (const g of held) signalGroup(g, "SIGKILL");
    });
  }
  return () => {
    held.delete(pgid);
  };
}
