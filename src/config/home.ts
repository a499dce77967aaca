/**
 * The runtime home: `--scoot-home DIR` > `SCOOT_HOME` > `~/.scoot` when it exists > the XDG
 * directories when `XDG_CONFIG_HOME` or `XDG_STATE_HOME` is set > `~/.scoot`, created 0700 on
 * first use. Under XDG the configuration (config file, token, skills) lives in
 * `$XDG_CONFIG_HOME/scoot` and everything Scoot writes (logs, sessions, daemon state) in
 * `$XDG_STATE_HOME/scoot`; otherwise both are the one home directory.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const HOME_DIR_MODE = 0o700;

export interface HomePaths {
  /** Where Scoot writes: logs/, state/ (the one home, or `$XDG_STATE_HOME/scoot`). */
  root: string;
  /** Where the person configures: config file, token, skills (the home, or `$XDG_CONFIG_HOME/scoot`). */
  configDir: string;
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

/** The directory name under the XDG base directories. */
const XDG_APP_DIR = "scoot";

/** The two directories of a home: the same one unless the XDG layout is chosen. */
export interface HomeDirs {
  root: string;
  configDir: string;
}

/** An XDG base directory variable's value, when set to an absolute path (the spec ignores others). */
function xdgBase(value: string | undefined): string | undefined {
  return value && path.isAbsolute(value) ? value : undefined;
}

/** The home's directories; see the module comment for the order. */
export function resolveHomeDirs(flag: string | undefined, env: NodeJS.ProcessEnv): HomeDirs {
  const chosen = flag || env.SCOOT_HOME;
  if (chosen) {
    const root = path.resolve(expandTilde(chosen, env));
    return { root, configDir: root };
  }
  const user = userHomeDir(env);
  const dotHome = path.resolve(user, ".scoot");
  const configBase = xdgBase(env.XDG_CONFIG_HOME);
  const stateBase = xdgBase(env.XDG_STATE_HOME);
  // An existing ~/.scoot keeps working whatever the environment says: nothing moves under a user.
  if ((configBase === undefined && stateBase === undefined) || fs.existsSync(dotHome)) {
    return { root: dotHome, configDir: dotHome };
  }
  return {
    root: path.join(stateBase ?? path.join(user, ".local", "state"), XDG_APP_DIR),
    configDir: path.join(configBase ?? path.join(user, ".config"), XDG_APP_DIR),
  };
}

/** The home's paths, resolved from `--scoot-home` (flag) and the environment. */
export function resolveHomePaths(flag: string | undefined, env: NodeJS.ProcessEnv): HomePaths {
  const dirs = resolveHomeDirs(flag, env);
  return homePaths(dirs.root, dirs.configDir);
}

/** The directory Scoot writes to (logs, sessions); see resolveHomeDirs. */
export function resolveHomeDir(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  return resolveHomeDirs(flag, env).root;
}

export function expandTilde(p: string, env: NodeJS.ProcessEnv = process.env): string {
  if (p === "~") return userHomeDir(env);
  if (p.startsWith("~/")) return path.join(userHomeDir(env), p.slice(2));
  return p;
}

export function homePaths(root: string, configDir: string = root): HomePaths {
  const logs = path.join(root, "logs");
  const state = path.join(root, "state");
  return {
    root,
    configDir,
    configToml: path.join(configDir, "config.toml"),
    configJson: path.join(configDir, "config.json"),
    token: path.join(configDir, "token"),
    skills: path.join(configDir, "skills"),
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

/** Errors of a home that cannot take a write: each gets one line naming the fix, not a stack. */
const UNWRITABLE_CODES = new Set(["ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EIO"]);

/** What to do about each, said after "fix:". */
const UNWRITABLE_FIX: Record<string, string> = {
  ENOSPC: "free space on that filesystem",
  EDQUOT: "free space within your quota",
  EROFS: "remount it read-write",
  EACCES: "make it writable by you (chown/chmod)",
  EPERM: "make it writable by you (chown/chmod)",
  EIO: "check the disk",
};

/**
 * The real reason a directory cannot be made: a recursive mkdir on a read-only filesystem says
 * ENOENT, so the deepest existing ancestor is asked whether it takes a write.
 */
export function unwritableReason(dir: string, e: unknown): NodeJS.ErrnoException {
  const err = e as NodeJS.ErrnoException;
  if (err?.code !== "ENOENT") return err;
  let at = path.resolve(dir);
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  try {
    fs.accessSync(at, fs.constants.W_OK);
  } catch (probe) {
    return probe as NodeJS.ErrnoException;
  }
  return err;
}

/**
 * One line for a write Scoot's home refused (full, read-only, not ours, failing), or undefined
 * for any other error: "cannot write <path>: no space left on device (ENOSPC); fix: …".
 */
export function homeWriteProblem(e: unknown, fallbackPath?: string): string | undefined {
  const err = e as NodeJS.ErrnoException | undefined;
  const code = err?.code;
  if (!code || !UNWRITABLE_CODES.has(code)) return undefined;
  const where = err.path ?? fallbackPath;
  const what = (err.message ?? "")
    .replace(/^[A-Z]+: /, "")
    .replace(/, \w+ '.*'$/, "")
    .replace(/, \w+$/, "");
  return (
    `cannot write ${where ?? "Scoot's home"}: ${what || code} (${code}); ` +
    `fix: ${UNWRITABLE_FIX[code]}, or choose another home with --scoot-home DIR or SCOOT_HOME`
  );
}
