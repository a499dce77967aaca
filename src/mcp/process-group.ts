/**
 * stdio MCP servers in a process group of their own. The SDK spawns the server
 * in Scoot's group and at close signals only the direct child; a launcher such as `npx` or
 * `sh -c` that dies without passing the signal on leaves the real server (a grandchild)
 * running after the run. Starting the command through util-linux `setsid` makes the child
 * lead a new session and group (same pid: setsid only forks when it already leads a group,
 * which a freshly spawned child never does), so close can end the whole group at once.
 * Where `setsid` is missing the server starts as before and only the child is reaped.
 */
import fs from "node:fs";
import path from "node:path";
import { findOnPath } from "../sandbox/probe.js";

/** Fixed system directories only: the launcher must be the real util-linux setsid. */
const SETSID_DIRS = "/usr/bin:/bin:/usr/sbin:/sbin";

export interface GroupLaunch {
  command: string;
  args: string[];
  /** True when the child's pid is also its process group id. */
  ownGroup: boolean;
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

export function inOwnProcessGroup(
  command: string,
  args: readonly string[],
  pathVar: string | undefined,
  cwd: string,
): GroupLaunch {
  const setsid = process.platform === "linux" ? findOnPath("setsid", SETSID_DIRS) : undefined;
  // A missing program is left to the plain spawn, whose ENOENT names it directly.
  if (!setsid || !runnable(command, pathVar, cwd)) return { command, args: [...args], ownGroup: false };
  return { command: setsid, args: ["--", command, ...args], ownGroup: true };
}
