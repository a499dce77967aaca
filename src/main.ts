#!/usr/bin/env node
/**
 * Entry point: argv → command. The only place that calls process.exit. Command modules
 * are imported on demand so `scoot --version` and `scoot config` stay fast.
 */
import { parseArgs, USAGE } from "./cli/args.js";
import { unknownCommandMessage } from "./cli/command-hint.js";
import { COMMAND_HELP, commandHelpText } from "./cli/help.js";
import { EXIT, processIo } from "./cli/io.js";
import { installProcessEnd } from "./core/process-end.js";
import { scootVersion } from "./core/version.js";

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv);
  if (!parsed.ok) {
    processIo.err(`scoot: ${parsed.error}\n`);
    return EXIT.usage;
  }
  const args = parsed.value;
  if (args.flags.version) {
    processIo.out(`scoot ${scootVersion()}\n`);
    return EXIT.ok;
  }
  const asksHelp = args.flags.help === true || (args.words[0] === "help" && args.flags.eval === undefined);
  if (asksHelp) return printHelp(helpTopic(args.words, args.flags.help === true));
  const { dispatch } = await import("./app.js");
  // A run's garbage dies young (each turn's request body, tool output, parsed reply). Left to
  // itself V8 doubles the young generation whenever a little of it survives, to 8 MB by turn
  // 300: about 6 MB of peak RSS that buys nothing, since the scavenges stay as cheap. Set once
  // the app is loaded: loading it allocates much that lives, and in a small young generation
  // that costs a short run more scavenges than it saves.
  const { setFlagsFromString } = await import("node:v8");
  setFlagsFromString("--semi-space-growth-factor=1");

  return dispatch(args);
}

/** `scoot help x` and `scoot x --help` ask about x; `scoot help --help` about help itself. */
function helpTopic(words: string[], flag: boolean): string[] {
  if (words[0] !== "help") return words;
  if (words.length > 1) return words.slice(1);
  return flag ? words : [];
}

/** `scoot --help`, `scoot <command> --help`, `scoot help [<command>]` (docs/commands.md). */
function printHelp(words: string[]): number {
  if (words.length === 0) {
    processIo.out(USAGE);
    return EXIT.ok;
  }
  const text = commandHelpText(words[0]!);
  if (text === undefined) {
    processIo.err(unknownCommandMessage(words, Object.keys(COMMAND_HELP)));
    return EXIT.usage;
  }
  processIo.out(text);
  return EXIT.ok;
}

/** Exit only after stdout and stderr have flushed, so piped output is never cut short. */
function exitAfterFlush(code: number): void {
  let pending = 2;
  const done = () => {
    pending -= 1;
    if (pending === 0) process.exit(code);
  };
  process.stdout.write("", done);
  process.stderr.write("", done);
}

// A signal path that must end now (src/cli/run.ts, src/cli/acp.ts) ends here, at once.
installProcessEnd((code) => process.exit(code));

main(process.argv.slice(2)).then(exitAfterFlush, (e: unknown) => {
  processIo.err(`scoot: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
  exitAfterFlush(EXIT.failed);
});
