/**
 * The guarded-mode tripwire as a table. Each rule names the programs it reads, and either
 * denies — `finds` reads the arguments and returns what it found, `why` words the reason
 * users see — or hands command lines the program runs to be checked as commands of their
 * own. `judgeCall` walks the table in order and the first rule that fires decides: order
 * matters only where one call matches several rules, and the reason text is part of the
 * contract (docs/safety.md "Policy modes"; test/policy/shell-golden.test.ts pins every reason).
 * Checks of the command text as a whole (fork bombs, unreadable text, redirections onto
 * devices, `--no-preserve-root` as any word) are made by shell.ts before the table.
 */
import {
  DISK_DESTROYERS,
  editsPartitionTable,
  formatsFilesystem,
  haltingRunLevel,
  isInterpreter,
  PARTITION_EDITORS,
  POWER_COMMANDS,
  partedInteractive,
  partedWrite,
  readsProcessSubstitution,
  readsProgramFromStdin,
  SHELLS,
  sfdiskWrites,
  signalsEveryProcess,
  sourcesStdin,
  systemctlPowerTarget,
  systemctlPowerVerb,
} from "./shell-actions.js";
import { fetchedCode } from "./shell-downloads.js";
import { aliasValues, evaluatedLines, shellScripts, trapHandlers } from "./shell-inner.js";
import type { SimpleCommand } from "./shell-lex.js";
import { firstDangerousDevice, firstWholeTree } from "./shell-places.js";
import {
  ddOutputs,
  findPlan,
  movedSources,
  NO_PRESERVE_ROOT,
  ownershipArguments,
  removeArguments,
  rsyncDeletedDestination,
  truncatedFiles,
  writtenFiles,
} from "./shell-targets.js";
import { baseName, type Invocation } from "./shell-wrappers.js";

const DENY_SUFFIX = "is blocked in guarded mode";

/** The reason text of every guarded-mode shell denial. */
export function blocked(what: string): string {
  return `shell: ${what} ${DENY_SUFFIX}`;
}

/** One command as the rules see it: prefixes stripped, lower-cased. */
export interface Call {
  /** Program name: the last path segment of the command word. */
  cmd: string;
  args: string[];
  /** The command word is built at run time (`$x`, `` `...` ``): it might be rm. */
  computed: boolean;
  pipedIn: boolean;
  /** The simple command the call came from: its words (substitutions) and redirections. */
  source: SimpleCommand;
  /** The call reads the pipe and an earlier command of the pipeline runs a downloader. */
  downloadPipedIn: boolean;
}

/** A command the program runs: a command line to lex, or an argv to judge as it stands. */
export type InnerCommand = { line: string } | { argv: string[] };

/** The program names a rule reads, or a test for calls a name cannot describe. */
type Programs = ReadonlySet<string> | ((c: Call) => boolean);

interface DenyRule {
  programs: Programs;
  decision: "deny";
  /** What in the call trips the rule (named for the reason), or undefined. */
  finds: (c: Call) => string | undefined;
  why: (found: string) => string;
}

interface InnerRule {
  programs: Programs;
  decision: "check inner commands";
  runs: (c: Call) => InnerCommand[];
}

export type ShellRule = DenyRule | InnerRule;

/** Judges a command line as a command of its own (one nesting level deeper). */
export type LineJudge = (line: string) => string | undefined;

function named(...names: Array<string | ReadonlySet<string>>): ReadonlySet<string> {
  return new Set(names.flatMap((n) => (typeof n === "string" ? [n] : [...n])));
}

/** A finder that names the program when the predicate holds. */
function nameIf(holds: (c: Call) => boolean): (c: Call) => string | undefined {
  return (c) => (holds(c) ? c.cmd : undefined);
}

const lines = (texts: string[]): InnerCommand[] => texts.map((line) => ({ line }));
const runsDownloadedCode = (c: Call): boolean => fetchedCode(c.source.words);
const same = (found: string): string => found;

/** rm (or a command we cannot name) recursive on a whole tree; project trees only for rm itself. */
function recursiveDeleteTarget(c: Call): string | undefined {
  const isRm = c.cmd === "rm";
  const rm = removeArguments(c.args, isRm);
  return rm.recursive ? firstWholeTree(rm.targets, isRm ? "wide" : "home") : undefined;
}

/**
 * find with -delete or `-exec rm` from / or a home directory, or from the project itself when
 * nothing filters what is deleted (`find . -delete`; `find . -name '*.o' -delete` is ordinary).
 */
function findDeleteTarget(c: Call): string | undefined {
  const plan = findPlan(c.args);
  if (!plan.deletes) return undefined;
  const label = firstWholeTree(plan.starts.length > 0 ? plan.starts : ["."], plan.filtered ? "home" : "wide");
  return label ? `${label} (find ${plan.deletes})` : undefined;
}

