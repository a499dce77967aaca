/**
 * Which places are catastrophic to delete, re-own or overwrite: `/` and the top-level system
 * directories, home directories, the project itself, and devices that are disks or memory.
 * The shell rules (shell-rules.ts) ask these questions of the targets shell-targets.ts reads
 * out of a command's arguments. See docs/safety.md "Policy modes" for the list in prose.
 */
import path from "node:path";

/** Targets quoted in reasons are clipped to this many characters. */
const MAX_REASON_TARGET = 60;

/** Top-level directories whose recursive removal (or chmod/chown) breaks the machine. */
export const SYSTEM_DIRS: ReadonlySet<string> = new Set([
  "bin",
  "boot",
  "dev",
  "etc",
  "home",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "media",
  "mnt",
  "opt",
  "proc",
  "root",
  "run",
  "sbin",
  "srv",
  "sys",
  "usr",
  "var",
  // macOS
  "applications",
  "library",
  "private",
  "system",
  "users",
  "volumes",
]);

/** Devices a command may write to: sinks, terminals and descriptors, never disks or memory. */
export const SAFE_DEVICES: ReadonlySet<string> = new Set([
  "/dev/null",
  "/dev/zero",
  "/dev/full",
  "/dev/random",
  "/dev/urandom",
  "/dev/stdin",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/tty",
]);
/** Device trees that are descriptors, pseudo-terminals, shared memory or bash's network paths. */
const SAFE_DEVICE_PREFIXES = ["/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/tcp/", "/dev/udp/"];
/** Non-/dev files whose write is itself catastrophic. */
const DANGEROUS_FILES: ReadonlySet<string> = new Set(["/proc/sysrq-trigger"]);

/**
 * How wide a tree counts as catastrophic. system: / and system directories; home: also home
 * directories; wide: also the project.
 */
export type Scope = "system" | "home" | "wide";

export function clipTarget(t: string): string {
  return t.length > MAX_REASON_TARGET ? `${t.slice(0, MAX_REASON_TARGET)}...` : t;
}

/** `<(...)` / `>(...)`: a pipe the shell makes, not a path on disk. */
export function isProcSub(text: string): boolean {
  return text.startsWith("<(") || text.startsWith(">(");
}

/**
 * Writes onto this path are catastrophic: a /dev entry that is not a harmless sink, or
 * /proc/sysrq-trigger. Returns the normalised path, or undefined.
 */
export function dangerousDevice(target: string): string | undefined {
  if (!target.startsWith("/")) return undefined;
  const norm = path.posix.normalize(target).replace(/\/+$/, "") || "/";
  if (DANGEROUS_FILES.has(norm)) return norm;
  if (!norm.startsWith("/dev/")) return undefined;
  if (SAFE_DEVICES.has(norm) || SAFE_DEVICE_PREFIXES.some((p) => norm.startsWith(p))) return undefined;
  return clipTarget(norm);
}

/** The first of these paths that is a dangerous device (normalised), or undefined. */
export function firstDangerousDevice(targets: readonly string[]): string | undefined {
  for (const t of targets) {
    const dev = dangerousDevice(t);
    if (dev) return dev;
  }
  return undefined;
}

/** Only glob characters (and dots): matches every entry of its directory. */
function isGlobAll(seg: string): boolean {
  const s = seg.replace(/\[[^\]]*\]/g, "?");
  return /^[*?.]+$/.test(s) && /[*?]/.test(s);
}

function hasGlob(seg: string): boolean {
  return /[*?[]/.test(seg);
}

/** `/`, `/*`, `/usr`, `/usr/*`, `/home/alice`, `/u*`: absolute targets that wipe a tree we need. */
function systemTree(abs: string): boolean {
  const norm = path.posix.normalize(abs);
  const segs = norm.split("/").filter((x) => x !== "");
  if (segs.length === 0) return true;
  const [a, b] = segs;
  if (segs.length === 1) return hasGlob(a!) || SYSTEM_DIRS.has(a!);
  if (segs.length === 2) {
    if (SYSTEM_DIRS.has(a!) && isGlobAll(b!)) return true;
    if (a === "home" || a === "users") return true;
  }
  return false;
}

/** Relative targets that are the project (or above it): `.`, `..`, `*`, `./*`, `../..`. */
function projectTree(rel: string): boolean {
  const norm = path.posix.normalize(rel).replace(/\/+$/, "");
  const segs = norm.split("/");
  const last = segs[segs.length - 1]!;
  const parents = isGlobAll(last) && last !== "." && last !== ".." ? segs.slice(0, -1) : segs;
  return parents.every((x) => x === "." || x === ".." || x === "");
}

const HOME_RE = /^(~[^/]*|\$home|\$\{home\})(\/.*)?$/;
const PWD_RE = /^(\$pwd|\$\{pwd\}|\$\(\s*pwd(?:\s+-[lp])?\s*\)|`\s*pwd(?:\s+-[lp])?\s*`)(\/.*)?$/;
/** Expansions that may come out empty: variables, and command substitutions (one nesting level). */
const VAR_RE = /\$\{[^}]*\}|\$[a-z_][a-z0-9_]*|\$[0-9@*#?$!-]|\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`/g;

/** The part of a home-relative target (`~`, `~/x`, `$HOME/*`) below the home directory, or undefined. */
function belowHome(target: string): string | undefined {
  const home = HOME_RE.exec(target);
  return home ? `.${home[2] ?? ""}` : undefined;
}

/** A path below a home directory that is the whole home (`.`, `..`, `*`). */
function isWholeHome(rest: string): boolean {
  const norm = path.posix.normalize(rest).replace(/\/+$/, "");
  const segs = norm.split("/");
  return norm === "." || norm.startsWith("..") || (segs.length === 1 && isGlobAll(segs[0]!));
}

/** Label of a target whose recursive removal is catastrophic at this scope, or undefined. */
export function wholeTreeTarget(target: string, scope: Scope): string | undefined {
  if (target === "" || isProcSub(target)) return undefined;
  const label = clipTarget(target);
  const home = scope === "system" ? undefined : belowHome(target);
  if (home !== undefined) return isWholeHome(home) ? label : undefined;
  if (scope === "wide") {
    const pwd = PWD_RE.exec(target);
    if (pwd && projectTree(`.${pwd[2] ?? ""}`)) return label;
  }
  if (target.startsWith("/") && systemTree(target)) return label;
  if (target.includes("$")) {
    // The empty-variable accident: `rm -rf "$BUILD"/` with BUILD unset removes /.
    const vanished = target.replace(VAR_RE, "");
    if (vanished.startsWith("/") && systemTree(vanished)) return `${label} (when its variables are empty)`;
    return undefined;
  }
  if (target.startsWith("/")) return undefined;
  if (scope === "wide" && projectTree(target)) return label;
  return undefined;
}

/** Label of the first target that is a whole tree at this scope, or undefined. */
export function firstWholeTree(targets: readonly string[], scope: Scope): string | undefined {
  for (const t of targets) {
    const label = wholeTreeTarget(t, scope);
    if (label) return label;
  }
  return undefined;
}
