/**
 * Which bubblewrap runs the sandbox, and can it run here? (docs/safety.md "Shell containment".)
 *
 * The binary is trusted only from where an ordinary command cannot plant one: the operator's
 * `tools.sandbox_bwrap_path` (absolute), else the first of a few fixed system locations.
 * Never PATH: `npm run`, `npx`, an activated in-project `.venv` or direnv put project
 * directories first on PATH, and one sandboxed call could drop a fake `bwrap` there that the
 * next call would run unconfined. After the first good trial the binary is pinned by device,
 * inode and a SHA-256 of its content; a launch finds it replaced, or rewritten in place, and
 * refuses (`checkPinned`). The hash is taken once per process; each call only stats the file
 * and hashes again when size, mtime or ctime moved (a rewrite in place changes ctime even when
 * the writer restores mtime), so the per-call cost stays one stat.
 *
 * The trial is answered once per process and binary (failures retried, see PROBE_RETRY_MS):
 * a sandbox with the same namespaces and mounts as a real call, with the seccomp filter,
 * must start. When only the filter is refused, the sandbox still runs and says what it lacks.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { childProcessModule } from "../core/builtins.js";
import { USERNS_LOCK } from "./bwrap.js";
import { seccompProgram } from "./seccomp.js";

/** A trial that takes longer than this is treated as not working (a hung helper must not hang Scoot). */
export const PROBE_TIMEOUT_MS = 5_000;
export const INSTALL_FIX = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)";
export const USERNS_FIX =
  "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ " +
  "kernel.apparmor_restrict_unprivileged_userns=0), or run Scoot where namespaces are permitted";

/** Where distributions install bwrap; searched in this order when tools.sandbox_bwrap_path is unset. */
export const TRUSTED_BWRAP_LOCATIONS: readonly string[] = [
  "/usr/bin/bwrap",
  "/usr/local/bin/bwrap",
  "/bin/bwrap",
  "/usr/sbin/bwrap",
  "/run/current-system/sw/bin/bwrap",
];

/** The fd bwrap reads the filter from (`--seccomp 3`); the spawn's fourth stdio entry. */
export const SECCOMP_FD = 3;

export type Seccomp = { ok: true } | { ok: false; reason: string };

export type Probe =
  | {
      ok: true;
      bwrap: string;
      version: string;
      dev: number;
      ino: number;
      /** SHA-256 (hex) of the binary's content when it passed its trial. */
      sha256: string;
      /** The stat fields last seen with that content: an unchanged stat skips the hash. */
      seen: StatMark;
      seccomp: Seccomp;
      /** bwrap can forbid nested user namespaces here (`USERNS_LOCK`); the filter refuses them too. */
      disableUserns: boolean;
    }
  | { ok: false; reason: string; fix: string };

