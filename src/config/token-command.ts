/**
 * Running `backend.api_key_cmd` (docs/configuration.md "Configuration", the token chain).
 *
 * - The command leads its own process group, and the whole group is SIGKILLed when the
 *   command exits or the deadline passes: nothing it started outlives the lookup.
 * - It is finished when `/bin/sh` itself exits, not when its stdout closes: a command that
 *   prints the token and leaves a background child holding stdout is done. So stdout goes to
 *   an unlinked temporary file (no pipe to hold open), read once the shell has exited.
 * - Token resolution stays synchronous for its callers: a small Node supervisor does the
 *   above and is itself run with spawnSync, with a backstop deadline a little longer than the
 *   command's (the supervisor kills the group first; the backstop only covers a stuck Node).
 */
import { childProcessModule } from "../core/builtins.js";

/** Extra time the outer spawnSync grants the supervisor beyond the command's own deadline. */
const SUPERVISOR_BACKSTOP_MS = 5_000;

/** The supervisor, run as `node -e SUPERVISOR <cmd> <deadline_ms> <max_bytes>`. CommonJS on purpose. */
const SUPERVISOR = `
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawn } = require("node:child_process");
const [cmd, deadlineMs, maxBytes] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
const tmp = path.join(os.tmpdir(), "scoot-token-" + process.pid + "-" + Date.now());
const fd = fs.openSync(tmp, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
fs.unlinkSync(tmp);
const report = (r) => { process.stdout.write(JSON.stringify(r)); process.exit(0); };
const child = spawn("/bin/sh", ["-c", cmd], { detached: true, stdio: ["ignore", fd, "ignore"] });
const killGroup = () => { try { process.kill(-child.pid, "SIGKILL"); } catch {} };
const read = () => {
  const buf = Buffer.alloc(maxBytes + 1);
  const n = fs.readSync(fd, buf, 0, buf.length, 0);
  return n > maxBytes ? undefined : buf.subarray(0, n).toString("utf8");
};
const timer = setTimeout(() => { killGroup(); report({ timeout: true }); }, deadlineMs);
child.on("error", (e) => { clearTimeout(timer); report({ error: e.message }); });
child.on("exit", (code, signal) => {
  clearTimeout(timer);
  killGroup();
  const out = read();
  report(out === undefined ? { code, signal, tooLarge: true } : { code, signal, out });
});
`;

export type CommandResult = { ok: true; out: string } | { ok: false; error: string; out?: string };

/** Where the command starts and what it inherits (see core/host-helper-env.ts). */
export interface CommandPlace {
  cwd: string;
  env: Record<string, string>;
}

export function runTokenCommandOnce(
  cmd: string,
  deadlineMs: number,
  maxBytes: number,
  place?: CommandPlace,
): CommandResult {
  const r = childProcessModule().spawnSync(
    process.execPath,
    ["-e", SUPERVISOR, cmd, String(deadlineMs), String(maxBytes)],
    {
      timeout: deadlineMs + SUPERVISOR_BACKSTOP_MS,
      killSignal: "SIGKILL",
      stdio: ["ignore", "pipe", "pipe"],
      encoding: "utf8",
      maxBuffer: 4 * maxBytes + 1024,
      ...(place ? { cwd: place.cwd, env: place.env } : {}),
    },
  );
  let report: {
    timeout?: boolean;
    error?: string;
    code?: number | null;
    signal?: string | null;
    out?: string;
    tooLarge?: boolean;
  };
  try {
    report = JSON.parse(r.stdout ?? "") as typeof report;
  } catch {
    return {
      ok: false,
      error: `backend.api_key_cmd could not be run: ${r.error?.message ?? (r.stderr || "no report")}`,
    };
  }
  if (report.timeout) {
    return {
      ok: false,
      error: `backend.api_key_cmd did not finish within ${deadlineMs / 1000} s (its process group was killed)`,
    };
  }
  if (report.error !== undefined) return { ok: false, error: `backend.api_key_cmd failed: ${report.error}` };
  if (report.tooLarge) return { ok: false, error: `backend.api_key_cmd printed more than ${maxBytes} bytes` };
  const out = report.out ?? "";
  if (report.code !== 0) {
    return { ok: false, out, error: `backend.api_key_cmd exited with ${report.code ?? report.signal}` };
  }
  return { ok: true, out };
}
