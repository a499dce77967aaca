/**
 * The bubblewrap command line for one sandboxed `bash` call (docs/safety.md "Shell containment"):
 * the whole filesystem read-only, the project writable, a private empty /tmp, a minimal
 * /dev, a /proc of its own PID namespace with /proc/sys read-only, the host's runtime
 * directories (sockets) hidden, the protected places hidden, no network unless asked, no
 * capabilities (root inside could otherwise unmount what hides a secret), no nested user
 * namespace, a seccomp filter that allows by list (seccomp.ts), and the sandbox dies with Scoot.
 *
 * Pure: everything it needs comes in `SandboxLayout`, and it touches the filesystem only to
 * see which of the hidden places exist (a mount needs an existing mount point) and what they
 * resolve to (a mount covers the inode a symlink points at, so the real path is hidden).
 */
import fs from "node:fs";
import path from "node:path";
import { isInside } from "../core/inside.js";
import { CREDENTIAL_STORES } from "../policy/protected-places.js";
import { persistenceMountArgs } from "./persistence-mounts.js";

/** The sandbox's scratch directory: private and empty for every call. */
const PRIVATE_TMP = "/tmp";

/**
 * Under /proc, read-only even for root: a write to /proc/sys (core_pattern, modprobe) or
 * /proc/sysrq-trigger acts on the host. bwrap does not cover them because procfs answers
 * EACCES to its remount, and sysctl writes are checked against the euid, not capabilities.
 */
export const PROC_READ_ONLY: readonly string[] = ["/proc/sys", "/proc/sysrq-trigger"];

/** Where host services keep their sockets (D-Bus, agents, podman, docker): hidden. */
export const RUNTIME_DIRS: readonly string[] = ["/run", "/var/run", "/run/user"];

export interface SandboxLayout {
  /** Project root: the one writable place. */
  projectRoot: string;
  /** Working directory of the command (the project root in practice). */
  cwd: string;
  /** The user's home, whose credential stores are hidden. */
  userHome: string;
  /** Scoot's home (config, token, logs, sessions): hidden whole. */
  scootHome: string;
  /** The backend token file, wherever it is. */
  tokenFile: string;
  /** Scoot's other places (default home, HMAC key, the file api_key_cmd reads). */
  ownPlaces?: readonly string[];
  /** `tools.secret_paths`, already absolute. */
  secretPaths: readonly string[];
  /** Loaded skills' folders: shown read-only even inside a hidden place. */
  skillDirs?: readonly string[];
  /** `$XDG_RUNTIME_DIR` of the caller, hidden with the other runtime directories. */
  runtimeDir?: string;
  /** `tools.sandbox_network`: share the host network namespace. */
  network: boolean;
  /** The fd bwrap reads the seccomp filter from, when there is one. */
  seccompFd?: number;
  /** The probed bwrap can forbid nested user namespaces (`USERNS_LOCK`). */
  disableUserns?: boolean;
  /**
   * While a plan binds (docs/safety.md "Plan mode"): the only files of the project bash may
   * write (absolute); the rest of the project is read-only.
   */
  planFiles?: readonly string[];
}

/**
 * How many entries of one directory a plan's write binds protect one by one (see `planBindArgs`):
 * each is a mount, about 0.1 ms of bwrap's start (bench/plan-gate.mjs), so this bounds what a
 * bound bash call adds to about 25 ms a directory.
 */
export const MAX_PLAN_DIR_ENTRIES = 256;

/**
 * No user namespace inside the sandbox's own: a process that creates one and does not exec
 * holds every capability there. `--disable-userns` needs an explicit `--unshare-user` (even
 * as root, where `--unshare-all` already creates one when it can); probe.ts checks both work.
 */
export const USERNS_LOCK: readonly string[] = ["--unshare-user", "--disable-userns"];

interface Hidden {
  path: string;
  dir: boolean;
}

/** The real location of an existing path, or undefined when nothing is there to hide. */
function existing(p: string): Hidden | undefined {
  try {
    // Most places do not exist: a stat that returns instead of throwing keeps a call cheap
    // (every bash call walks the whole table, see bench/sandbox.mjs).
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st) return undefined;
    return { path: fs.realpathSync.native(p), dir: st.isDirectory() };
  } catch {
    return undefined;
  }
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Real, existing, deduplicated, parents before children, nothing inside an already hidden directory. */
function normalise(wanted: readonly string[]): Hidden[] {
  const seen = new Map<string, Hidden>();
  for (const p of wanted) {
    const h = existing(p);
    if (h && !seen.has(h.path)) seen.set(h.path, h);
  }
  // The root itself cannot be hidden without hiding everything; a setting that names it is ignored.
  const sorted = [...seen.values()]
    .filter((h) => h.path !== "/")
    .sort((a, b) => a.path.length - b.path.length);
  const kept: Hidden[] = [];
  for (const h of sorted) {
    if (!kept.some((k) => k.dir && h.path !== k.path && isInside(h.path, k.path))) kept.push(h);
  }
  return kept;
}

/** Every protected place the sandbox hides, as real paths (see `normalise`). */
export function hiddenPlaces(layout: SandboxLayout): Hidden[] {
  return normalise([
    layout.scootHome,
    layout.tokenFile,
    ...(layout.ownPlaces ?? []),
    ...layout.secretPaths,
    ...CREDENTIAL_STORES.map((e) => path.join(layout.userHome, e.path)),
  ]);
}

/** The host's runtime directories (sockets), as real paths. */
export function runtimePlaces(layout: SandboxLayout): Hidden[] {
  const dirs = [...RUNTIME_DIRS];
  if (layout.runtimeDir && path.isAbsolute(layout.runtimeDir)) dirs.push(layout.runtimeDir);
  return normalise(dirs).filter((h) => h.dir);
}

