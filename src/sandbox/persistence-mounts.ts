/**
 * The sandbox side of the persistence places (docs/safety.md "Persistence places"): inside the
 * project, the repository's git directory becomes a mount point of its own (so `mv .git g`
 * fails and no copy can take its place) with its hooks and config bound read-only on top, and
 * when the user's home lies inside the project its existing startup files are bound read-only
 * with every directory between the project root and them pinned the same way.
 *
 * Only what exists when the call starts can be bound: a mount needs an existing mount point,
 * and creating one would leave an empty file in the user's project.
 */
import fs from "node:fs";
import path from "node:path";
import { isInside } from "../core/inside.js";
import { PERSISTENCE_PLACES } from "../policy/persistence-places.js";

/** Git dirs looked for under `modules/` (submodules, whose names may hold slashes), this deep. */
export const MAX_MODULE_DEPTH = 4;
/** At most this many git dirs are bound per call (a bound on the launch cost). */
export const MAX_GIT_DIRS = 64;

/** What inside one git dir git runs or reads settings from. */
const GIT_DIR_PLACES = PERSISTENCE_PLACES.filter((r) => r.scope === "repository").map((r) =>
  path.basename(r.path),
);

function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The git dir a `.git` file names (`gitdir: …`, relative to the file's directory). */
function gitdirOfFile(file: string): string | undefined {
  try {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(file, "utf8").slice(0, 4096));
    if (!m) return undefined;
    return fs.realpathSync(path.resolve(path.dirname(file), m[1]!));
  } catch {
    return undefined;
  }
}

/** The git dirs below `dir` (each has a HEAD), depth-bounded. */
function gitDirsUnder(dir: string, depth: number, out: string[]): void {
  if (depth > MAX_MODULE_DEPTH || out.length >= MAX_GIT_DIRS) return;
  let names: fs.Dirent[];
  try {
    names = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of names) {
    if (!d.isDirectory()) continue;
    const sub = path.join(dir, d.name);
    if (lstat(path.join(sub, "HEAD"))?.isFile()) {
      if (out.length < MAX_GIT_DIRS) out.push(sub);
      gitDirsUnder(path.join(sub, "modules"), 0, out);
    } else gitDirsUnder(sub, depth + 1, out);
  }
}

/**
 * bwrap options binding the persistence places inside the project read-only. `root` is the
 * real project root; `hidden` are protected places hidden after this (nothing inside them is
 * shown again by a bind).
 */
