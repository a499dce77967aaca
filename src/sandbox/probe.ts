/**
 * Can bubblewrap run here? Answered once per process and bwrap binary (issue 11: `auto`
 * probes once): the program must be on PATH and a trial sandbox with the same namespaces
 * and mounts as a real call must start. The answer carries the fix when it is no.
 */
import fs from "node:fs";
import path from "node:path";
import { childProcessModule } from "../net/builtins.js";

/** A trial that takes longer than this is treated as not working (a hung helper must not hang Scoot). */
export const PROBE_TIMEOUT_MS = 5_000;
export const INSTALL_FIX = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)";
export const USERNS_FIX =
  "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ " +
  "kernel.apparmor_restrict_unprivileged_userns=0), or run Scoot where namespaces are permitted";

export type Probe = { ok: true; bwrap: string; version: string } | { ok: false; reason: string; fix: string };

/** The first executable `name` on PATH, or undefined. */
export function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function run(file: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    childProcessModule().execFile(
      file,
      args,
      { timeout: PROBE_TIMEOUT_MS, killSignal: "SIGKILL", env: { PATH: "/usr/bin:/bin" } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        resolve({ code, out: String(stdout), err: String(stderr || (error ? error.message : "")) });
      },
    );
  });
}

async function probeOnce(bwrap: string): Promise<Probe> {
  const version = await run(bwrap, ["--version"]);
  if (version.code !== 0)
    return { ok: false, reason: `${bwrap} --version failed: ${version.err.trim()}`, fix: INSTALL_FIX };
  // The same isolation a real call asks for, minus the per-call binds.
  const trial = await run(bwrap, [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--",
    "/bin/sh",
    "-c",
    "exit 0",
  ]);
  if (trial.code !== 0) {
    const why = trial.err.trim().split("\n")[0] || `exit code ${trial.code}`;
    return { ok: false, reason: `bwrap cannot create its namespaces here: ${why}`, fix: USERNS_FIX };
  }
  const v = /(\d+\.\d+(?:\.\d+)?)/.exec(version.out)?.[1] ?? version.out.trim();
  return { ok: true, bwrap, version: v };
}

/**
 * A failed trial is tried again after this long: a daemon must not lose its sandbox for good
 * (in `bwrap` mode: every bash call) because one trial hit a busy moment. A working sandbox
 * is never probed again.
 */
export const PROBE_RETRY_MS = 60_000;

const cache = new Map<string, { probe: Promise<Probe>; at: number; failed: boolean }>();

/** Probes the `bwrap` found on `pathVar`; one trial per binary per process (failures retried, see above). */
export function probeSandbox(pathVar: string | undefined): Promise<Probe> {
  const bwrap = findOnPath("bwrap", pathVar);
  if (!bwrap) {
    return Promise.resolve({ ok: false, reason: "bwrap (bubblewrap) is not on PATH", fix: INSTALL_FIX });
  }
  const hit = cache.get(bwrap);
  if (hit && !(hit.failed && Date.now() - hit.at > PROBE_RETRY_MS)) return hit.probe;
  const entry = { probe: probeOnce(bwrap), at: Date.now(), failed: false };
  entry.probe.then((r) => {
    entry.failed = !r.ok;
  });
  cache.set(bwrap, entry);
  return entry.probe;
}
