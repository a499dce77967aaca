/** `scoot -e "<goal>"`: one run; only the final answer on stdout (or a JSON result with --json). */
import type { RunResult } from "../agent/loop.js";
import { openAgentSession } from "../agent/session-runner.js";
import { flagBool, flagString } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";
import { resolveMode, resolveRetries, resolveSessionId } from "./run-common.js";
import { traceLine, traceSummary } from "./trace.js";

export function exitCodeFor(r: RunResult): number {
  if (r.status === "final") return EXIT.ok;
  if (r.status === "interrupted") return EXIT.interrupted;
  return EXIT.failed;
}

export async function runEval(cli: Cli): Promise<number> {
  const goal = flagString(cli.args, "eval") ?? "";
  if (goal.trim() === "") {
    cli.io.err('scoot: -e needs a goal, e.g. scoot -e "count the TypeScript files"\n');
    return EXIT.usage;
  }
  const loaded = loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths } = loaded.value;
  const mode = resolveMode(cli.args, config);
  const sessionId = resolveSessionId(cli.args, "cli");
  const retries = resolveRetries(cli.args);
  for (const r of [mode, sessionId, retries]) {
    if (!r.ok) {
      cli.io.err(`scoot: ${r.error}\n`);
      return EXIT.usage;
    }
  }
  if (!mode.ok || !sessionId.ok || !retries.ok) return EXIT.usage;
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
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts === 1) {
      cli.io.err("\nscoot: interrupted; stopping the running step (Ctrl-C again to force)\n");
      controller.abort(new Error("interrupted"));
    } else {
      process.exit(EXIT.interrupted);
    }
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  let result: RunResult;
  try {
    result = await agent.run(goal, controller.signal);
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    await agent.close();
  }
  if (trace) cli.io.err(`${traceSummary(result)}\n`);
  if (flagBool(cli.args, "json")) {
    const out = {
      session_id: agent.sessionId,
      answer: result.answer ?? null,
      turns: result.turns,
      usage: result.usage,
      status: result.status,
      ...(result.error ? { error: result.error } : {}),
    };
    cli.io.out(`${JSON.stringify(out)}\n`);
  } else if (result.status === "final") {
    cli.io.out(`${result.answer ?? ""}\n`);
  }
  if (result.status !== "final" && result.error) cli.io.err(`scoot: ${result.error}\n`);
  return exitCodeFor(result);
}
