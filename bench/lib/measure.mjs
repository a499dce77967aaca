/**
 * Runs a benchmark's command as a child: wall time, peak RSS and CPU time (through
 * /usr/bin/time when the machine has it; NaN otherwise), and what it printed.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";

export const TIME = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

/** Runs a command; wall ms, peak RSS in MB (via /usr/bin/time), stdout size and line count. */
export function measure(cmd, args, { env = process.env, cwd = process.cwd() } = {}) {
  return new Promise((resolve) => {
    // Peak RSS and CPU seconds (user + system): CPU time is what a loaded machine distorts least.
    const full = TIME ? [TIME, "-f", "%U %S %M", cmd, ...args] : [cmd, ...args];
    const t0 = performance.now();
    const child = spawn(full[0], full.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    let outBytes = 0;
    let outLines = 0;
    let head = "";
    child.stdout.on("data", (d) => {
      outBytes += d.length;
      if (head.length < 4096) head += d.toString("utf8");
      for (let i = d.indexOf(10); i !== -1; i = d.indexOf(10, i + 1)) outLines++;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => {
      const ms = performance.now() - t0;
      const errLines = err.trim().split("\n");
      const [user, sys, kb] = TIME
        ? (errLines.at(-1) ?? "").split(" ").map(Number)
        : [Number.NaN, Number.NaN, Number.NaN];
      resolve({
        code,
        ms,
        cpuMs: (user + sys) * 1000,
        mb: kb / 1024,
        outBytes,
        outLines,
        head,
        err: TIME ? errLines.slice(0, -1).join("\n") : err,
      });
    });
  });
}
