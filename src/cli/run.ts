/** `scoot -e "<goal>"`: one run; only the final answer on stdout (or a JSON result with --json). */
import type { RunResult } from "../agent/loop.js";
import { statusOf } from "../agent/run-stop.js";
import type { Config } from "../config/schema.js";
import { endProcess } from "../core/process-end.js";
import { createStopControl } from "../core/stop.js";
import { formatPlan } from "../tools/plan.js";
import { flagBool, flagString } from "./args.js";
import type { Cli } from "./context.js";
import { EXIT } from "./io.js";
import { openCliAgent } from "./run-common.js";
import { traceSummary } from "./trace.js";

/** Exit codes follow the coarse status: scripts tell the stop reasons apart by `--json`'s `stop`. */
export function exitCodeFor(r: Pick<RunResult, "stop">): number {
  const status = statusOf(r.stop);
  if (status === "final" || status === "plan") return EXIT.ok;
  if (status === "interrupted") return EXIT.interrupted;
  return EXIT.failed;
}

/** `--plan`, or `agent.default_mode = "plan"`: the goal is planned, not executed (docs/safety.md "Plan mode"). */
export function planWanted(cli: Cli, config: Config): boolean {
  return flagBool(cli.args, "plan") || config.agent.default_mode === "plan";
}

function failed(r: RunResult): boolean {
  return r.status === "failed" || r.status === "interrupted";
}

export async function runEval(cli: Cli): Promise<number> {
  const goal = flagString(cli.args, "eval") ?? "";
  if (goal.trim() === "") {
    cli.io.err('scoot: -e needs a goal, e.g. scoot -e "count the TypeScript files"\n');
    return EXIT.usage;
  }
  const json = flagBool(cli.args, "json");
  // --json prints one object at the end; otherwise the answer streams as it arrives.
  const opened = await openCliAgent(cli, "cli", { answers: !json, thoughts: false });
  if (!opened.ok) return opened.exitCode;
  const { agent, trace, finish, screen, cancel } = opened;
  const control = createStopControl({
    onFirst: () => {
      // Nothing more of the run prints after this line; the spinner goes (docs/keyboard.md "Cancelling").
      const what = cancel();
      screen.err(`scoot: interrupted: stopped ${what} (Ctrl-C again to force)\n`);
    },
    onAgain: () => endProcess(EXIT.interrupted),
    error: () => new Error("interrupted"),
  });
  const planning = planWanted(cli, opened.config);
  let result: RunResult;
  try {
    result = await agent.run(goal, control.stop, { plan: planning });
  } finally {
    control.dispose();
    await agent.close();
  }
  finish(result, failed(result) && result.error ? `scoot: ${result.error}\n` : undefined);
  // The plan is the run's answer: numbered on stdout (the live view and trace only said it came).
  if (result.plan && !json) screen.out(formatPlan(result.plan));
  if (trace) cli.io.err(`${traceSummary(result)}\n`);
  if (json) {
    const out = {
      session_id: agent.sessionId,
      answer: result.answer ?? null,
      ...(result.plan ? { plan: result.plan } : {}),
      turns: result.turns,
      usage: { ...result.usage, context_window: agent.contextWindow() ?? null },
      status: result.status,
      stop: result.stop,
      ...(result.error ? { error: result.error } : {}),
    };
    cli.io.out(`${JSON.stringify(out)}\n`);
  }
  return exitCodeFor(result);
}
