/**
 * What a program's arguments make it do, where that (and not a target path) decides a shell
 * rule: a partition editor that writes rather than prints, `kill` aimed at every process,
 * `systemctl` powering off, an interpreter reading its program from stdin. Read-only uses of
 * the same tools (`fdisk -l`, `parted /dev/sda print`, `kill -1 1234`) read as read-only.
 * Arguments arrive lower-cased and unwrapped.
 */
import type { SimpleCommand } from "./shell-lex.js";
import { isProcSub } from "./shell-places.js";
import { operands } from "./shell-targets.js";

/** Commands that read a script from stdin when piped into. */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "csh",
  "tcsh",
]);

/** Formatters outside the `mkfs.*` family. */
const FILESYSTEM_MAKERS: ReadonlySet<string> = new Set(["mke2fs", "mkswap", "wipefs", "mkdosfs", "mkntfs"]);
/** Commands with no ordinary use in an agent's work: they destroy a disk's contents. */
export const DISK_DESTROYERS: ReadonlySet<string> = new Set(["blkdiscard"]);
export const POWER_COMMANDS: ReadonlySet<string> = new Set(["shutdown", "reboot", "poweroff", "halt"]);
const POWER_VERBS: ReadonlySet<string> = new Set(["poweroff", "reboot", "halt", "kexec", "soft-reboot"]);
const POWER_TARGETS: ReadonlySet<string> = new Set([
  "poweroff.target",
  "reboot.target",
  "halt.target",
  "kexec.target",
  "rescue.target",
  "emergency.target",
]);

export function formatsFilesystem(cmd: string): boolean {
  return /^mkfs(\..*)?$/.test(cmd) || FILESYSTEM_MAKERS.has(cmd);
}

/** Is a process substitution an operand or the stdin of this command (`sh <(curl ...)`)? */
export function readsProcessSubstitution(args: string[], s: SimpleCommand): boolean {
  return args.some(isProcSub) || s.redirs.some((r) => r.op === "<" && r.target && isProcSub(r.target.text));
}

/** Does `source` / `.` name its stdin as the file to run? */
export function sourcesStdin(args: string[]): boolean {
  return args.some((a) => a === "/dev/stdin" || a === "-" || a === "/proc/self/fd/0");
}

/** `init 0` / `init 6`: the run level that halts or reboots, or undefined. */
export function haltingRunLevel(args: string[]): string | undefined {
  const level = args.find((a) => !a.startsWith("-"));
  return level === "0" || level === "6" ? level : undefined;
}

/** The `systemctl` verb that powers off or reboots, or undefined. */
export function systemctlPowerVerb(args: string[]): string | undefined {
  return args.filter((a) => !a.startsWith("-")).find((v) => POWER_VERBS.has(v));
}

/** The power target `systemctl isolate|start` is given, or undefined. */
export function systemctlPowerTarget(args: string[]): string | undefined {
  const verbs = args.filter((a) => !a.startsWith("-"));
  if (!verbs.some((v) => v === "isolate" || v === "start")) return undefined;
  return verbs.find((v) => POWER_TARGETS.has(v));
}

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
const PARTED_ARG_OPTS: readonly string[] = ["-a", "--align"];
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
export const PARTITION_EDITORS: ReadonlySet<string> = new Set(["fdisk", "cfdisk", "gdisk", "sgdisk"]);

/** Does fdisk / cfdisk / gdisk / sgdisk edit (rather than list or print) a partition table? */
export function editsPartitionTable(cmd: string, args: string[]): boolean {
  if (cmd === "fdisk" && args.some((a) => FDISK_READ_ONLY.has(a))) return false;
  if (cmd === "sgdisk" && args.some((a) => a === "-p" || a === "--print")) return false;
  return true;
}

function isShortCluster(a: string): boolean {
  return /^-[a-z]+$/.test(a);
}

/** Does sfdisk write (no printing action among its options)? */
export function sfdiskWrites(args: string[]): boolean {
  return !args.some(
    (a) => SFDISK_READ_ONLY.has(a) || (isShortCluster(a) && /[ldjsg]/.test(a.slice(1)) && !/[afn]/.test(a)),
  );
}

/** parted's commands after the device, or undefined when an option makes it read-only. */
function partedCommands(args: string[]): string[] | undefined {
  if (args.some((a) => PARTED_READ_ONLY_OPTS.has(a))) return undefined;
  return operands(args, "a", PARTED_ARG_OPTS).slice(1);
}

/** parted given a device and no commands: it opens its interactive editor. */
export function partedInteractive(args: string[]): boolean {
  return partedCommands(args)?.length === 0;
}

/** The first parted command that writes the disk, or undefined. */
export function partedWrite(args: string[]): string | undefined {
  return partedCommands(args)?.find((c) => PARTED_WRITES.has(c));
}

/** `kill -1` / `kill -9 -1`: pid -1 signals every process the caller may signal. */
export function signalsEveryProcess(args: string[]): boolean {
  const first = args[0];
  if (first === undefined || first === "-l" || first === "--list" || first === "--table") return false;
  let k = 0;
  if (first === "-s" || first === "-n" || first === "--signal") k = 2;
  else if (first.startsWith("--signal=")) k = 1;
  // `-SIG` is a signal only when a pid follows it: alone, `kill -1` names pid -1.
  else if (first !== "--" && /^-[a-z0-9+]+$/.test(first) && args.length > 1) k = 1;
  let pids = args.slice(k);
  if (pids[0] === "--") pids = pids.slice(1);
  return pids.some((p) => /^-0*1$/.test(p));
}

/** Interpreters that run a program read from stdin when given none; flags that give it inline. */
interface InterpreterSpec {
  inline: readonly string[];
  argOpts: readonly string[];
}
const PYTHON: InterpreterSpec = { inline: ["-c", "-m"], argOpts: ["-w", "-x"] };
const NODE: InterpreterSpec = {
  inline: ["-e", "--eval", "-p", "--print"],
  argOpts: ["-r", "--require", "--import", "--loader"],
};
const INTERPRETERS: Readonly<Record<string, InterpreterSpec>> = {
  perl: { inline: ["-e"], argOpts: [] },
  node: NODE,
  nodejs: NODE,
  ruby: { inline: ["-e"], argOpts: ["-r", "-i", "-c"] },
  php: { inline: ["-r", "-f"], argOpts: ["-c", "-d"] },
};

function interpreterSpec(cmd: string): InterpreterSpec | undefined {
  if (/^(python|pypy)[0-9.]*$/.test(cmd)) return PYTHON;
  return Object.hasOwn(INTERPRETERS, cmd) ? INTERPRETERS[cmd] : undefined;
}

export function isInterpreter(cmd: string): boolean {
  return interpreterSpec(cmd) !== undefined;
}

/** True when the interpreter would take its program from stdin (no script, no inline code, or `-`). */
export function readsProgramFromStdin(cmd: string, args: string[]): boolean {
  const spec = interpreterSpec(cmd);
  if (spec === undefined) return false;
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
      const skipsNext = shortOptionsSkipNext(a, spec);
      if (skipsNext === "inline") return false;
      if (skipsNext) i++;
      continue;
    }
    return false; // a script path
  }
  return true;
}

/** A short-option cluster: gives inline code, or takes the next word (true), or neither. */
function shortOptionsSkipNext(a: string, spec: InterpreterSpec): boolean | "inline" {
  for (let j = 1; j < a.length; j++) {
    const flag = `-${a[j]}`;
    if (spec.inline.includes(flag)) return "inline";
    if (spec.argOpts.includes(flag)) return j === a.length - 1;
  }
  return false;
}
