/**
 * Finding processes by a unique tag in their command line (`sleep 300.<tag>`). Works whether
 * or not bash ran sandboxed: a pid echoed from inside the sandbox is a PID-namespace pid and
 * means nothing on the host, while /proc on the host lists every process with its real pid.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./cli.js";

/** Live (not zombie) processes whose command line (NULs as spaces) passes `match`. */
function livePids(match: (cmd: string) => boolean): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, "latin1").replace(/\0/g, " ");
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      if (match(cmd) && state !== "Z" && state !== "X") found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Live (not zombie) processes whose command line contains `needle`. */
export function processesWith(needle: string): number[] {
  return livePids((cmd) => cmd.includes(needle));
}

/** A process's command line (NULs as spaces), or "" once it is gone. */
export function processLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " ").trim();
  } catch {
    return "";
  }
}

let counter = 0;
/** A fractional `sleep` argument no other process on the machine uses. */
export function uniqueSleepArg(seconds: number): string {
  counter += 1;
  return `${seconds}.${process.pid}${counter}${Date.now() % 100000}`;
}

/**
 * Polls until a process whose command line starts with `commandLine` runs (the program itself,
 * not a shell or a bwrap whose arguments merely mention it: bwrap arms --die-with-parent only
 * after it starts, so a test that kills Scoot as soon as bwrap's arguments appear races that);
 * false after `ms`.
 */
export async function waitForProcess(commandLine: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (livePids((cmd) => cmd.startsWith(commandLine)).length > 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** Whether bubblewrap can make its namespaces here (installed, and the kernel allows them). */
export function bwrapWorks(): boolean {
  try {
    execFileSync("bwrap", ["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"], {
      stdio: "ignore",
    });
    return true;
  } catch {
    return false;
  }
}

const runningSwappers = new Set<ReturnType<typeof spawn>>();

/** Kills every swapper a test started and did not stop (a failed assertion on the way): none outlives it. */
export function killSwappers(): void {
  for (const s of runningSwappers) s.kill("SIGKILL");
  runningSwappers.clear();
}

/**
 * Starts test/helpers/dir-swapper.mjs, which swaps `sub` for a link to `outside` and back as
 * fast as it can; resolves once it has swapped. `stop()` ends it and gives the swap count.
 */
export async function startDirSwapper(sub: string, outside: string): Promise<{ stop(): Promise<number> }> {
  const swapper = spawn(
    process.execPath,
    [path.join(REPO_ROOT, "test/helpers/dir-swapper.mjs"), sub, outside],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  runningSwappers.add(swapper);
  swapper.once("exit", () => runningSwappers.delete(swapper));
  let out = "";
  swapper.stdout!.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  await new Promise<void>((resolve) => {
    const check = () => (out.includes("ready") ? resolve() : setTimeout(check, 5));
    check();
  });
  return {
    async stop() {
      if (swapper.exitCode === null) {
        const exited = new Promise<void>((resolve) => swapper.once("exit", () => resolve()));
        swapper.kill("SIGTERM");
        await exited;
      }
      return Number(/swaps (\d+)/.exec(out)?.[1] ?? 0);
    },
  };
}

/** Whether openssl runs here (the HTTPS tests make self-signed certificates with it). */
export function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
