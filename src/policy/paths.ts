/**
 * Read-path and write-path rules (docs/safety.md "Policy modes", "Paths are judged where they are opened").
 *
 * Pure decisions: the only filesystem knowledge comes from `settings.realpath`. Each path is
 * resolved once: normalised lexically against the project root (`~` and `~/x`: the home
 * directory; `$VAR` is not expanded, a literal name), then every symlink followed
 * (realpath.ts). That resolved path is both what is judged and, on allow, the target the
 * file tool opens (test/agent/equivalence.test.ts).
 *
 * Read rules
 * - unrestricted: everything.
 * - guarded: secret-like names, `tools.secret_paths` and the token file are refused (also
 *   when reached through a symlink or `~`); ordinary absolute and `~` reads are allowed.
 * - readonly: additionally refuses absolute paths, `~` and `$VAR` forms, `..` escapes, and
 *   paths whose symlinks lead outside the project root (a link out of the tree is an
 *   escape too).
 *
 * Write rules (readonly writes are denied by capability before these run)
 * - guarded + confine_writes: refuse empty, NUL, absolute, `~`, `$VAR`, `..` escapes, and any
 *   path whose nearest existing ancestor resolves outside the (resolved) project root.
 * - guarded, always: secret-like names and secret paths.
 * - unrestricted: everything.
 *
 * Stated expectations for tricky spellings (see the tests):
 * - Percent-encoding is not decoded by the filesystem: `%2e%2e/x` and `%2eenv` are literal
 *   names inside the project and are allowed.
 * - A backslash is an ordinary filename character on the platforms Scoot runs on, so
 *   `..\\x` is a literal name, not an escape; secret-name matching still splits on `\`.
 * - Secret-name matching is case-insensitive, NFKC-normalised (fullwidth `.ｅｎｖ` counts as
 *   `.env`) and ignores trailing dots and spaces (`.env.`, `.ssh `), because some filesystems
 *   fold exactly those differences. Zero-width characters are not removed: `.e\u200bnv` is a
 *   different file, not the secret.
 */
import os from "node:os";
import path from "node:path";
import { isInside, isInsideResolved } from "../core/inside.js";
import type { Decision } from "../core/types.js";
import { foldSegment } from "./fold.js";
import { persistenceRefusal } from "./persistence-places.js";
import { resolvePlaces } from "./realpath.js";
import type { GateSettings } from "./types.js";

/** Path segments that are secrets themselves or directories full of them (compared lower-case). */
export const SECRET_NAMES: ReadonlySet<string> = new Set([
  ".ssh",
  ".gnupg",
  ".netrc",
  "_netrc",
  ".aws",
  ".azure",
  ".npmrc",
  ".pypirc",
  ".pgpass",
  ".my.cnf",
  ".git-credentials",
  ".htpasswd",
  ".vault-token",
  ".boto",
  ".s3cfg",
  "shadow",
  "gshadow",
  "authorized_keys",
]);

