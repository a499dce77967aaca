/**
 * The targets of a command: which paths it deletes, overwrites, moves or re-owns, read out of
 * its (lower-cased, unwrapped) arguments the way the program itself would read them. Whether
 * a target is catastrophic is shell-places.ts's question; the rules in shell-rules.ts put
 * the two together.
 */
import { baseName } from "./shell-wrappers.js";

/** Refused outright in any abbreviation GNU rm accepts. */
export const NO_PRESERVE_ROOT = "--no-preserve-root";

/** What rm's arguments ask for. */
export interface RemoveArgs {
  recursive: boolean;
  targets: string[];
  /** `--no-preserve-root` in an abbreviation (rm only). */
  noPreserveRoot: boolean;
}

/** rm's options and operands; `isRm` false reads a command we cannot name (`$X -r /`). */
export function removeArguments(args: string[], isRm: boolean): RemoveArgs {
  const out: RemoveArgs = { recursive: false, targets: [], noPreserveRoot: false };
  let endOfOptions = false;
  for (const a of args) {
    if (!endOfOptions && a === "--") {
      endOfOptions = true;
      continue;
    }
    if (!endOfOptions && a.startsWith("--")) {
      // GNU rm accepts unambiguous abbreviations: --r, --rec ... mean --recursive; --n... --no-preserve-root.
      if (isRm && a.length >= 3 && "--recursive".startsWith(a)) out.recursive = true;
      if (isRm && a.length >= 3 && NO_PRESERVE_ROOT.startsWith(a)) out.noPreserveRoot = true;
      continue;
    }
    if (!endOfOptions && a.startsWith("-") && a.length > 1) {
      if (a.includes("r")) out.recursive = true; // -r, -R (lower-cased), -rf, -fR, -vr ...
      continue;
    }
    out.targets.push(a);
  }
  return out;
}

/** find expression words that do not narrow what is matched. */
const FIND_NON_FILTERS: ReadonlySet<string> = new Set([
  "-delete",
  "-depth",
  "-mindepth",
  "-maxdepth",
  "-xdev",
  "-mount",
  "-noleaf",
  "-follow",
  "-ignore_readdir_race",
  "-daystart",
  "-print",
  "-print0",
  "-true",
]);
const FIND_EXECS: ReadonlySet<string> = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** What a find command walks and does. */
export interface FindPlan {
  /** Starting points (none given means `.`). */
  starts: string[];
  /** How it deletes (`-delete`, `-exec rm`), or undefined. */
  deletes: string | undefined;
  /** A test narrows what is matched (`-name '*.o'`). */
  filtered: boolean;
  /** Command lines of `-exec` / `-ok` actions, as argv. */
  execs: string[][];
}

/** Index of the first starting point, after find's leading options (-H -L -P -O2 -D opts). */
function findStartIndex(args: string[]): number {
  let k = 0;
  while (args[k] === "-h" || args[k] === "-l" || args[k] === "-p" || /^-o\d$/.test(args[k] ?? "")) k++;
  if (args[k] === "-d") k += 2;
  return k;
}

export function findPlan(args: string[]): FindPlan {
  let k = findStartIndex(args);
  const starts: string[] = [];
  while (k < args.length && !/^[-(!,]/.test(args[k]!)) starts.push(args[k++]!);
  const plan: FindPlan = {
    starts,
    deletes: args.includes("-delete") ? "-delete" : undefined,
    filtered: false,
    execs: [],
  };
  for (let i = k; i < args.length; i++) {
    const a = args[i]!;
    if (FIND_EXECS.has(a)) {
      const body: string[] = [];
      let j = i + 1;
      while (j < args.length && args[j] !== ";" && args[j] !== "+") body.push(args[j++]!);
      const execCmd = baseName(body[0] ?? "");
      if (execCmd === "rm" || execCmd === "shred") plan.deletes = `${a} ${execCmd}`;
      plan.execs.push(body);
      i = j;
      continue;
    }
    if (a.startsWith("-") && !FIND_NON_FILTERS.has(a)) plan.filtered = true;
    if (a === "-mindepth" || a === "-maxdepth") i++;
  }
  return plan;
}

/** dd's output files (`of=`). */
export function ddOutputs(args: string[]): string[] {
  return args.filter((a) => a.startsWith("of=")).map((a) => a.slice(3));
}

/** Files tee and shred write (every operand) and cp writes (the last operand). */
export function writtenFiles(cmd: string, args: string[]): string[] {
  const operands = args.filter((a) => !a.startsWith("-"));
  return cmd === "cp" ? operands.slice(-1) : operands;
}

/** Operands of a command whose listed options take the next word as their argument. */
export function operands(args: string[], argShort: string, argLong: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      out.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      if (argLong.includes(a)) i++;
      continue;
    }
    if (a.startsWith("-") && a.length > 1) {
      if (argShort.includes(a[a.length - 1]!) && a.length === 2) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

/** Files truncate resizes. */
export function truncatedFiles(args: string[]): string[] {
  return operands(args, "sr", ["--size", "--reference"]);
}

const RSYNC_ARG_OPTS: readonly string[] = [
  "--rsh",
  "--exclude",
  "--include",
  "--filter",
  "--files-from",
  "--exclude-from",
  "--include-from",
  "--temp-dir",
  "--partial-dir",
  "--backup-dir",
  "--suffix",
  "--chmod",
  "--chown",
  "--log-file",
  "--log-file-format",
  "--password-file",
  "--timeout",
  "--contimeout",
  "--bwlimit",
  "--max-size",
  "--min-size",
  "--max-delete",
  "--block-size",
  "--compare-dest",
  "--copy-dest",
  "--link-dest",
  "--remote-option",
  "--rsync-path",
  "--out-format",
  "--port",
  "--sockopts",
  "--iconv",
  "--usermap",
  "--groupmap",
  "--info",
  "--debug",
];

/** The destination rsync deletes in (`--delete*` and a source given), or undefined. */
export function rsyncDeletedDestination(args: string[]): string | undefined {
  const deletes = args.some((a) => a === "--del" || a.startsWith("--delete"));
  if (!deletes) return undefined;
  const ops = operands(args, "ef", RSYNC_ARG_OPTS);
  return ops.length < 2 ? undefined : ops[ops.length - 1];
}

/** The paths mv moves away (all operands with `-t DIR`, else all but the last). */
export function movedSources(args: string[]): string[] {
  let target: string | undefined;
  const ops: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      ops.push(...args.slice(i + 1));
      break;
    }
    if (a === "-t" || a === "--target-directory") target = args[++i];
    else if (a.startsWith("--target-directory=")) target = a.slice("--target-directory=".length);
    else if (a === "-s" || a === "--suffix") i++;
    else if (a.startsWith("-") && a.length > 1) {
      if (/^-[a-z]*t.+$/.test(a) && !a.startsWith("--")) target = a.slice(a.indexOf("t") + 1);
    } else ops.push(a);
  }
  return target !== undefined ? ops : ops.slice(0, -1);
}

/** chmod/chown/chgrp: recursion and the operands (the mode or owner word among them). */
export function ownershipArguments(args: string[]): { recursive: boolean; operands: string[] } {
  let recursive = false;
  const ops: string[] = [];
  for (const a of args) {
    if (a.startsWith("--")) {
      if (a.length >= 5 && "--recursive".startsWith(a)) recursive = true;
    } else if (a.startsWith("-") && a.length > 1) {
      // `-R` lower-cases to `-r`, which chmod would read as "remove read": assume recursive.
      if (a.includes("r")) recursive = true;
    } else ops.push(a);
  }
  return { recursive, operands: ops };
}