function hideArgs(h: Hidden): string[] {
  // A directory becomes an empty tmpfs; a file reads as empty (/dev/null bound over it).
  return h.dir ? ["--tmpfs", h.path] : ["--ro-bind", "/dev/null", h.path];
}

/**
 * The directories between the project root and a hidden place inside it, each bound onto
 * itself: a mount point cannot be renamed, so a command cannot move a protected file out
 * from under its cover (`mv secrets public`) and find it uncovered on the next call.
 */
function pinArgs(places: readonly Hidden[], root: string, bind: "--bind" | "--ro-bind"): string[] {
  const dirs = new Set<string>();
  for (const h of places) {
    for (let d = path.dirname(h.path); d !== root && isInside(d, root); d = path.dirname(d)) dirs.add(d);
  }
  return [...dirs].sort((a, b) => a.length - b.length).flatMap((d) => [bind, d, d]);
}

/**
 * The project while a plan binds: read-only, except the files the plan names. Each directory
 * that holds a named file is bound writable, and every other entry in it bound read-only onto
 * itself: a mount point cannot be written, renamed or removed, so the named files can be
 * rewritten in place or replaced (a temporary file renamed over them, as `sed -i` does) and new
 * named files created, while the other entries there stay as they are. A command can still
 * create new, unnamed entries in such a directory; it cannot change anything else in the
 * project. Symbolic links among the entries are left alone (a bind would follow them).
 */
function planBindArgs(root: string, files: readonly string[]): string[] {
  const args = ["--ro-bind", root, root];
  const named = new Set(files.map((f) => path.join(realOr(path.dirname(f)), path.basename(f))));
  const dirs = new Set<string>();
  for (const f of named) {
    const dir = path.dirname(f);
    if (isInside(dir, root) && existing(dir)?.dir) dirs.add(dir);
  }
  for (const dir of [...dirs].sort((a, b) => a.length - b.length)) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    // A directory too large to protect entry by entry stays read-only but for its named files,
    // which bash can then write in place (not replace or create).
    if (entries.length > MAX_PLAN_DIR_ENTRIES) {
      for (const e of entries) {
        const full = path.join(dir, e.name);
        if (named.has(full) && e.isFile()) args.push("--bind", full, full);
      }
      continue;
    }
    args.push("--bind", dir, dir);
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (named.has(full) || e.isSymbolicLink()) continue;
      // A directory that holds named files of its own is bound after this one.
      if (e.isDirectory() && dirs.has(full)) continue;
      args.push("--ro-bind", full, full);
    }
  }
  return args;
}

/**
 * bwrap options (everything before the command). Mount order matters: later mounts cover
 * earlier ones, and bwrap takes every bind's source from the host, so:
 * the private /tmp and the hidden runtime directories come before the project (a project
 * under them stays visible); protected places outside the project are hidden before it is
 * bound; protected places inside it (a project that contains Scoot's home, started in `~`)
 * are pinned and hidden after; loaded skills' folders are shown read-only last.
 */
export function bwrapOptions(layout: SandboxLayout): string[] {
  const root = realOr(layout.projectRoot);
  const tmp = realOr(PRIVATE_TMP);
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  for (const p of PROC_READ_ONLY) if (fs.existsSync(p)) args.push("--ro-bind", p, p);
  args.push("--tmpfs", tmp);
  const runtime = runtimePlaces(layout).filter((h) => !isInside(h.path, tmp));
  for (const h of runtime) args.push(...hideArgs(h));
  const before: Hidden[] = [];
  const after: Hidden[] = [];
  for (const h of hiddenPlaces(layout)) {
    // Inside the project, the project itself included: protection wins over visibility.
    if (isInside(h.path, root)) after.push(h);
    // Under the private /tmp it is invisible already (and the mount point would not exist).
    else if (!isInside(h.path, tmp)) before.push(h);
  }
  for (const h of before) args.push(...hideArgs(h));
  if (layout.planFiles) {
    // The pins read-only too: a writable pin would open its directory again.
    args.push(...pinArgs(after, root, "--ro-bind"));
    args.push(...planBindArgs(root, layout.planFiles));
  } else {
    args.push("--bind", root, root);
    args.push(...pinArgs(after, root, "--bind"));
  }
  // Before the hidden places inside the project, so a read-only bind never shows one again.
  args.push(...persistenceMountArgs(root, layout.userHome, after));
  for (const h of after) args.push(...hideArgs(h));
  const covers = [...runtime, ...before, ...after].filter((h) => h.dir);
  for (const dir of layout.skillDirs ?? []) {
    const real = realOr(dir);
    if (covers.some((h) => isInside(real, h.path))) args.push("--ro-bind", real, real);
  }
  if (layout.network) args.push(...resolverArgs(runtime));
  args.push("--chdir", realOr(layout.cwd));
  args.push("--unshare-all");
  if (layout.disableUserns) args.push(...USERNS_LOCK);
  if (layout.network) args.push("--share-net");
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  if (layout.seccompFd !== undefined) args.push("--seccomp", String(layout.seccompFd));
  return args;
}

/** /etc/resolv.conf often lives under /run (systemd-resolved): with the network shared, show that one file. */
function resolverArgs(runtime: readonly Hidden[]): string[] {
  const real = existing("/etc/resolv.conf");
  if (!real || real.dir || !runtime.some((h) => isInside(real.path, h.path))) return [];
  return ["--ro-bind", real.path, real.path];
}

/** The whole argv after the bwrap program: options, then the shell and its arguments (gate.ts). */
export function bwrapArgv(layout: SandboxLayout, shell: string, shellArgs: readonly string[]): string[] {
  return [...bwrapOptions(layout), "--", shell, ...shellArgs];
}