/** Segments that start with one of these: `.env*` (`.env.local`, `.envrc`) and SSH private keys. */
export const SECRET_PREFIXES: readonly string[] = [".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];

/**
 * Words that make a name secret wherever they stand inside one segment: the segment is split
 * into words on `-`, `_`, `.` and spaces (case-insensitively), so `demo-token`,
 * `api_token.txt`, `prod-secrets.yaml` and `db.password` are secrets, while `tokenizer.ts`
 * and `secretariat.md` are not (whole words only). docs/safety.md "Policy modes".
 */
export const SECRET_WORDS: ReadonlySet<string> = new Set([
  "token",
  "tokens",
  "secret",
  "secrets",
  "credential",
  "credentials",
  "creds",
  "password",
  "passwords",
  "passwd",
  "privkey",
  "privatekey",
  "apikey",
  "apikeys",
]);
/** Two-word spellings of the same (`private_key.pem`, `api-key.txt`). */
export const SECRET_WORD_PAIRS: readonly (readonly [string, string])[] = [
  ["private", "key"],
  ["api", "key"],
];

/**
 * A file named after a secret word but written in a programming language is code about the
 * secret, not the secret (`token.ts`, `password_hash.py`): the word rule skips names whose
 * last extension is one of these. Data and config names (`.txt`, `.json`, `.yaml`, no
 * extension) stay covered. docs/safety.md "Policy modes".
 */
export const SOURCE_CODE_EXTENSIONS: ReadonlySet<string> = new Set([
  "ts",
  "tsx",
  "mts",
  "cts",
  "js",
  "jsx",
  "mjs",
  "cjs",
  "py",
  "rb",
  "go",
  "rs",
  "java",
  "kt",
  "scala",
  "swift",
  "c",
  "h",
  "cc",
  "cpp",
  "hpp",
  "cs",
  "php",
  "lua",
  "zig",
]);

/** Private-key and keystore file extensions. */
export const SECRET_EXTENSIONS: readonly string[] = [
  ".key",
  ".p12",
  ".pfx",
  ".jks",
  ".keystore",
  ".ppk",
  ".kdbx",
];

/** Consecutive segments that name a credential store inside an otherwise ordinary directory. */
export const SECRET_SEQUENCES: readonly (readonly string[])[] = [
  [".docker", "config.json"],
  [".kube", "config"],
  [".config", "gcloud"],
  [".config", "gh", "hosts.yml"],
];

function secretWords(seg: string): boolean {
  const words = seg.split(/[-_. ]+/).filter((w) => w !== "");
  const last = seg.includes(".") ? seg.slice(seg.lastIndexOf(".") + 1) : "";
  if (SOURCE_CODE_EXTENSIONS.has(last)) return false;
  for (let i = 0; i < words.length; i++) {
    if (SECRET_WORDS.has(words[i]!)) return true;
    if (SECRET_WORD_PAIRS.some(([a, b]) => words[i] === a && words[i + 1] === b)) return true;
  }
  return false;
}

function secretSegment(seg: string): boolean {
  if (SECRET_NAMES.has(seg)) return true;
  if (SECRET_PREFIXES.some((p) => seg.startsWith(p))) return true;
  if (secretWords(seg)) return true;
  if (/(^|[._-])(privkey|private[._-]?key)([._-]|$)/.test(seg)) return true;
  return SECRET_EXTENSIONS.some((ext) => seg.endsWith(ext) && seg.length > ext.length);
}

/**
 * The secret-like part of a path (as written), or undefined. Every segment is checked, so
 * `sub/../.env` and `.ssh/../x` count: a path that names a secret is refused even if it
 * would resolve elsewhere.
 */
export function secretLikeName(p: string): string | undefined {
  const segs = p
    .split(/[/\\]+/)
    .filter((s) => s !== "")
    .map(foldSegment);
  for (let i = 0; i < segs.length; i++) {
    if (secretSegment(segs[i]!)) return segs[i];
    for (const seq of SECRET_SEQUENCES) {
      if (seq.every((s, j) => segs[i + j] === s)) return seq.join("/");
    }
  }
  return undefined;
}

export function isTildePath(p: string): boolean {
  return p.startsWith("~");
}

/** `$HOME/x`, `${HOME}`, `$(cmd)`: shell syntax Scoot's tools would take literally. */
export function hasVariable(p: string): boolean {
  return /\$[{(A-Za-z_]/.test(p);
}

/** `..` steps that climb above the starting directory (`a/../../x`), judged lexically. */
export function escapesLexically(p: string): boolean {
  let depth = 0;
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    depth += seg === ".." ? -1 : 1;
    if (depth < 0) return true;
  }
  return false;
}

/** Where a path points: lexically (for matching) and physically (symlinks followed). */
interface Located {
  /** Normalised against the project root (or home for `~`), no symlink followed. */
  lexical: string;
  /** `lexical` with every symlink followed: the file the tool will open. */
  physical: string | undefined;
  realRoot: string | undefined;
}

function locate(p: string, settings: GateSettings): Located {
  const root = path.resolve(settings.projectRoot);
  let lexical: string;
  if (p === "~" || p.startsWith("~/")) lexical = path.resolve(os.homedir(), p.slice(2));
  else lexical = path.resolve(root, p);
  // One resolution, lexical first: the same string the tool is then handed.
  return { lexical, physical: settings.realpath(lexical), realRoot: settings.realpath(root) };
}

/** The secret a located path is, or is reached through; undefined when none. */
function secretReason(
  p: string,
  loc: Located,
  settings: GateSettings,
  skillRead = false,
): string | undefined {
  const named = secretLikeName(p);
  if (named) return `${named} is a secret-like name`;
  if (loc.physical !== undefined && loc.physical !== loc.lexical) {
    // Judge where a symlink leads, without the project root's own segments.
    const rel =
      loc.realRoot !== undefined && isInside(loc.physical, loc.realRoot)
        ? path.relative(loc.realRoot, loc.physical)
        : loc.physical;
    const viaLink = secretLikeName(rel);
    if (viaLink) return `path leads to ${viaLink}, a secret-like name`;
  }
  if (insideAny(loc, settings.secretPaths, settings)) {
    return "path is a configured secret (tools.secret_paths, the token file, or a file a credential variable such as KUBECONFIG names)";
  }
  if (!skillRead && insideAny(loc, settings.protectedPaths, settings)) {
    return "path is Scoot's own (its home, token, audit key or the file api_key_cmd reads) or a credential store";
  }
  return undefined;
}

/** Whether the located path is one of `places` or inside one, by its written or real location. */
function insideAny(loc: Located, places: readonly string[], settings: GateSettings): boolean {
  // Folded once here, not once per place: a decision checks dozens of places.
  const cands =
    loc.physical === undefined
      ? [loc.lexical.toLowerCase()]
      : [loc.lexical.toLowerCase(), loc.physical.toLowerCase()];
  const resolved = settings.places
    ? settings.places.of(places, settings.realpath)
    : resolvePlaces(places, settings.realpath);
  for (const { absFolded, realFolded } of resolved) {
    for (const cand of cands) {
      if (
        isInsideResolved(cand, absFolded) ||
        (realFolded !== undefined && isInsideResolved(cand, realFolded))
      )
        return true;
    }
  }
  return false;
}

/** A read inside a loaded skill's folder (shown to the model so it can use the skill's files). */
function insideLoadedSkill(loc: Located, settings: GateSettings): boolean {
  if (loc.physical === undefined) return false;
  return settings.readableInside.some((dir) => isInside(loc.physical!, dir));
}

/** A path decision; when it allows, `target` is the resolved file the tool must open. */
export type PathVerdict = { allow: true; target: string } | { allow: false; reason: string };

function denied(reason: string): { allow: false; reason: string } {
  return { allow: false, reason };
}

/** The decision alone, for callers that only ask "allowed?" (tests, diagnostics). */
function decisionOf(v: PathVerdict): Decision {
  return v.allow ? { allow: true } : v;
}

/** Read-path rule for one path a read tool touches. */
export function checkReadPath(p: string, settings: GateSettings): Decision {
  return decisionOf(judgeReadPath(p, settings));
}

/** Write-path rule for one path a write tool touches. */
export function checkWritePath(p: string, settings: GateSettings): Decision {
  return decisionOf(judgeWritePath(p, settings));
}

/** Read-path rule for one path, with the file it resolves to. */
export function judgeReadPath(p: string, settings: GateSettings): PathVerdict {
  if (p === "") return denied("read: empty path");
  if (p.includes("\0")) return denied("read: path contains a NUL byte");
  if (settings.mode === "unrestricted") {
    const loc = locate(p, settings);
    return { allow: true, target: loc.physical ?? loc.lexical };
  }
  if (p === "") return denied("read: empty path");
  if (p.includes("\0")) return denied("read: path contains a NUL byte");
  if (settings.mode === "readonly") {
    if (isTildePath(p))
      return denied("read: ~ paths are refused in readonly mode; use a path inside the project");
    if (hasVariable(p))
      return denied("read: $VAR paths are refused in readonly mode; use a path inside the project");
    if (path.isAbsolute(p)) {
      return denied("read: absolute paths are refused in readonly mode; use a path inside the project");
    }
    if (escapesLexically(p))
      return denied("read: path escapes the project root (.. is refused in readonly mode)");
  }
  const loc = locate(p, settings);
  if (settings.mode === "readonly") {
    if (loc.realRoot === undefined || loc.physical === undefined) {
      return denied("read: path cannot be resolved inside the project (readonly mode)");
    }
    if (!isInside(loc.physical, loc.realRoot)) {
      return denied("read: path leads outside the project root through a symlink (readonly mode)");
    }
  }
  if (loc.physical === undefined) {
    return denied("read: path cannot be resolved (symlink loop or unreadable directory)");
  }
  const secret = secretReason(p, loc, settings, insideLoadedSkill(loc, settings));
  if (secret) return denied(`read: ${secret}; Scoot does not read secrets`);
  return { allow: true, target: loc.physical };
}

/**
 * Write-path rule for one path, with the file it resolves to: the real parent directory plus
 * the final name (a symlink at the final component followed, so the link stays a link and
 * its target is what was judged).
 */
export function judgeWritePath(p: string, settings: GateSettings): PathVerdict {
  if (settings.mode === "readonly") return denied("readonly mode denies writes; run with --policy guarded");
  if (p === "") return denied("write: empty path");
  if (p.includes("\0")) return denied("write: path contains a NUL byte");
  if (settings.mode === "unrestricted") {
    const loc = locate(p, settings);
    return { allow: true, target: loc.physical ?? loc.lexical };
  }
  if (settings.confineWrites) {
    if (p === "") return denied("write: empty path");
    if (p.includes("\0")) return denied("write: path contains a NUL byte");
    if (path.isAbsolute(p))
      return denied("write: absolute paths are refused (tools.confine_writes); use a relative path");
    if (isTildePath(p))
      return denied("write: ~ paths are refused (tools.confine_writes); use a relative path");
    if (hasVariable(p))
      return denied("write: $VAR paths are refused (tools.confine_writes); use a relative path");
    if (escapesLexically(p))
      return denied("write: path escapes the project root with .. (tools.confine_writes)");
  }
  const loc = locate(p, settings);
  if (settings.confineWrites) {
    if (loc.realRoot === undefined) return denied("write: the project root cannot be resolved");
    if (loc.physical === undefined) {
      return denied("write: path cannot be resolved (symlink loop or unreadable directory)");
    }
    if (!isInside(loc.physical, loc.realRoot)) {
      return denied("write: path resolves outside the project root through a symlink (tools.confine_writes)");
    }
  }
  if (loc.physical === undefined) {
    return denied("write: path cannot be resolved (symlink loop or unreadable directory)");
  }
  const secret = secretReason(p, loc, settings);
  if (secret) return denied(`write: ${secret}; Scoot does not write secrets`);
  const persistence = persistenceRefusal([loc.lexical, loc.physical]);
  if (persistence) return denied(persistence);
  return { allow: true, target: loc.physical };
}