function ownershipTarget(c: Call): string | undefined {
  const { recursive, operands } = ownershipArguments(c.args);
  const label = recursive ? firstWholeTree(operands, "system") : undefined;
  return label ? `${c.cmd} of ${label}` : undefined;
}

function rsyncTarget(c: Call): string | undefined {
  const dest = rsyncDeletedDestination(c.args);
  return dest === undefined ? undefined : firstWholeTree([dest], "home");
}

/** In order: the first rule that fires decides. */
export const SHELL_RULES: readonly ShellRule[] = [
  {
    programs: named(SHELLS),
    decision: "deny",
    finds: nameIf((c) => c.pipedIn),
    why: (cmd) => `piping into ${cmd}`,
  },
  {
    programs: named(SHELLS),
    decision: "deny",
    finds: nameIf((c) => readsProcessSubstitution(c.args, c.source)),
    why: (cmd) => `running a process substitution with ${cmd} (same as piping into a shell)`,
  },
  {
    programs: named(SHELLS),
    decision: "deny",
    finds: nameIf(runsDownloadedCode),
    why: (cmd) => `running downloaded code with ${cmd}`,
  },
  {
    programs: named(SHELLS),
    decision: "check inner commands",
    runs: (c) => lines(shellScripts(c.args, c.source)),
  },
  {
    programs: named("source", "."),
    decision: "deny",
    finds: nameIf((c) => readsProcessSubstitution(c.args, c.source)),
    why: (cmd) => `running a process substitution with ${cmd}`,
  },
  {
    programs: named("source", "."),
    decision: "deny",
    finds: nameIf((c) => c.pipedIn && sourcesStdin(c.args)),
    why: (cmd) => `piping into ${cmd}`,
  },
  {
    programs: named("eval", "watch"),
    decision: "deny",
    finds: nameIf(runsDownloadedCode),
    why: (cmd) => `running downloaded code with ${cmd}`,
  },
  {
    programs: named("eval", "watch"),
    decision: "check inner commands",
    runs: (c) => lines(evaluatedLines(c.cmd, c.args)),
  },
  { programs: named("trap"), decision: "check inner commands", runs: (c) => lines(trapHandlers(c.args)) },
  { programs: named("alias"), decision: "check inner commands", runs: (c) => lines(aliasValues(c.args)) },
  {
    programs: named("rm"),
    decision: "deny",
    finds: (c) => (removeArguments(c.args, true).noPreserveRoot ? NO_PRESERVE_ROOT : undefined),
    why: same,
  },
  {
    programs: (c) => c.cmd === "rm" || c.computed,
    decision: "deny",
    finds: recursiveDeleteTarget,
    why: (t) => `recursive delete of ${t}`,
  },
  {
    programs: named("find"),
    decision: "check inner commands",
    runs: (c) => findPlan(c.args).execs.map((argv) => ({ argv })),
  },
  {
    programs: named("find"),
    decision: "deny",
    finds: findDeleteTarget,
    why: (t) => `recursive delete of ${t}`,
  },
  {
    programs: (c) => formatsFilesystem(c.cmd),
    decision: "deny",
    finds: (c) => c.cmd,
    why: (cmd) => `${cmd} (filesystem formatting)`,
  },
  {
    programs: named("dd"),
    decision: "deny",
    finds: (c) => firstDangerousDevice(ddOutputs(c.args)),
    why: (dev) => `dd onto ${dev}`,
  },
  {
    programs: named("tee", "shred", "cp"),
    decision: "deny",
    finds: (c) => firstDangerousDevice(writtenFiles(c.cmd, c.args)),
    why: (dev) => `writing onto ${dev}`,
  },
  { programs: named(POWER_COMMANDS), decision: "deny", finds: (c) => c.cmd, why: same },
  {
    programs: named("init", "telinit"),
    decision: "deny",
    finds: (c) => {
      const level = haltingRunLevel(c.args);
      return level === undefined ? undefined : `${c.cmd} ${level}`;
    },
    why: same,
  },
  {
    programs: named("systemctl"),
    decision: "deny",
    finds: (c) => systemctlPowerVerb(c.args),
    why: (v) => `systemctl ${v}`,
  },
  {
    programs: named("systemctl"),
    decision: "deny",
    finds: (c) => systemctlPowerTarget(c.args),
    why: (t) => `systemctl ${t}`,
  },
  {
    programs: named(DISK_DESTROYERS),
    decision: "deny",
    finds: (c) => c.cmd,
    why: (cmd) => `${cmd} (discards a whole device)`,
  },
  {
    programs: named(PARTITION_EDITORS),
    decision: "deny",
    finds: nameIf((c) => editsPartitionTable(c.cmd, c.args)),
    why: (cmd) => `${cmd} (partition table editing)`,
  },
  {
    programs: named("sfdisk"),
    decision: "deny",
    finds: nameIf((c) => sfdiskWrites(c.args)),
    why: (cmd) => `${cmd} (partition table writing)`,
  },
  {
    programs: named("parted"),
    decision: "deny",
    finds: nameIf((c) => partedInteractive(c.args)),
    why: (cmd) => `${cmd} without commands (an interactive partition editor)`,
  },
  {
    programs: named("parted"),
    decision: "deny",
    finds: (c) => partedWrite(c.args),
    why: (w) => `parted ${w} (partition table writing)`,
  },
  {
    programs: named("truncate"),
    decision: "deny",
    finds: (c) => firstDangerousDevice(truncatedFiles(c.args)),
    why: (dev) => `truncate onto ${dev}`,
  },
  {
    programs: named("kill"),
    decision: "deny",
    finds: nameIf((c) => signalsEveryProcess(c.args)),
    why: (cmd) => `${cmd} -1 (signals every process)`,
  },
  { programs: named("rsync"), decision: "deny", finds: rsyncTarget, why: (t) => `rsync --delete onto ${t}` },
  {
    programs: named("mv"),
    decision: "deny",
    finds: (c) => firstWholeTree(movedSources(c.args), "system"),
    why: (t) => `mv of ${t}`,
  },
  {
    programs: (c) => isInterpreter(c.cmd),
    decision: "deny",
    finds: nameIf(runsDownloadedCode),
    why: (cmd) => `running downloaded code with ${cmd}`,
  },
  {
    programs: (c) => isInterpreter(c.cmd),
    decision: "deny",
    finds: nameIf((c) => c.downloadPipedIn && readsProgramFromStdin(c.cmd, c.args)),
    why: (cmd) => `piping downloaded code into ${cmd}`,
  },
  {
    programs: named("chmod", "chown", "chgrp"),
    decision: "deny",
    finds: ownershipTarget,
    why: (t) => `recursive ${t}`,
  },
];

