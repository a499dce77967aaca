/**
 * The REPL: each line is a goal, run in one `repl-<ms>-<pid>` session (goals build on
 * each other). `/exit` or Ctrl-D leaves. Ctrl-C during a goal cancels that goal only;
 * at the prompt it reminds how to leave.
 */
import readline from "node:readline";
import { openAgentSession } from "../agent/session-runner.js";
import { flagBool } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";
import { resolveMode, resolveRetries, resolveSessionId } from "./run-common.js";
import { traceLine, traceSummary } from "./trace.js";

const PROMPT = "scoot> ";
const EXIT_WORDS = new Set(["/exit", "/quit"]);

export async function runRepl(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot repl: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const loaded = loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths } = loaded.value;
  const mode = resolveMode(cli.args, config);
  const sessionId = resolveSessionId(cli.args, "repl");
  const retries = resolveRetries(cli.args);
  if (!mode.ok || !sessionId.ok || !retries.ok) {
    for (const r of [mode, sessionId, retries]) if (!r.ok) cli.io.err(`scoot: ${r.error}\n`);
    return EXIT.usage;
  }
  const trace = flagBool(cli.args, "trace");
  const opened = await openAgentSession({
    config,
    paths,
    cwd: cli.cwd,
    env: cli.env,
    sessionId: sessionId.value,
    mode: mode.value,
    retries: retries.value,
    onWarning: (w) => cli.io.err(`scoot: warning: ${w}\n`),
    onEvent: trace
      ? (e) => {
          const line = traceLine(e);
          if (line) cli.io.err(`${line}\n`);
        }
      : undefined,
  });
  if (!opened.ok) {
    cli.io.err(`scoot: ${opened.error}\n`);
    return EXIT.usage;
  }
  const agent = opened.value;
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
