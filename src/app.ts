/**
 * Everything after argument parsing: command words → handler. Loaded by `main.ts` only
 * when there is work to do, so `scoot --version` and `--help` parse nothing else.
 * Command modules are imported on demand.
 */
import type { ParsedArgs } from "./cli/args.js";
import { closestCommand, unknownCommandMessage } from "./cli/command-hint.js";
import type { Cli, Surroundings } from "./cli/context.js";
import { COMMAND_HELP } from "./cli/help.js";
import { dataStdout, EXIT, processIo } from "./cli/io.js";
import { registerSecretEnv } from "./core/redact.js";

type Handler = (cli: Cli) => Promise<number>;

/** Command words → handler. The longest matching prefix of words wins. */
export const COMMANDS: Record<string, () => Promise<Handler>> = {
  config: async () => (await import("./cli/config.js")).runConfig,
  doctor: async () => (await import("./cli/doctor.js")).runDoctor,
  "policy check": async () => (await import("./cli/policy.js")).runPolicyCheck,
  "sessions list": async () => (await import("./cli/sessions.js")).runSessionsList,
  sessions: async () => (await import("./cli/sessions.js")).runSessionsList,
  "session show": async () => (await import("./cli/sessions.js")).runSessionShow,
  "audit show": async () => (await import("./cli/audit.js")).runAuditShow,
  "audit verify": async () => (await import("./cli/audit.js")).runAuditVerify,
  "audit export": async () => (await import("./cli/audit-export.js")).runAuditExport,
  skills: async () => (await import("./cli/skills.js")).runSkills,
  "schedule list": async () => (await import("./cli/schedule.js")).runScheduleList,
  schedule: async () => (await import("./cli/schedule.js")).runScheduleList,
  "schedule run": async () => (await import("./cli/schedule.js")).runScheduleRun,
  "daemon run": async () => (await import("./cli/daemon.js")).runDaemonRun,
  "daemon status": async () => (await import("./cli/daemon.js")).runDaemonStatus,
  daemon: async () => (await import("./cli/daemon.js")).runDaemonStatus,
  "daemon stop": async () => (await import("./cli/daemon.js")).runDaemonStop,
  serve: async () => (await import("./cli/serve.js")).runServe,
  acp: async () => (await import("./cli/acp.js")).runAcp,
  setup: async () => (await import("./cli/setup.js")).runSetup,
  repl: async () => (await import("./cli/repl.js")).runRepl,
  undo: async () => (await import("./cli/undo.js")).runUndo,
  diff: async () => (await import("./cli/undo.js")).runDiff,
};

/** Commands whose stdout is data (records, a protocol): left as written even on a terminal. */
const DATA_STDOUT = new Set(["serve", "acp", "session show", "audit show"]);

/**
 * Whether this command's stdout is data rather than lines for a person (docs/keyboard.md "Lines
 * on a terminal"): `--json`, an `--output-schema` answer, or one of DATA_STDOUT.
 */
function stdoutIsData(args: ParsedArgs, command: string | undefined): boolean {
  if (args.flags.json === true || args.flags["output-schema"] !== undefined) return true;
  return command !== undefined && DATA_STDOUT.has(command);
}

function findCommand(words: string[]): { key: string; rest: string[] } | undefined {
  for (const n of [2, 1]) {
    const key = words.slice(0, n).join(" ");
    if (words.length >= n && COMMANDS[key]) return { key, rest: words.slice(n) };
  }
  return undefined;
}

/**
 * `scoot "fix the tests"`: words that name no command are a goal, unless they look like a
 * command mistyped (`scoot sesions`) or begin with a command's name (`scoot sessions foo`).
 */
function isGoal(words: string[], commands: readonly string[]): boolean {
  const first = words[0] ?? "";
  if (commands.includes(first)) return false;
  return !(words.length === 1 && closestCommand(first, commands) !== undefined);
}

/**
 * `--output-schema` checks one run's answer; the REPL's goals are a conversation, whose answers
 * are for a person. Said as a usage error rather than ignored.
 */
function outputSchemaInRepl(io: Cli["io"], args: ParsedArgs): boolean {
  if (args.flags["output-schema"] === undefined) return false;
  io.err(
    'scoot: --output-schema checks the answer of one run: use it with -e (scoot --output-schema FILE -e "goal"), not in the REPL\n',
  );
  return true;
}

/**
 * A goal given as the command words: on a terminal the REPL starts with it (and stays); without
 * one it runs like `-e` (docs/commands.md).
 */
async function runGoalWords(cli: Cli): Promise<number> {
  const goal = cli.args.words.join(" ");
  const args = { ...cli.args, words: [] };
  if (process.stdin.isTTY && process.stderr.isTTY) {
    if (outputSchemaInRepl(cli.io, args)) return EXIT.usage;
    const { runRepl } = await import("./cli/repl.js");
    return runRepl({ ...cli, args }, goal);
  }
  const { runEval } = await import("./cli/run.js");
  return runEval({ ...cli, args: { ...args, flags: { ...args.flags, eval: goal } } });
}

/** `base` is the process's own streams, environment and directory unless a caller (a test) passes others. */
export async function dispatch(
  args: ParsedArgs,
  base: Surroundings = { env: process.env, io: processIo, cwd: process.cwd() },
): Promise<number> {
  registerSecretEnv(base.env);
  if (stdoutIsData(args, findCommand(args.words)?.key)) base = { ...base, io: dataStdout(base.io) };

  // `scoot policy check … --execute-plan FILE` judges a call as the run bound to the plan would.
  const policyCheck = args.words[0] === "policy" && args.words[1] === "check";
  if (
    typeof args.flags.eval !== "string" &&
    !policyCheck &&
    (args.flags["execute-plan"] || args.flags["plan-sha256"])
  ) {
    base.io.err('scoot: --execute-plan runs one goal: scoot --execute-plan plan.json -e "goal"\n');
    return EXIT.usage;
  }
  if (typeof args.flags.eval === "string") {
    if (args.words.length > 0) {
      base.io.err(`scoot: -e takes the goal as its one value; unexpected "${args.words.join(" ")}"\n`);
      return EXIT.usage;
    }
    const { runEval } = await import("./cli/run.js");
    return runEval({ ...base, args });
  }
  if (args.words.length === 0) {
    if (outputSchemaInRepl(base.io, args)) return EXIT.usage;
    const { runRepl } = await import("./cli/repl.js");
    return runRepl({ ...base, args });
  }
  const found = findCommand(args.words);
  if (!found) {
    const commands = Object.keys(COMMAND_HELP);
    if (!isGoal(args.words, commands)) {
      base.io.err(unknownCommandMessage(args.words, commands));
      return EXIT.usage;
    }
    return runGoalWords({ ...base, args });
  }
  const handler = await COMMANDS[found.key]!();
  return handler({ ...base, args: { ...args, words: found.rest } });
}
