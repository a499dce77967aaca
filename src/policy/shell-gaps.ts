/**
 * Tripwire rules added by issue 11 (README "Shell rules"): disk discards, partition-table
 * writers, truncate onto devices, `kill -1`, downloaded code run by an interpreter,
 * `rsync --delete` onto a system tree and `mv` of a top-level system directory. Each rule
 * reads the already resolved (lower-cased, unwrapped) command name and arguments, and
 * returns what it found, or undefined; shell.ts words the denial. Read-only uses of the same
 * tools (`fdisk -l`, `parted /dev/sda print`, `kill -1 1234`, `truncate -s0 build.log`)
 * stay allowed.
 */
import { dangerousDevice, wholeTreeTarget } from "./shell.js";

/** Commands with no ordinary use in an agent's work: they destroy a disk's contents. */
const DISK_DESTROYERS: ReadonlySet<string> = new Set(["blkdiscard"]);

const FDISK_READ_ONLY = new Set(["-l", "--list", "-x", "--list-details", "-h", "--help", "-v", "--version"]);
/** sfdisk actions that only print (`-J` lower-cases to `-j`; `-V` verify to `-v`). */
const SFDISK_READ_ONLY = new Set([
  "-l",
  "--list",
  "-d",
  "--dump",
  "-j",
  "--json",
  "-s",
  "--show-size",
  "-g",
  "--show-geometry",
  "--list-free",
  "-v",
  "--verify",
  "--version",
  "-h",
  "--help",
]);
const PARTED_READ_ONLY_OPTS = new Set(["-l", "--list", "-v", "--version", "-h", "--help"]);
const PARTED_ARG_OPTS = new Set(["-a", "--align"]);
/** parted commands that change the disk. */
const PARTED_WRITES = new Set([
  "mklabel",
  "mktable",
  "mkpart",
  "mkpartfs",
  "mkfs",
  "rm",
  "resize",
  "resizepart",
  "rescue",
  "name",
  "set",
  "toggle",
  "disk_set",
  "disk_toggle",
  "move",
  "cp",
  "type",
]);

/** Interpreters that run a program read from stdin when given none; flags that give it inline. */
interface InterpreterSpec {
  inline: readonly string[];
  argOpts: readonly string[];
}
const PYTHON: InterpreterSpec = { inline: ["-c", "-m"], argOpts: ["-w", "-x"] };
const INTERPRETERS: Readonly<Record<string, InterpreterSpec>> = {
  perl: { inline: ["-e"], argOpts: [] },
  node: { inline: ["-e", "--eval", "-p", "--print"], argOpts: ["-r", "--require", "--import", "--loader"] },
  nodejs: { inline: ["-e", "--eval", "-p", "--print"], argOpts: ["-r", "--require", "--import", "--loader"] },
  ruby: { inline: ["-e"], argOpts: ["-r", "-i", "-c"] },
  php: { inline: ["-r", "-f"], argOpts: ["-c", "-d"] },
};

export function interpreterSpec(cmd: string): InterpreterSpec | undefined {
  if (/^(python|pypy)[0-9.]*$/.test(cmd)) return PYTHON;
  return Object.hasOwn(INTERPRETERS, cmd) ? INTERPRETERS[cmd] : undefined;
}

/** True when the interpreter would take its program from stdin (no script, no inline code, or `-`). */
function readsProgramFromStdin(args: string[], spec: InterpreterSpec): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-") return true;
    if (a === "--") return args[i + 1] === undefined || args[i + 1] === "-";
    if (a.startsWith("--")) {
      if (spec.inline.some((o) => a === o || a.startsWith(`${o}=`))) return false;
      if (spec.argOpts.includes(a)) i++;
      continue;
    }
    if (a.startsWith("-") && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const flag = `-${a[j]}`;
        if (spec.inline.includes(flag)) return false;
        if (spec.argOpts.includes(flag)) {
          if (j === a.length - 1) i++;
          break;
        }
      }
      continue;
    }
    return false; // a script path
  }
  return true;
}

