/** The runtime home: `--scoot-home DIR` > `SCOOT_HOME` > `~/.scoot`, created 0700 on first use. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const HOME_DIR_MODE = 0o700;

export interface HomePaths {
  root: string;
  configToml: string;
  configJson: string;
  token: string;
  skills: string;
  logs: string;
  audit: string;
  state: string;
  sessions: string;
  daemonJson: string;
  daemonPid: string;
  scheduleJson: string;
}

/**
 * The user's home cannot be told: `HOME` is unset and the uid has no passwd entry (a container
 * run as an arbitrary uid). The message is one line naming the fix.
 */
export class HomeUnknownError extends Error {
  override name = "HomeUnknownError";
}

/** The user's home: `HOME`, else the passwd entry; HomeUnknownError when there is neither. */
export function userHomeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HOME) return env.HOME;
  try {
    return os.homedir();
  } catch {
    const uid = process.getuid?.() ?? "this user";
    throw new HomeUnknownError(
      `cannot tell your home directory: HOME is not set and uid ${uid} has no passwd entry; set HOME to a directory of yours (e.g. HOME=/tmp/scoot-user), or run as a user with a passwd entry`,
    );
  }
}

export function resolveHomeDir(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const chosen = flag || env.SCOOT_HOME || path.join(userHomeDir(env), ".scoot");
  return path.resolve(expandTilde(chosen, env));
}

export function expandTilde(p: string, env: NodeJS.ProcessEnv = process.env): string {
  if (p === "~") return userHomeDir(env);
  if (p.startsWith("~/")) return path.join(userHomeDir(env), p.slice(2));
  return p;
}

export function homePaths(root: string): HomePaths {
  const logs = path.join(root, "logs");
  const state = path.join(root, "state");
  return {
    root,
    configToml: path.join(root, "config.toml"),
    configJson: path.join(root, "config.json"),
    token: path.join(root, "token"),
    skills: path.join(root, "skills"),
    logs,
    audit: path.join(logs, "audit.jsonl"),
    state,
    sessions: path.join(state, "sessions"),
    daemonJson: path.join(state, "daemon.json"),
    daemonPid: path.join(state, "daemon.pid"),
    scheduleJson: path.join(state, "schedule.json"),
  };
}

/** Creates a directory (and parents) with owner-only permissions. */
export function ensureDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: HOME_DIR_MODE });
}

/** Creates the home tree on first use. Existing directories keep their mode (doctor reports it). */
export function ensureHome(paths: HomePaths): void {
  ensureDir(paths.root);
  ensureDir(paths.logs);
  ensureDir(paths.sessions);
}