export function persistenceMountArgs(
  root: string,
  userHome: string,
  hidden: readonly { path: string }[],
): string[] {
  const pins = new Set<string>();
  const readOnly = new Set<string>();
  const covered = (p: string) => hidden.some((h) => isInside(p, h.path));
  const dotGit = path.join(root, ".git");
  const st = lstat(dotGit);
  let main: string | undefined;
  if (st?.isDirectory()) main = dotGit;
  else if (st?.isFile()) {
    // A worktree or submodule checkout: the file itself says where git looks, so it stays as it is.
    readOnly.add(dotGit);
    const named = gitdirOfFile(dotGit);
    if (named && isInside(named, root)) main = named;
  }
  if (main) {
    const dirs = [main];
    gitDirsUnder(path.join(main, "modules"), 0, dirs);
    gitDirsUnder(path.join(main, "worktrees"), MAX_MODULE_DEPTH, dirs);
    for (const d of dirs) {
      pins.add(d);
      for (const name of GIT_DIR_PLACES) {
        const p = path.join(d, name);
        const s = lstat(p);
        if (s && !s.isSymbolicLink()) readOnly.add(p);
      }
    }
  }
  const home = realOr(userHome);
  if (isInside(home, root)) {
    for (const row of PERSISTENCE_PLACES) {
      if (row.scope !== "home") continue;
      const p = path.join(home, row.path);
      const s = lstat(p);
      if (!s || s.isSymbolicLink()) continue;
      readOnly.add(p);
      for (let d = path.dirname(p); d !== root && isInside(d, root); d = path.dirname(d)) pins.add(d);
    }
  }
  const args: string[] = [];
  const pinned = [...pins].filter((p) => !covered(p)).sort((a, b) => a.length - b.length);
  for (const d of pinned) args.push("--bind", d, d);
  for (const p of [...readOnly].filter((p) => !covered(p)).sort((a, b) => a.length - b.length))
    args.push("--ro-bind", p, p);
  return args;
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Suffix given to a persistence entry that appeared during a call and was set aside. */
export const SET_ASIDE_SUFFIX = ".disabled-by-scoot";

/**
 * Keys a fresh repository's config may hold after `git init`, `git config user.*`, `git remote
 * add` and a branch's upstream: none of them names a program. Compared as `section.key`
 * (subsection dropped), lower-case.
 */
const SAFE_CONFIG_KEYS: ReadonlySet<string> = new Set([
  "core.repositoryformatversion",
  "core.filemode",
  "core.bare",
  "core.logallrefupdates",
  "core.ignorecase",
  "core.precomposeunicode",
  "core.symlinks",
  "init.defaultbranch",
  "extensions.objectformat",
  "user.name",
  "user.email",
  "remote.url",
  "remote.fetch",
  "branch.remote",
  "branch.merge",
]);

/** Whether a git config text holds only the keys above (anything unreadable counts as unsafe). */
export function configIsPlain(text: string): boolean {
  let section: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const head = /^\[([A-Za-z0-9.-]+)(?:\s+"[^"\\]*")?\]$/.exec(line);
    if (head) {
      section = head[1]!.toLowerCase();
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(=.*)?$/.exec(line);
    if (!kv || section === undefined || line.endsWith("\\")) return false;
    if (!SAFE_CONFIG_KEYS.has(`${section}.${kv[1]!.toLowerCase()}`)) return false;
  }
  return true;
}

interface GitState {
  /** Something (of any type) was at `<root>/.git`. */
  entry: boolean;
  /** `<root>/.git` was a real directory. */
  dotGit: boolean;
  /** Which of the git dir's places existed (those were bound read-only for the call). */
  places: Set<string>;
}

function gitState(root: string): GitState {
  const dotGit = path.join(root, ".git");
  const st = lstat(dotGit);
  const isDir = st?.isDirectory() === true;
  const places = new Set<string>();
  if (isDir) for (const name of GIT_DIR_PLACES) if (lstat(path.join(dotGit, name))) places.add(name);
  return { entry: st !== undefined, dotGit: isDir, places };
}

/**
 * Looks at the project's `.git` before a sandboxed call and returns the check to run after
 * it: a persistence place that did not exist when the call started could not be bound
 * read-only, so whatever the call created there (a `git init` with a hook, a hooks directory,
 * a `commondir`, a config naming a program) is set aside under SET_ASIDE_SUFFIX and named in
 * the observation. Every process of the call is gone by then (its PID namespace ended), and
 * nothing is followed: `.git` and what is set aside must be real directories and files.
 */
export function watchGitPlaces(root: string): () => string | undefined {
  const before = gitState(root);
  return () => {
    const dotGit = path.join(root, ".git");
    const now = lstat(dotGit);
    if (!now) return undefined;
    const fresh = !before.dotGit;
    const setAside: string[] = [];
    const aside = (p: string) => {
      const to = `${p}${SET_ASIDE_SUFFIX}`;
      try {
        if (lstat(to)) fs.rmSync(to, { recursive: true, force: true });
        fs.renameSync(p, to);
        setAside.push(path.relative(root, p));
      } catch {
        setAside.push(`${path.relative(root, p)} (could not be moved: remove it yourself)`);
      }
    };
    // A new `.git` link or `gitdir:` file points git at a directory nobody looked at.
    if (!now.isDirectory()) {
      if (!before.entry) aside(dotGit);
      return report(setAside);
    }
    for (const name of GIT_DIR_PLACES) {
      if (!fresh && before.places.has(name)) continue;
      const p = path.join(dotGit, name);
      const st = lstat(p);
      if (!st) continue;
      if (name === "hooks" && st.isDirectory()) {
        let hooks: string[] = [];
        try {
          hooks = fs.readdirSync(p);
        } catch {
          // unreadable: nothing git could run either
        }
        for (const h of hooks)
          if (!h.endsWith(".sample") && !h.endsWith(SET_ASIDE_SUFFIX)) aside(path.join(p, h));
      } else if (name === "config" && st.isFile()) {
        let text = "";
        try {
          text = fs.readFileSync(p, "utf8");
        } catch {
          // unreadable counts as unsafe
        }
        if (!configIsPlain(text)) aside(p);
      } else aside(p);
    }
    return report(setAside);
  };
}

function report(setAside: readonly string[]): string | undefined {
  if (setAside.length === 0) return undefined;
  return `note: set aside what this command created where git would run it outside the sandbox (${setAside.join(", ")}; renamed with ${SET_ASIDE_SUFFIX}). Review it before you rename it back.`;
}
