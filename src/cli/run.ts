/** `scoot -e "<goal>"`: one run; only the final answer on stdout (or a JSON result with --json). */
import type { AnswerSchema } from "../agent/answer-schema.js";
import type { RunResult } from "../agent/loop.js";
import { type ApprovedPlan, loadPlanFile } from "../agent/plan-file.js";
import { plansFirst } from "../agent/plan-review.js";
import { statusOf } from "../agent/run-stop.js";
import type { Config } from "../config/schema.js";
import { endProcess } from "../core/process-end.js";
import { redact } from "../core/redact.js";
import { createStopControl, forcesEnd } from "../core/stop.js";
import type { Result } from "../core/types.js";
import { formatPlan } from "../tools/plan.js";
import { planSha256 } from "../tools/plan-shape.js";
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

/** `--execute-plan FILE [--plan-sha256 HEX]`: the approved plan the run is bound to, if any. */
export function planFromFlags(cli: Cli): Result<ApprovedPlan | undefined> {
  const file = flagString(cli.args, "execute-plan");
  const sha = flagString(cli.args, "plan-sha256");
  if (file === undefined) {
    if (sha !== undefined) return { ok: false, error: "--plan-sha256 needs --execute-plan FILE" };
    return { ok: true, value: undefined };
  }
  return loadPlanFile(file, cli.cwd, sha);
}

/** The flags that ask for a run that acts: a plan to carry out, an answer in a schema. */
const ACTING_FLAGS = ["execute-plan", "output-schema"] as const;

function actingFlag(cli: Cli): (typeof ACTING_FLAGS)[number] | undefined {
  return ACTING_FLAGS.find((f) => flagString(cli.args, f) !== undefined);
}

/**
 * `--plan` makes a run that only plans; asked together with an acting flag, one would be
 * silently ignored, so they are refused.
 */
function planFlagConflict(cli: Cli): string | undefined {
  const other = flagBool(cli.args, "plan") ? actingFlag(cli) : undefined;
  return other && `--plan only plans (nothing runs); --${other} is for a run that acts: use one of them`;
}

/**
 * `--plan`, or `agent.default_mode = "plan"`: the goal is planned, not executed (docs/safety.md
 * "Plan mode"). The configured default gives way to an acting flag on the command line.
 */
export function planWanted(cli: Cli, config: Config): boolean {
  return plansFirst(config, { plan: flagBool(cli.args, "plan"), acting: actingFlag(cli) !== undefined });
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
  const conflict = planFlagConflict(cli);
  if (conflict) {
    cli.io.err(`scoot: ${conflict}\n`);
    return EXIT.usage;
  }
  const plan = planFromFlags(cli);
  if (!plan.ok) {
    cli.io.err(`scoot: ${plan.error}\n`);
    return EXIT.usage;
  }
  const schemaFile = flagString(cli.args, "output-schema");
  let answerSchema: AnswerSchema | undefined;
  if (schemaFile !== undefined) {
    // Read and compiled before anything starts: a schema that cannot be used is a usage error.
    const { readAnswerSchemaFile } = await import("../agent/answer-schema.js");
    const read = readAnswerSchemaFile(schemaFile, cli.cwd);
    if (!read.ok) {
      cli.io.err(`scoot: --output-schema: ${read.error}\n`);
      return EXIT.usage;
    }
    answerSchema = read.value;
  }
  // --json prints one object at the end; otherwise the answer streams as it arrives, except an
  // answer in a schema, printed once checked (a streamed one might yet be corrected).
  const opened = await openCliAgent(
    cli,
    "cli",
    { answers: !json && !answerSchema, thoughts: false },
    undefined,
    plan.value,
  );
  if (!opened.ok) return opened.exitCode;
  const { agent, trace, finish, screen, cancel } = opened;
  const control = createStopControl({
    onFirst: (why) => {
      // Nothing more of the run prints after this line; the spinner goes (docs/keyboard.md "Cancelling").
      const what = cancel();
      screen.err(
        forcesEnd(why)
          ? `scoot: interrupted: stopped ${what} (Ctrl-C again to force)\n`
          : `scoot: interrupted (${why}): stopped ${what}\n`,
      );
    },
    // A second Ctrl-C ends at once; a repeated SIGTERM or SIGHUP waits for the bounded stop
    // under way (docs/reliability.md "Signals").
    onAgain: (why) => {
      if (forcesEnd(why)) endProcess(EXIT.interrupted);
    },
    error: () => new Error("interrupted"),
  });
  const planning = planWanted(cli, opened.config);
  let result: RunResult;
  try {
    result = await agent.run(goal, control.stop, {
      plan: planning,
      ...(answerSchema ? { answerSchema } : {}),
    });
  } finally {
    control.dispose();
    await agent.close();
  }
  finish(result, failed(result) && result.error ? `scoot: ${result.error}\n` : undefined);
  // The plan is the run's answer: numbered on stdout (the live view and trace only said it came).
  if (result.plan && !json) screen.out(formatPlan(result.plan));
  if (trace) cli.io.err(`${traceSummary(result)}\n`);
  // Redacted as the streamed answer is (stream-print.ts).
  if (answerSchema && !json && result.status === "final") cli.io.out(`${redact(result.answer ?? "")}\n`);
  if (json) {
    const out = {
      session_id: agent.sessionId,
      // With --output-schema the answer is the checked value itself, not its text.
      answer: (answerSchema && result.status === "final" ? result.data : result.answer) ?? null,
      // The hash a job's plan_sha256 and --plan-sha256 pin (docs/safety.md "Plans as contracts").
      ...(result.plan ? { plan: result.plan, plan_sha256: planSha256(result.plan) } : {}),
      turns: result.turns,
      // What became of the calls: run, denied by the gate, refused (a rule, "reject always", the person).
      tool_calls: result.toolCalls,
      denials: result.denials,
      refusals: result.refusals,
      usage: { ...result.usage, context_window: agent.contextWindow() ?? null },
      status: result.status,
      stop: result.stop,
      ...(result.error ? { error: result.error } : {}),
    };
    cli.io.out(`${JSON.stringify(out)}\n`);
  }
  return exitCodeFor(result);
}
