/** What `-e`, the REPL and `serve` share: the effective policy mode and the session id. */
import { APPROVAL_MODES, type ApprovalMode, type Approver } from "../agent/approval.js";
import type { RunResult } from "../agent/loop.js";
import type { ApprovedPlan } from "../agent/plan-file.js";
import { type AgentSession, openAgentSession } from "../agent/session-runner.js";
import type { Usage } from "../backend/types.js";
import type { HomePaths } from "../config/home.js";
import type { Config, PolicyMode } from "../config/schema.js";
import { resolveToken } from "../config/secrets.js";
import type { Result } from "../core/types.js";
import { loadCaBundle } from "../net/tls.js";
import { effectiveUnattended, parsePolicyMode } from "../policy/modes.js";
import type { ResumeTarget } from "../store/resume-target.js";
import type { Message } from "../store/session.js";
import { newSessionId, validateSessionId } from "../store/session.js";
import { projectRoot } from "../store/session-meta.js";
import { flagBool, flagCount, flagString, type ParsedArgs } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";
import type { ModelCheck } from "./model-check.js";
import { continuingLine, resumeFromFlags } from "./resume.js";
import { type ConsolePrinter, consolePrinter } from "./stream-print.js";
import { activity } from "./view/activity.js";
import { type LiveView, liveView } from "./view/live.js";
import { columnsNow, makeScreen, type Screen } from "./view/screen.js";
import { colorWanted } from "./view/style.js";

/**
 * `--policy` overrides tools.policy freely; with `--unattended` the result is clamped to
 * edge.max_job_policy and guarded becomes readonly. An unknown mode on the command line is
 * a usage error (in a file it falls back to guarded with a warning).
 */
export function resolveMode(args: ParsedArgs, config: Config): Result<PolicyMode> {
  const flag = flagString(args, "policy");
  let requested = config.tools.policy;
  if (flag !== undefined) {
    const parsed = parsePolicyMode(flag);
    if (!parsed)
      return { ok: false, error: `unknown policy "${flag}" (use readonly, guarded, unrestricted or yolo)` };
    requested = parsed;
  }
  if (flagBool(args, "unattended"))
    return { ok: true, value: effectiveUnattended(requested, config.edge.max_job_policy) };
  return { ok: true, value: requested };
}

export function resolveSessionId(args: ParsedArgs, kind: "cli" | "repl"): Result<string> {
  const flag = flagString(args, "session-id");
  if (flag === undefined) return { ok: true, value: newSessionId(kind) };
  return validateSessionId(flag);
}

export function resolveRetries(args: ParsedArgs): Result<number | undefined> {
  return flagCount(args, "retries");
}

/**
 * `--approval` > `tools.approval` > ask where a person can answer (docs/safety.md "Approval"). Where
 * nobody can (`canAsk` false: `-e`, `serve`, jobs, no terminal) it is always never: an
 * unattended run must not wait for an answer that cannot come. A bad flag is a usage error.
 */
export function resolveApproval(args: ParsedArgs, config: Config, canAsk: boolean): Result<ApprovalMode> {
  const flag = flagString(args, "approval");
  if (flag !== undefined && !APPROVAL_MODES.includes(flag as ApprovalMode))
    return { ok: false, error: `--approval must be ask or never, got "${flag}"` };
  if (!canAsk) return { ok: true, value: "never" };
  return { ok: true, value: (flag as ApprovalMode | undefined) ?? config.tools.approval ?? "ask" };
}

/**
 * A configured `backend.ca_file` that cannot be used, said before a run starts: a configuration
 * error (exit 2) like any other, not a backend failure found at the first request (exit 1).
 */
function caFileProblem(cli: Cli, config: Config): boolean {
  const ca = loadCaBundle(config.backend.ca_file);
  if (ca.ok) return false;
  cli.io.err(`scoot: configuration error: ${ca.error}\n`);
  return true;
}

/**
 * The loaded configuration plus the run flags (`--policy`, `--retries`) that every command
 * starting agent runs shares (`acp`, `serve`); errors are printed as `scoot <name>: …`.
 */
export async function loadAgentCommand(
  cli: Cli,
  name: string,
  /** Whether a person can answer approval questions (ACP: the editor); default: nobody can. */
  opts: { canAsk?: boolean } = {},
): Promise<
  | {
      ok: true;
      config: Config;
      paths: HomePaths;
      mode: PolicyMode;
      retries: number | undefined;
      approval: ApprovalMode;
    }
  | { ok: false; exitCode: number }
