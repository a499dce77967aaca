/**
 * The fallback that ends a stdio server's processes when no PID namespace holds them (docs/mcp.md
 * "Server processes"): every live process whose environment carries the server's mark (set at
 * spawn, inherited by each descendant, `setsid` ones included) is sent SIGTERM, and SIGKILL after
 * the grace time. Linux only (/proc); elsewhere nothing is found.
 */
import { readdir, readFile } from "node:fs/promises";
import { KILL_GRACE_MS } from "../core/process-group.js";
import { MCP_SERVER_MARK_ENV } from "./server-launch.js";

const POLL_MS = 25;
/** After SIGKILL, how long to wait for the kernel to finish them. */
const KILL_SETTLE_MS = 1000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Live (not zombie) processes whose environment holds `NAME=mark`; never Scoot itself. */
export async function markedProcesses(mark: string): Promise<number[]> {
  const needle = `\0${MCP_SERVER_MARK_ENV}=${mark}\0`;
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = await readFile(`/proc/${entry}/environ`, "latin1");
      if (!`\0${environ}`.includes(needle)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      if (state !== "Z" && state !== "X") found.push(Number(entry));
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return found;
}

function signal(pids: readonly number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // gone already
    }
  }
}

async function waitGone(mark: string, ms: number): Promise<number[]> {
  const until = Date.now() + ms;
  for (;;) {
    const left = await markedProcesses(mark);
    if (left.length === 0 || Date.now() >= until) return left;
    await sleep(POLL_MS);
  }
}

/** Ends every marked process: SIGTERM, then SIGKILL after KILL_GRACE_MS. Bounded; the count it ended. */
export async function reapMarked(mark: string): Promise<number> {
  const found = await markedProcesses(mark);
  if (found.length === 0) return 0;
  signal(found, "SIGTERM");
  signal(found, "SIGCONT");
  const left = await waitGone(mark, KILL_GRACE_MS);
  if (left.length > 0) {
    // Read again just before: only processes still carrying the mark are killed.
    signal(left, "SIGKILL");
    await waitGone(mark, KILL_SETTLE_MS);
  }
  return found.length;
}
