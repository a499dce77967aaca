/**
 * Known-safe commands (docs/safety.md "Known-safe commands"): the plain shell commands that only
 * read the project and print, which run without a question in guarded mode where a person would
 * otherwise be asked (`tools.approval_safe_commands`, default true). The call is still shown and
 * recorded; the decision is agent/decide.ts's, this module only says whether a command is one.
 *
 * A command is known-safe when all of these hold:
 *
 * - It is plain (tools/command-scope.ts plainWords): one program, plain arguments, no `;`, `&&`,
 *   `|`, redirection, substitution, quote, glob, variable or leading `VAR=value`.
 * - Its program is one of PROGRAMS, named bare (`ls`, not `/bin/ls` or `./ls`, which could be
 *   another file), and none of its words is an option the table names for it: an option that runs
 *   a command (`rg --pre`, `find -exec`), writes or deletes (`find -delete`, `git diff --output`),
 *   reads a list of other files (`wc --files0-from`) or follows symbolic links out of the project
 *   (`grep -R`, `rg -L`, `find -L`), or makes rg read the hidden and ignored files it leaves alone
 *   (`rg --hidden`, `-u`). Short options count anywhere in a cluster (`-nR`); long ones with or
 *   without `=value`, and any beginning of them (GNU tools take `--dereference-r`).
 * - git only as `git status`, `git log`, `git diff`, `git show` without a stretching option (the
 *   table of policy/command-options.ts: `--output`, `--ext-diff`, `-c`, …) and `git branch` that
 *   lists (`-a`, `-r`, `-v`, `--list PATTERN`, …); no option before the subcommand (`git -c x log`).
 * - Every word that names something (an operand, an option's `=value`, each part of `a:b` or
 *   `a,b`) stays in the project and is no secret: no absolute path, no `..` step, no secret-like
 *   name (policy/paths.ts secretLikeName: `.env`, `id_rsa`, `token.txt`), and, where it exists, no
 *   symbolic link leading out of the project or to such a name.
 *
 * `echo` is not on the list: it reads nothing, so running it unasked would save no question worth
 * having, and the one use that does something (`echo … > file`) is not plain.
 */
import fs from "node:fs";
import path from "node:path";
import { isInside } from "../core/inside.js";
import { findStretch } from "../policy/command-options.js";
import { secretLikeName } from "../policy/paths.js";
import { plainWords } from "./command-scope.js";

/** The words that make a read-only program do more than read the project and print. */
interface Unsafe {
  /** Short option letters (anywhere in a cluster: `-nR` holds `-R`; case matters). */
  short?: string;
  /**
   * Long options, lower-cased: the option, with or without `=value`, any longer one it begins
   * (`--no-ignore-vcs`), or any beginning of it (`--dereference-r`).
   */
  long?: readonly string[];
  /** Options spelled with one dash (find's `-exec`), compared whole. */
  named?: readonly string[];
}

/** The read-only programs, each with what takes a command of it off the list. */
export const PROGRAMS: Readonly<Record<string, Unsafe>> = {
  ls: {},
  cat: {},
  head: {},
  tail: {},
  pwd: {},
  wc: { long: ["--files0-from"] },
  grep: { short: "R", long: ["--dereference-recursive"] },
  rg: {
    // `-u` and `-.` read hidden and ignored files (a `.env`), which rg leaves alone by default
    short: "zLu.",
    long: [
      "--pre",
      "--pre-glob",
      "--hostname-bin",
      "--search-zip",
      "--follow",
      "--hidden",
      "--unrestricted",
      "--no-ignore",
    ],
  },
  find: {
    named: [
      "-exec",
      "-execdir",
      "-ok",
      "-okdir",
      "-delete",
      "-fls",
      "-fprint",
      "-fprint0",
      "-fprintf",
      "-L",
      "-follow",
      "-files0-from",
    ],
  },
};

/** The git subcommands that only read, when no stretching option is among their words. */
export const GIT_READS: ReadonlySet<string> = new Set(["status", "log", "diff", "show"]);

