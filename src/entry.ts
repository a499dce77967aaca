/**
 * argv → exit code, with the process's streams, environment and directory passed in: what
 * `main.ts` runs, and what tests run in process (the same routing of `--version`, help and
 * commands, without starting a process per case). Imports only what `--version` and `--help`
 * need; everything else is `app.ts`, loaded when there is work.
 */
import { type ParsedArgs, parseArgs, USAGE } from "./cli/args.js";
import { unknownHelpTopicMessage } from "./cli/command-hint.js";
import type { Surroundings } from "./cli/context.js";
import { COMMAND_HELP, commandHelpText } from "./cli/help.js";
import { EXIT, type Io } from "./cli/io.js";
import { scootVersion } from "./core/version.js";

export async function runArgv(
  argv: string[],
  base: Surroundings,
  /**
   * beforeApp: called with the parsed arguments just before the command modules are loaded (the
   * CLI turns on V8's compile cache); onAppLoaded: once they are, before the command runs, with
   * the same arguments (the CLI tunes the heap).
   */
  hooks: { beforeApp?: (args: ParsedArgs) => void; onAppLoaded?: (args: ParsedArgs) => Promise<void> } = {},
): Promise<number> {
  const parsed = parseArgs(argv);
  if (!parsed.ok) {
    base.io.err(`scoot: ${parsed.error}\n`);
    return EXIT.usage;
  }
  const args = parsed.value;
  if (args.flags.version) {
    base.io.out(`scoot ${scootVersion()}\n`);
    return EXIT.ok;
  }
  const asksHelp = args.flags.help === true || (args.words[0] === "help" && args.flags.eval === undefined);
  if (asksHelp) return printHelp(helpTopic(args.words, args.flags.help === true), base.io);
  hooks.beforeApp?.(args);
  const { dispatch } = await import("./app.js");
  await hooks.onAppLoaded?.(args);
  return dispatch(args, base);
}

/** `scoot help x` and `scoot x --help` ask about x; `scoot help --help` about help itself. */
function helpTopic(words: string[], flag: boolean): string[] {
  if (words[0] !== "help") return words;
  if (words.length > 1) return words.slice(1);
  return flag ? words : [];
}

/**
 * `scoot --help`, `scoot <command> --help`, `scoot help [<command>]` (docs/commands.md); on a
 * terminal the process's stdout wraps it, continuation rows under the description column.
 */
function printHelp(words: string[], io: Io): number {
  if (words.length === 0) {
    io.out(USAGE);
    return EXIT.ok;
  }
  const text = commandHelpText(words[0]!);
  if (text === undefined) {
    io.err(unknownHelpTopicMessage(words[0]!, Object.keys(COMMAND_HELP)));
    return EXIT.usage;
  }
  io.out(text);
  return EXIT.ok;
}