/** The call an invocation makes, or undefined for an empty one. */
export function callOf(inv: Invocation, source: SimpleCommand, upstreamDownloads: boolean): Call | undefined {
  const first = inv.argv[0];
  if (first === undefined) return undefined;
  return {
    cmd: baseName(first),
    args: inv.argv.slice(1),
    // A command name we cannot know (`$x`, `$(...)`) might be rm: judge its arguments as rm's.
    computed: first.includes("$") || first.includes("`"),
    pipedIn: inv.pipedIn,
    source,
    downloadPipedIn: inv.pipedIn && upstreamDownloads,
  };
}

/**
 * For each program name in the table, the rules that may apply to it, in table order: its
 * named rules and every rule with a test. A name no rule lists gets only the tested rules.
 * Derived from SHELL_RULES so a call need not try all of them.
 */
function indexRules(rules: readonly ShellRule[]): { byName: Map<string, ShellRule[]>; tested: ShellRule[] } {
  const tested = rules.filter((r) => typeof r.programs === "function");
  const byName = new Map<string, ShellRule[]>();
  for (const r of rules) {
    if (typeof r.programs === "function") continue;
    for (const name of r.programs) byName.set(name, []);
  }
  for (const [name, list] of byName) {
    for (const r of rules) if (typeof r.programs === "function" || r.programs.has(name)) list.push(r);
  }
  return { byName, tested };
}

const RULE_INDEX = indexRules(SHELL_RULES);

/** Walks the table over one call: the first deny reason, or undefined when every rule passes. */
export function judgeCall(c: Call, judgeLine: LineJudge): string | undefined {
  for (const rule of RULE_INDEX.byName.get(c.cmd) ?? RULE_INDEX.tested) {
    if (typeof rule.programs === "function" && !rule.programs(c)) continue;
    const reason = rule.decision === "deny" ? denyReason(rule, c) : judgeInner(rule.runs(c), c, judgeLine);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

function denyReason(rule: DenyRule, c: Call): string | undefined {
  const found = rule.finds(c);
  return found === undefined ? undefined : blocked(rule.why(found));
}

/** Command lines are lexed one level deeper; an argv (`find -exec`) is judged as it stands. */
function judgeInner(inner: InnerCommand[], c: Call, judgeLine: LineJudge): string | undefined {
  for (const cmd of inner) {
    if ("line" in cmd) {
      const reason = judgeLine(cmd.line);
      if (reason !== undefined) return reason;
      continue;
    }
    const call = callOf({ argv: cmd.argv, pipedIn: false }, { ...c.source, pipedIn: false }, false);
    const reason = call === undefined ? undefined : judgeCall(call, judgeLine);
    if (reason !== undefined) return reason;
  }
  return undefined;
}