> {
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded;
  const { config, paths } = loaded.value;
  if (caFileProblem(cli, config)) return { ok: false, exitCode: EXIT.usage };
  const mode = resolveMode(cli.args, config);
  const retries = resolveRetries(cli.args);
  const approval = resolveApproval(cli.args, config, opts.canAsk ?? false);
  if (!mode.ok || !retries.ok || !approval.ok) {
    for (const r of [mode, retries, approval]) if (!r.ok) cli.io.err(`scoot ${name}: ${r.error}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  return { ok: true, config, paths, mode: mode.value, retries: retries.value, approval: approval.value };
}

export interface SessionStats {
  /** Prompt + completion tokens of the latest request: the context in use. */
  contextTokens: number;
  usage: Usage;
  goals: number;
}

export interface CliAgent {
  agent: AgentSession;
  trace: boolean;
  printer: ConsolePrinter;
  /** The live view, when stderr is a terminal (docs/keyboard.md "The live view"). */
  view: LiveView | undefined;
  /**
   * After a goal: ends the streamed answer, then `failure` (the line saying why a goal did not
   * end with an answer, if it did not), then the live view's usage line — only when the goal
   * ended with an answer or used tokens, so no "0 tokens" line stands before or after an error.
   */
  finish(r: RunResult, failure?: string): void;
  /**
   * The goal is being cancelled (docs/keyboard.md "Cancelling"): from now until `finish` nothing
   * more of it is printed, the spinner is gone, an answer line left open is ended. Returns
   * what was stopped, in words.
   */
  cancel(): string;
  /** The run's console: the live view's lines and its block (status lines, footer). */
  screen: Screen;
  /** Which project instructions (AGENTS.md) were read, as the session said when it opened. */
  instructions: string | undefined;
  /** What `/status` reports: tokens of the last request and of every goal so far. */
  stats: SessionStats;
  /** Whether a tool call waits for the person (docs/keyboard.md "The REPL": `/status`). */
  approval: string;
  /** `<home>/state` (the REPL history lives there). */
  stateDir: string;
  /** The conversation `--resume`/`--continue` brought back, if any. */
  resumed: Message[] | undefined;
  /** `<home>/state/sessions`. */
  sessionsDir: string;
  /** The home's layout (undo and diff read the checkpoints under it). */
  paths: HomePaths;
  /** The loaded configuration (`/status` lists its `[[tools.rules]]`). */
  config: Config;
  /** Opens another session with the same configuration and flags (REPL `/new`, `/resume`). */
  reopen(target: { resume?: ResumeTarget }): Promise<Result<CliAgent>>;
  /** Whether the model server lists a model of this name (the REPL's `/model`). */
  checkModel(name: string): Promise<ModelCheck>;
}

/**
 * Loads the configuration and opens an agent session for `-e` or the REPL: mode, session
 * id (or the session `--resume`/`--continue` name) and retries from the flags, warnings to
 * stderr, the console printer (streamed answer, thought, `--trace`).
 * Returns the exit code instead when something is wrong (usage or configuration: 2).
 */
export async function openCliAgent(
  cli: Cli,
  kind: "cli" | "repl",
  show: { answers: boolean; thoughts: boolean },
  /** The person's approver (the REPL on a terminal); without one nothing is asked. */
  approver?: Approver,
  /** An approved plan every run of the session is bound to (`--execute-plan`). */
  plan?: ApprovedPlan,
): Promise<({ ok: true } & CliAgent) | { ok: false; exitCode: number }> {
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded;
  const { config, paths } = loaded.value;
  if (caFileProblem(cli, config)) return { ok: false, exitCode: EXIT.usage };
  const mode = resolveMode(cli.args, config);
  const sessionId = resolveSessionId(cli.args, kind);
  const retries = resolveRetries(cli.args);
  const resume = resumeFromFlags(cli.args, paths.sessions, cli.cwd);
  const approval = resolveApproval(cli.args, config, approver !== undefined);
  if (approval.ok && !approver && flagString(cli.args, "approval") === "ask") {
    cli.io.err(
      `scoot: warning: --approval ask has no effect here: ${kind === "cli" ? "-e runs unattended" : "there is no terminal to answer on"}, so nothing waits for approval (the policy gate still decides)\n`,
    );
  }
  if (!mode.ok || !sessionId.ok || !retries.ok || !resume.ok || !approval.ok) {
    for (const r of [mode, sessionId, retries, resume, approval])
      if (!r.ok) cli.io.err(`scoot: ${r.error}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  const trace = flagBool(cli.args, "trace");
  // The live view draws on a terminal's stderr; --trace prints its own plain lines instead.
  // The terminal is written to directly only when the process's own streams are the output
  // (a test running the CLI in process passes writers of its own).
  const own = cli.io.processStreams === true;
  const errTty = own && Boolean(process.stderr.isTTY);
  const outTty = own && Boolean(process.stdout.isTTY);
  const live = !trace && errTty;
  const color = live && colorWanted(true, cli.env, flagBool(cli.args, "no-color"));

  const open = async (id: string, target: ResumeTarget | undefined): Promise<Result<CliAgent>> => {
    for (const w of target?.warnings ?? []) cli.io.err(`scoot: warning: ${w}\n`);
    const screen = makeScreen(cli.io, {
      ...(errTty ? { err: (text: string) => void process.stderr.write(text) } : {}),
      ...(outTty ? { out: (text: string) => void process.stdout.write(text) } : {}),
      live,
      columns: () => (errTty ? columnsNow(process.stderr) : undefined) || process.stdout.columns,
    });
    const printer = consolePrinter(screen, { ...show, thoughts: show.thoughts || trace, trace });
    const view = live ? liveView(screen, { color, cwd: cli.cwd }) : undefined;
    const doing = activity();
    // Set by a cancel: what the goal still emits until it ends is not shown.
    let muted = false;
    let instructions: string | undefined;
    const stats: SessionStats = {
      contextTokens: 0,
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      goals: 0,
    };
    const opened = await openAgentSession({
      config,
      paths,
      cwd: cli.cwd,
      env: cli.env,
      sessionId: id,
      mode: mode.value,
      retries: retries.value,
      unattended: flagBool(cli.args, "unattended"),
      // Through the screen: a warning during a run must not land under the live view's block.
      onWarning: (w) => screen.err(`scoot: warning: ${w}\n`),
      onEvent: (e) => {
        if (e.type === "reply" && e.usage)
          stats.contextTokens = e.usage.prompt_tokens + e.usage.completion_tokens;
        if (e.type === "project") instructions = e.message;
        doing.listener(e);
        if (muted) return;
        view?.listener(e);
        printer.listener(e);
      },
      ...(target ? { resume: target.messages } : {}),
      ...(approver && approval.value === "ask" ? { approver } : {}),
      ...(plan ? { plan } : {}),
    });
    if (!opened.ok) return opened;
    return {
      ok: true,
      value: {
        agent: opened.value,
        trace,
        printer,
        view,
        stats,
        approval: approver && approval.value === "ask" ? "ask" : "never",
        screen,
        instructions,
        cancel() {
          const what = doing.describe();
          muted = true;
          view?.interrupt();
          printer.interrupt();
          return what;
        },
        stateDir: paths.state,
        resumed: target?.messages,
        finish(r, failure) {
          stats.goals += 1;
          stats.usage = {
            prompt_tokens: stats.usage.prompt_tokens + r.usage.prompt_tokens,
            completion_tokens: stats.usage.completion_tokens + r.usage.completion_tokens,
            total_tokens: stats.usage.total_tokens + r.usage.total_tokens,
          };
          muted = false;
          printer.finish(r);
          if (failure) screen.err(failure);
          view?.finish(r, opened.value.contextWindow());
        },
        sessionsDir: paths.sessions,
        paths,
        config,
        reopen: (t) => open(t.resume?.sessionId ?? newSessionId(kind), t.resume),
        async checkModel(name) {
          // The session resolved the same token when it opened (a token command runs once per process).
          const token = resolveToken(config, paths.configDir, cli.env, projectRoot(cli.cwd));
          const { checkModelName } = await import("./model-check.js");
          return checkModelName(config.backend, token.token, name);
        },
      },
    };
  };
  // Which session `--continue` / `--resume` picked, said before the run adds to it.
  const continuing = resume.value ? continuingLine(resume.value, paths.sessions, Date.now()) : undefined;
  const first = await open(resume.value?.sessionId ?? sessionId.value, resume.value);
  if (!first.ok) {
    cli.io.err(`scoot: ${first.error}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  if (continuing) cli.io.err(`${continuing}\n`);
  return { ok: true, ...first.value };
}
