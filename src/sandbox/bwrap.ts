/**
 * The bubblewrap command line for one sandboxed `bash` call (README "Shell containment",
 * issue 11): the whole filesystem read-only, the project writable, a private empty /tmp,
 * a minimal /dev, a /proc of its own PID namespace, the secret places hidden, no network
 * unless asked, no capabilities (root inside could otherwise unmount what hides a secret),
 * and the sandbox dies with Scoot.
 *
 * Pure: everything it needs comes in `SandboxLayout`, and it touches the filesystem only to
 * see which of the hidden places exist (a mount needs an existing mount point) and what they
 * resolve to (a mount covers the inode a symlink points at, so the real path is hidden).
 */
import fs from "node:fs";
import path from "node:path";

/**
 * Credential stores under the user's home that are hidden even though they are not
 * Scoot's: the places where CLIs keep keys and tokens (ssh, cloud, registries, git).
 */
export const CREDENTIAL_STORES: readonly string[] = [
  ".ssh",
  ".aws",
  ".azure",
  ".gnupg",
  ".netrc",
  ".docker",
  ".config/gcloud",
  ".config/gh",
  ".config/hub",
  ".kube",
  ".npmrc",
  ".yarnrc",
  ".pypirc",
  ".git-credentials",
  ".pgpass",
  ".vault-token",
  ".terraform.d",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".local/share/keyrings",
  ".password-store",
];

/** The sandbox's scratch directory: private and empty for every call. */
const PRIVATE_TMP = "/tmp";

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
  /** `tools.secret_paths`, already absolute. */
  secretPaths: readonly string[];
  /** `tools.sandbox_network`: share the host network namespace. */
  network: boolean;
}

interface Hidden {
  path: string;
  dir: boolean;
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The real location of an existing path, or undefined when nothing is there to hide. */
function existing(p: string): Hidden | undefined {
  try {
    const real = fs.realpathSync(p);
    return { path: real, dir: fs.statSync(real).isDirectory() };
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

/** Every place the sandbox hides, as real paths, deduplicated, parents before children. */
export function hiddenPlaces(layout: SandboxLayout): Hidden[] {
  const wanted = [
    layout.scootHome,
    layout.tokenFile,
    ...layout.secretPaths,
    ...CREDENTIAL_STORES.map((rel) => path.join(layout.userHome, rel)),
  ];
  const seen = new Map<string, Hidden>();
  for (const p of wanted) {
    const h = existing(p);
    if (h && !seen.has(h.path)) seen.set(h.path, h);
  }
  // The root itself cannot be hidden without hiding everything; a setting that names it is ignored.
  return [...seen.values()].filter((h) => h.path !== "/").sort((a, b) => a.path.length - b.path.length);
}

function hideArgs(h: Hidden): string[] {
  // A directory becomes an empty tmpfs; a file reads as empty (/dev/null bound over it).
  return h.dir ? ["--tmpfs", h.path] : ["--ro-bind", "/dev/null", h.path];
}

/**
 * bwrap options (everything before the command). Mount order matters: later mounts cover
 * earlier ones, so the private /tmp comes before the project (a project under /tmp stays
 * visible and writable), places outside the project are hidden before the project is bound
 * (a project inside a hidden directory stays usable), and secrets inside the project are
 * hidden after it.
 */
export function bwrapOptions(layout: SandboxLayout): string[] {
  const root = realOr(layout.projectRoot);
  const tmp = realOr(PRIVATE_TMP);
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", tmp];
  const hidden = hiddenPlaces(layout);
  const before: Hidden[] = [];
  const after: Hidden[] = [];
  for (const h of hidden) {
    // A hidden place that IS the project (Scoot run from its own home) is covered by the
    // project bind, or the project would vanish; the token file inside it stays hidden.
    if (h.path !== root && isInside(h.path, root)) after.push(h);
    // Under the private /tmp it is invisible already (and the mount point would not exist).
    else if (!isInside(h.path, tmp)) before.push(h);
  }
  for (const h of before) args.push(...hideArgs(h));
  args.push("--bind", root, root);
  for (const h of after) args.push(...hideArgs(h));
  args.push("--chdir", realOr(layout.cwd));
  args.push("--unshare-all");
  if (layout.network) args.push("--share-net");
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  return args;
}

/** The whole argv after the bwrap program: options, then `/bin/sh -c command`. */
export function bwrapArgv(layout: SandboxLayout, shell: string, command: string): string[] {
  return [...bwrapOptions(layout), "--", shell, "-c", command];
}
