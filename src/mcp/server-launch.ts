/**
 * How a stdio MCP server is started so that none of its processes outlives the run (docs/mcp.md
 * "Server processes"). The SDK spawns the server as Scoot's child and at close signals only that
 * child; a launcher (`npx`, `sh -c`) that dies without passing the signal on, or a server that
 * starts a helper with `setsid` (a new session and group of its own), would leave processes behind.
 *
 * - With a usable bubblewrap (the sandbox's own trusted binary, tools.sandbox_bwrap_path, probed
 *   and pinned as for bash) the server runs in a PID namespace of its own: when the server exits,
 *   the namespace's init exits and the kernel kills every process left in it, whatever session or
 *   group it made. Nothing else is confined: the whole host filesystem (devices included) is bound
 *   as it is, the network, IPC and user are the host's, so the server sees the environment it
 *   would see unwrapped (docs/mcp.md: a stdio server runs on the host, unsandboxed).
 * - Without one (not installed, namespaces refused, not Linux) the server starts as before, and
 *   its environment carries a mark (MCP_SERVER_MARK_ENV) that every descendant inherits; at close
 *   each live process with the mark is ended (mark-reap.ts). A process that both leaves the group
 *   and clears its environment is missed: the caller warns once.
 * - In both cases util-linux `setsid` makes the child lead a group of its own (same pid: setsid
 *   only forks when it already leads one, which a fresh child never does), so close ends the whole
 *   group at once, bwrap and the namespace's init included.
 * A program that cannot be found is started unwrapped, so the spawn's own ENOENT names it.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { safeSearchEntry } from "../core/host-helper-env.js";
import { checkPinned, findOnPath, locateBwrap, probeSandbox } from "../sandbox/probe.js";

/** Fixed system directories only: the launcher must be the real util-linux setsid. */
const SETSID_DIRS = "/usr/bin:/bin:/usr/sbin:/sbin";
/** The variable that marks a server's processes when no PID namespace holds them. */
export const MCP_SERVER_MARK_ENV = "SCOOT_MCP_SERVER_MARK";

/**
 * bwrap options: a new PID namespace over the host as it is. `--dev-bind / /` keeps devices
 * usable (a plain bind would mount them nodev), `--proc` gives the namespace its own /proc,
 * `--die-with-parent` ends it if bwrap itself is killed.
 */
const PID_NAMESPACE_ARGS = ["--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid", "--die-with-parent"];

export interface ServerLaunch {
  command: string;
  args: string[];
  /** Added to the server's environment (the mark, in the fallback). */
  env: Record<string, string>;
  /** The child leads its own process group (pgid = pid), ended whole at close. */
  ownGroup: boolean;
  /** The server runs in a PID namespace of its own. */
  pidNamespace: boolean;
  /** Fallback: processes whose environment holds this mark are ended at close. */
  mark?: string;
  /** Why the server is not in a PID namespace, when it is not (the caller warns once). */
  fallbackReason?: string;
}

/** True when spawning `command` would find a program (so a spawn error stays the caller's to report). */
function runnable(command: string, pathVar: string | undefined, cwd: string): boolean {
  if (!command.includes("/")) return findOnPath(command, pathVar) !== undefined;
  try {
    // A relative command is spawned from the server's working directory, so judged there.
    fs.accessSync(path.resolve(cwd, command), fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The bwrap to wrap servers in, or why there is none. As for bash, a binary the model could have
 * written (inside the project) is never run, not even for the trial, and one changed since its
 * trial is refused: the server then starts unwrapped, as it would without bubblewrap.
 */
async function usableBwrap(
  bwrapPath: string | undefined,
  projectRoot: string,
): Promise<{ bwrap?: string; reason?: string }> {
  if (process.platform !== "linux")
    return { reason: `PID namespaces need Linux (this is ${process.platform})` };
  const located = locateBwrap(bwrapPath);
  if (located.ok && !safeSearchEntry(located.bwrap, projectRoot))
    return { reason: `${located.bwrap} lies inside the project, where a command can replace it` };
  const probe = await probeSandbox(bwrapPath);
  if (!probe.ok) return { reason: `${probe.reason} (fix: ${probe.fix})` };
  const changed = checkPinned(probe);
  if (changed) return { reason: changed };
  return { bwrap: probe.bwrap };
}

export async function serverLaunch(
  command: string,
  args: readonly string[],
  opts: { pathVar: string | undefined; cwd: string; projectRoot: string; bwrapPath?: string | undefined },
): Promise<ServerLaunch> {
  // A missing program is left to the plain spawn, whose ENOENT names it directly.
  if (!runnable(command, opts.pathVar, opts.cwd)) {
    return { command, args: [...args], env: {}, ownGroup: false, pidNamespace: false };
  }
  const setsid = process.platform === "linux" ? findOnPath("setsid", SETSID_DIRS) : undefined;
  const group = (argv: string[]) =>
    setsid
      ? { command: setsid, args: ["--", ...argv], ownGroup: true }
      : { command: argv[0]!, args: argv.slice(1), ownGroup: false };
  const found = await usableBwrap(opts.bwrapPath, opts.projectRoot);
  if (found.bwrap) {
    const argv = [found.bwrap, ...PID_NAMESPACE_ARGS, "--chdir", opts.cwd, "--", command, ...args];
    return { ...group(argv), env: {}, pidNamespace: true };
  }
  const mark = randomBytes(16).toString("hex");
  return {
    ...group([command, ...args]),
    env: { [MCP_SERVER_MARK_ENV]: mark },
    pidNamespace: false,
    mark,
    fallbackReason: found.reason ?? "bubblewrap is not usable",
  };
}