/** `git branch` options that list (and choose how), never create, rename, copy or delete. */
const BRANCH_LISTS: ReadonlySet<string> = new Set([
  "--all",
  "--remotes",
  "--verbose",
  "--list",
  "--show-current",
  "--color",
  "--no-color",
  "--column",
  "--no-column",
  "--ignore-case",
  "--omit-empty",
  "--no-abbrev",
]);
/** `git branch` listing options with their value attached. */
const BRANCH_LISTS_VALUE: readonly string[] = [
  "--sort=",
  "--format=",
  "--contains=",
  "--no-contains=",
  "--merged=",
  "--no-merged=",
  "--points-at=",
  "--abbrev=",
  "--color=",
  "--column=",
];
/** Short `git branch` options that list: `-a`, `-r`, `-v` (`-vv`), `-l`, `-i`, in any cluster. */
const BRANCH_LISTS_SHORT = /^-[arvli]+$/;

/** Whether `git branch <args>` only lists branches: each word a listing option, a name only after `--list`. */
function branchLists(args: readonly string[]): boolean {
  const listing = args.includes("--list");
  return args.every(
    (w) =>
      BRANCH_LISTS.has(w) ||
      BRANCH_LISTS_VALUE.some((p) => w.startsWith(p)) ||
      BRANCH_LISTS_SHORT.test(w) ||
      (listing && !w.startsWith("-")),
  );
}

function gitReads(args: readonly string[]): boolean {
  const [sub, ...rest] = args;
  if (sub === undefined) return false;
  if (GIT_READS.has(sub)) return findStretch("git", rest) === undefined;
  return sub === "branch" && branchLists(rest);
}

/** Whether one word is an option `unsafe` names for its program. */
function unsafeOption(word: string, unsafe: Unsafe): boolean {
  if (!word.startsWith("-") || word === "-" || word === "--") return false;
  if (unsafe.named) return unsafe.named.includes(`-${word.replace(/^-+/, "").split("=")[0]!}`);
  if (word.startsWith("--")) {
    const name = word.split("=")[0]!.toLowerCase();
    return (unsafe.long ?? []).some(
      (full) => name.startsWith(full) || (full.startsWith(name) && name.length > 2),
    );
  }
  return [...word.slice(1)].some((ch) => unsafe.short?.includes(ch) ?? false);
}

/** The parts of a command's words that may name a file: operands, `=value`s, each side of `:` and `,`. */
function namedParts(args: readonly string[]): string[] | undefined {
  const parts: string[] = [];
  for (const word of args) {
    let named = word;
    if (word.startsWith("-")) {
      const eq = word.indexOf("=");
      // A short option with a path attached (`-f/etc/x`) is not worth reading apart.
      if (eq === -1) {
        if (!word.startsWith("--") && word.includes("/")) return undefined;
        continue;
      }
      named = word.slice(eq + 1);
    }
    parts.push(...named.split(/[=:,]/).filter((p) => p !== ""));
  }
  return parts;
}

/** A part that names something outside the project or a secret, judged by its words alone. */
function leavesByWords(part: string): boolean {
  return part.startsWith("/") || part.split("/").includes("..") || secretLikeName(part) !== undefined;
}

/**
 * The words of a known-safe command, judged by the words alone (no file is looked at); undefined
 * when the command is not one. `knownSafeCommand` adds where its names lead.
 */
function safeWords(command: string): string[] | undefined {
  const words = plainWords(command);
  if (!words) return undefined;
  const [program, ...args] = words;
  if (program === "git") {
    if (!gitReads(args)) return undefined;
  } else {
    const unsafe = Object.hasOwn(PROGRAMS, program!) ? PROGRAMS[program!] : undefined;
    if (!unsafe || args.some((w) => unsafeOption(w, unsafe))) return undefined;
  }
  const parts = namedParts(args);
  if (!parts || parts.some(leavesByWords)) return undefined;
  return parts;
}

/** Whether a command is known-safe by its words alone (see the module comment). */
export function knownSafeWords(command: string): boolean {
  return safeWords(command) !== undefined;
}

/** Whether a part that exists below `root` leads, through a symbolic link, out of it or to a secret. */
function leadsAway(part: string, root: string): boolean {
  let real: string;
  try {
    real = fs.realpathSync(path.resolve(root, part));
  } catch {
    // Nothing there (a pattern, a ref, an option's value): nothing to follow.
    return false;
  }
  return !isInside(real, root) || secretLikeName(path.relative(root, real)) !== undefined;
}

/**
 * Whether a command is known-safe in the project at `root` (the directory bash runs in): by its
 * words, and no name in it leads through a link out of the project or to a secret.
 */
export function knownSafeCommand(command: string, root: string): boolean {
  const parts = safeWords(command);
  if (!parts) return false;
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    return false;
  }
  return !parts.some((p) => leadsAway(p, realRoot));
}