/** Size, mtime and ctime in nanoseconds: what any write to the file moves. */
export interface StatMark {
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

function markOf(st: fs.BigIntStats): StatMark {
  return { size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
}

function sameMark(a: StatMark, b: StatMark): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** SHA-256 of a file's content, or the error code that stopped the read. */
export function hashFile(file: string): { ok: true; sha256: string } | { ok: false; reason: string } {
  try {
    return { ok: true, sha256: createHash("sha256").update(fs.readFileSync(file)).digest("hex") };
  } catch (e) {
    return { ok: false, reason: (e as NodeJS.ErrnoException).code ?? String(e) };
  }
}

/** The first executable `name` on PATH, or undefined (for other helpers; never for bwrap). */
export function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function isExecutableFile(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

export type Located = { ok: true; bwrap: string } | { ok: false; reason: string; fix: string };

/** The bwrap to trust: the configured absolute path, else the first fixed location present. */
export function locateBwrap(
  configured: string | undefined,
  locations: readonly string[] = TRUSTED_BWRAP_LOCATIONS,
): Located {
  if (configured !== undefined && configured !== "") {
    if (!path.isAbsolute(configured)) {
      return {
        ok: false,
        reason: `tools.sandbox_bwrap_path = ${JSON.stringify(configured)} is not an absolute path`,
        fix: "set tools.sandbox_bwrap_path to the absolute path of bwrap (e.g. /usr/bin/bwrap), or remove it",
      };
    }
    if (!isExecutableFile(configured)) {
      return {
        ok: false,
        reason: `tools.sandbox_bwrap_path = ${configured} is not an executable file`,
        fix: `${INSTALL_FIX}, or point tools.sandbox_bwrap_path at it`,
      };
    }
    return { ok: true, bwrap: configured };
  }
  const found = locations.find(isExecutableFile);
  if (found) return { ok: true, bwrap: found };
  return {
    ok: false,
    reason: `bwrap (bubblewrap) is not installed in ${locations.join(", ")}`,
    fix: `${INSTALL_FIX}, or set tools.sandbox_bwrap_path`,
  };
}

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** Runs bwrap with a clean environment; `program` goes to fd 3 (the seccomp filter). */
function run(file: string, args: string[], program?: Buffer): Promise<Ran> {
  return new Promise((resolve) => {
    const stdio: ("ignore" | "pipe")[] = ["ignore", "pipe", "pipe"];
    if (program) stdio.push("pipe");
    let child: ReturnType<ReturnType<typeof childProcessModule>["spawn"]>;
    try {
      child = childProcessModule().spawn(file, args, { stdio, env: { PATH: "/usr/bin:/bin" } });
    } catch (e) {
      resolve({ code: null, out: "", err: (e as Error).message });
      return;
    }
    let out = "";
    let err = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d;
    });
    child.stderr?.on("data", (d: Buffer) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_TIMEOUT_MS);
    if (program) {
      const fd3 = child.stdio[SECCOMP_FD] as NodeJS.WritableStream & {
        on: (e: string, f: () => void) => void;
      };
      fd3.on("error", () => {});
      fd3.end(program);
    }
    child.on("error", (e) => {
      err += e.message;
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** The isolation every call asks for, minus its per-call binds (bwrap.ts builds the real one). */
const TRIAL = [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--ro-bind",
  "/proc/sys",
  "/proc/sys",
  "--tmpfs",
  "/tmp",
  "--unshare-all",
  "--die-with-parent",
  "--new-session",
  "--cap-drop",
  "ALL",
];
const TRIAL_COMMAND = ["--", "/bin/sh", "-c", "exit 0"];

function firstLine(r: Ran): string {
  return r.err.trim().split("\n")[0] || `exit code ${r.code}`;
}

/** Whether the trial also starts with `USERNS_LOCK` and bwrap confirms the lock holds (bwrap 0.8+). */
async function locksUserns(bwrap: string, program: Buffer | undefined): Promise<boolean> {
  const filterArgs = program ? ["--seccomp", String(SECCOMP_FD)] : [];
  const r = await run(
    bwrap,
    [...TRIAL, ...USERNS_LOCK, "--assert-userns-disabled", ...filterArgs, ...TRIAL_COMMAND],
    program,
  );
  return r.code === 0;
}

async function probeOnce(bwrap: string): Promise<Probe> {
  const version = await run(bwrap, ["--version"]);
  if (version.code !== 0)
    return { ok: false, reason: `${bwrap} --version failed: ${version.err.trim()}`, fix: INSTALL_FIX };
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(bwrap, { bigint: true });
  } catch (e) {
    return { ok: false, reason: `${bwrap} cannot be examined: ${(e as Error).message}`, fix: INSTALL_FIX };
  }
  // Hashed before the trial: a binary changed during the trial fails the first pin check.
  const hashed = hashFile(bwrap);
  if (!hashed.ok) return { ok: false, reason: `${bwrap} cannot be read: ${hashed.reason}`, fix: INSTALL_FIX };
  const filter = seccompProgram();
  let seccomp: Seccomp;
  if (filter.ok) {
    const withFilter = await run(
      bwrap,
      [...TRIAL, "--seccomp", String(SECCOMP_FD), ...TRIAL_COMMAND],
      filter.program,
    );
    seccomp =
      withFilter.code === 0
        ? { ok: true }
        : { ok: false, reason: `bwrap refused the seccomp filter: ${firstLine(withFilter)}` };
  } else seccomp = { ok: false, reason: filter.reason };
  if (!seccomp.ok) {
    const trial = await run(bwrap, [...TRIAL, ...TRIAL_COMMAND]);
    if (trial.code !== 0) {
      return {
        ok: false,
        reason: `bwrap cannot create its namespaces here: ${firstLine(trial)}`,
        fix: USERNS_FIX,
      };
    }
  }
  const disableUserns = await locksUserns(bwrap, seccomp.ok && filter.ok ? filter.program : undefined);
  const v = /(\d+\.\d+(?:\.\d+)?)/.exec(version.out)?.[1] ?? version.out.trim();
  return {
    ok: true,
    bwrap,
    version: v,
    dev: Number(st.dev),
    ino: Number(st.ino),
    sha256: hashed.sha256,
    seen: markOf(st),
    seccomp,
    disableUserns,
  };
}

/**
 * A failed trial is tried again after this long: a daemon must not lose its sandbox for good
 * (in `bwrap` mode: every bash call) because one trial hit a busy moment. A working sandbox
 * is never probed again.
 */
export const PROBE_RETRY_MS = 60_000;

const cache = new Map<string, { probe: Promise<Probe>; at: number; failed: boolean }>();

/**
 * Probes the trusted bwrap (`configured` = tools.sandbox_bwrap_path); one trial per binary
 * per process (failures retried, see above).
 */
export function probeSandbox(
  configured: string | undefined,
  locations: readonly string[] = TRUSTED_BWRAP_LOCATIONS,
): Promise<Probe> {
  const located = locateBwrap(configured, locations);
  if (!located.ok) return Promise.resolve(located);
  const bwrap = located.bwrap;
  const hit = cache.get(bwrap);
  if (hit && !(hit.failed && Date.now() - hit.at > PROBE_RETRY_MS)) return hit.probe;
  const entry = { probe: probeOnce(bwrap), at: Date.now(), failed: false };
  entry.probe.then((r) => {
    entry.failed = !r.ok;
  });
  cache.set(bwrap, entry);
  return entry.probe;
}

/**
 * Undefined when the probed binary is still the one that passed; else why it is refused. A
 * stat per call; the content is hashed again only when size, mtime or ctime moved, and a
 * matching hash (a `touch`, a reinstall of the same build) becomes the new mark.
 */
export function checkPinned(probe: Extract<Probe, { ok: true }>): string | undefined {
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(probe.bwrap, { bigint: true });
  } catch (e) {
    return `${probe.bwrap} is gone since it was checked (${(e as NodeJS.ErrnoException).code ?? "error"})`;
  }
  if (Number(st.dev) !== probe.dev || Number(st.ino) !== probe.ino) {
    return `${probe.bwrap} was replaced since it was checked (device/inode ${probe.dev}/${probe.ino}, now ${st.dev}/${st.ino})`;
  }
  const mark = markOf(st);
  if (sameMark(mark, probe.seen)) return undefined;
  const hashed = hashFile(probe.bwrap);
  if (!hashed.ok) return `${probe.bwrap} changed since it was checked and cannot be read (${hashed.reason})`;
  if (hashed.sha256 !== probe.sha256) {
    return `${probe.bwrap} was rewritten in place since it was checked (SHA-256 ${probe.sha256.slice(0, 12)}…, now ${hashed.sha256.slice(0, 12)}…)`;
  }
  probe.seen = mark;
  return undefined;
}