/** Operands of a command whose listed options take the next word as their argument. */
function operands(args: string[], argShort: string, argLong: readonly string[]): string[] {
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

function isShortCluster(a: string): boolean {
  return /^-[a-z]+$/.test(a);
}

function partitionRule(cmd: string, args: string[]): string | undefined {
  if (cmd === "fdisk" || cmd === "cfdisk" || cmd === "gdisk" || cmd === "sgdisk") {
    if (cmd === "fdisk" && args.some((a) => FDISK_READ_ONLY.has(a))) return undefined;
    if (cmd === "sgdisk" && args.some((a) => a === "-p" || a === "--print")) return undefined;
    return `${cmd} (partition table editing)`;
  }
  if (cmd === "sfdisk") {
    const readOnly = args.some(
      (a) => SFDISK_READ_ONLY.has(a) || (isShortCluster(a) && /[ldjsg]/.test(a.slice(1)) && !/[afn]/.test(a)),
    );
    return readOnly ? undefined : "sfdisk (partition table writing)";
  }
  if (cmd === "parted") {
    if (args.some((a) => PARTED_READ_ONLY_OPTS.has(a))) return undefined;
    const words = operands(args, "a", [...PARTED_ARG_OPTS]);
    const commands = words.slice(1);
    if (commands.length === 0) return "parted without commands (an interactive partition editor)";
    const write = commands.find((c) => PARTED_WRITES.has(c));
    return write ? `parted ${write} (partition table writing)` : undefined;
  }
  return undefined;
}

function truncateRule(args: string[]): string | undefined {
  for (const t of operands(args, "sr", ["--size", "--reference"])) {
    const dev = dangerousDevice(t);
    if (dev) return `truncate onto ${dev}`;
  }
  return undefined;
}

/** `kill -1` / `kill -9 -1`: pid -1 signals every process the caller may signal. */
function killRule(args: string[]): string | undefined {
  const first = args[0];
  if (first === undefined || first === "-l" || first === "--list" || first === "--table") return undefined;
  let k = 0;
  if (first === "-s" || first === "-n" || first === "--signal") k = 2;
  else if (first.startsWith("--signal=")) k = 1;
  // `-SIG` is a signal only when a pid follows it: alone, `kill -1` names pid -1.
  else if (first !== "--" && /^-[a-z0-9+]+$/.test(first) && args.length > 1) k = 1;
  let pids = args.slice(k);
  if (pids[0] === "--") pids = pids.slice(1);
  return pids.some((p) => /^-0*1$/.test(p)) ? "kill -1 (signals every process)" : undefined;
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

function rsyncRule(args: string[]): string | undefined {
  const deletes = args.some((a) => a === "--del" || a.startsWith("--delete"));
  if (!deletes) return undefined;
  const ops = operands(args, "ef", RSYNC_ARG_OPTS);
  const dest = ops[ops.length - 1];
  if (ops.length < 2 || dest === undefined) return undefined;
  const label = wholeTreeTarget(dest, "home");
  return label ? `rsync --delete onto ${label}` : undefined;
}

function mvRule(args: string[]): string | undefined {
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
  const sources = target !== undefined ? ops : ops.slice(0, -1);
  for (const s of sources) {
    const label = wholeTreeTarget(s, "system");
    if (label) return `mv of ${label}`;
  }
  return undefined;
}

export interface GapInput {
  cmd: string;
  args: string[];
  /** An earlier command of the same pipeline runs a downloader (`curl ... | python3`). */
  fetchedUpstream: boolean;
  /** A substitution in the words runs a downloader (`python3 -c "$(curl ...)"`, `<(curl ...)`). */
  fetchedInWords: () => boolean;
}

/** What a gap rule found (to be worded as a denial), or undefined. */
export function gapRule(g: GapInput): string | undefined {
  const { cmd, args } = g;
  if (DISK_DESTROYERS.has(cmd)) return `${cmd} (discards a whole device)`;
  const part = partitionRule(cmd, args);
  if (part) return part;
  if (cmd === "truncate") return truncateRule(args);
  if (cmd === "kill") return killRule(args);
  if (cmd === "rsync") return rsyncRule(args);
  if (cmd === "mv") return mvRule(args);
  const spec = interpreterSpec(cmd);
  if (spec) {
    if (g.fetchedInWords()) return `running downloaded code with ${cmd}`;
    if (g.fetchedUpstream && readsProgramFromStdin(args, spec)) return `piping downloaded code into ${cmd}`;
  }
  return undefined;
}
