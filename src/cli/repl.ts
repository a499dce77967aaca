/**
 * The REPL: each line is a goal, run in one `repl-<ms>-<pid>` session (goals build on
 * each other). `/exit` or Ctrl-D leaves. Ctrl-C during a goal cancels that goal only;
 * at the prompt it reminds how to leave.
 */
import readline from "node:readline";
import type { Cli } from "./context.js";
import { EXIT } from "./io.js";
import { openCliAgent } from "./run-common.js";
import { traceSummary } from "./trace.js";

const PROMPT = "scoot> ";
const EXIT_WORDS = new Set(["/exit", "/quit"]);

export async function runRepl(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot repl: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const opened = await openCliAgent(cli, "repl");
  if (!opened.ok) return opened.exitCode;
  const { agent, trace } = opened;
  const interactive = Boolean(process.stdin.isTTY);
  const rl = readline.createInterface({
    input: process.stdin,
    output: interactive ? process.stdout : undefined,
    terminal: interactive,
    prompt: PROMPT,
  });
  if (interactive) {
    cli.io.err(`scoot REPL — session ${agent.sessionId}, policy ${agent.mode}. /exit or Ctrl-D to leave.\n`);
  }
  let current: AbortController | undefined;
  rl.on("SIGINT", () => {
    if (current) {
      cli.io.err("\nscoot: cancelling this goal\n");
      current.abort(new Error("interrupted"));
    } else {
      cli.io.err("\n(type /exit or press Ctrl-D to leave)\n");
      rl.prompt();
    }
  });
  // Without a TTY, readline does not see Ctrl-C: cancel the goal from the process signal.
  const onSigint = () => {
    if (current) current.abort(new Error("interrupted"));
    else rl.close();
  };
  if (!interactive) process.on("SIGINT", onSigint);

  const lines = rl[Symbol.asyncIterator]();
  if (interactive) rl.prompt();
  try {
    for (;;) {
      const next = await lines.next();
      if (next.done) break;
      const goal = next.value.trim();
      if (EXIT_WORDS.has(goal)) break;
      if (goal === "") {
        if (interactive) rl.prompt();
        continue;
      }
      current = new AbortController();
      const result = await agent.run(goal, current.signal);
      current = undefined;
      if (trace) cli.io.err(`${traceSummary(result)}\n`);
      if (result.status === "final") cli.io.out(`${result.answer ?? ""}\n`);
      else cli.io.err(`scoot: ${result.status === "interrupted" ? "goal cancelled" : result.error}\n`);
      if (interactive) rl.prompt();
    }
  } finally {
    if (!interactive) process.off("SIGINT", onSigint);
    rl.close();
    await agent.close();
  }
  return EXIT.ok;
}
