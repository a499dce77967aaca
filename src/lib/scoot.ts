/**
 * The library API (docs/editors.md "Library API"): `createScoot(options)` loads the same
 * configuration as the CLI (home, config file, `SCOOT_*` environment), and each `run` goes
 * through `openAgentSession` — the same policy gate, audit log, transcript and bash sandbox
 * as `scoot -e`. Nothing is written to stdout; warnings go to `onWarning` (stderr when not
 * given). An `AbortSignal` stops a run like Ctrl-C: the running tool's process group is
 * killed and the run is audited as interrupted.
 */
import fs from "node:fs";
import path from "node:path";
import { type AnswerSchema, compileAnswerSchema, readAnswerSchemaFile } from "../agent/answer-schema.js";
import { checkRules, rulesProblemText } from "../agent/approval-rules.js";
import type { AgentEvent } from "../agent/events.js";
import type { RunStop } from "../agent/run-stop.js";
import { type AgentSession, openAgentSession } from "../agent/session-runner.js";
import { ensureHome, resolveHomePaths } from "../config/home.js";
import { loadConfig } from "../config/load.js";
import type { PolicyMode } from "../config/schema.js";
import { registerSecretEnv } from "../core/redact.js";
import { scootVersion } from "../core/version.js";
import { parsePolicyMode } from "../policy/modes.js";
import { loadResumeTarget } from "../store/resume-target.js";
import { validateSessionId } from "../store/session.js";

export type { AgentEvent } from "../agent/events.js";
export type { RunStop } from "../agent/run-stop.js";
export type { PolicyMode } from "../config/schema.js";

/** What `policy` accepts: a policy mode, or `yolo` (the alias of `unrestricted`). */
export type PolicyChoice = PolicyMode | "yolo";

export interface ScootOptions {
  /** The runtime home (like `--scoot-home`); default `SCOOT_HOME`, then `~/.scoot`. */
  home?: string;
  /** A config file to use instead of the home's `config.toml` / `config.json`. */
  configFile?: string;
  /** The environment for `SCOOT_*` overrides, the token and child processes; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The project root runs work in; default `process.cwd()` when a run starts. */
  cwd?: string;
  /**
   * Overrides `tools.policy`: readonly, guarded, unrestricted (or its alias yolo). A closed set,
   * so a typo fails to compile; an unknown string from JavaScript still throws.
   */
  policy?: PolicyChoice;
  /** Configuration and run warnings; default: written to stderr. */
  onWarning?: (message: string) => void;
}

export interface RunOptions {
  /** Run in this session (a new `lib-…` id when absent). Runs on one id share one conversation. */
  sessionId?: string;
  /** Continue the stored session `sessionId` (or the id given here) from its transcript. */
  resume?: boolean | string;
  /** Aborting stops the run like Ctrl-C; it resolves with status "interrupted". */
  signal?: AbortSignal;
  /** Every agent event (the trace) as it happens. */
  onEvent?: (e: AgentEvent) => void;
  /**
   * The final answer must be JSON valid against this JSON Schema (like `--output-schema`): a
   * schema object, or the path of a JSON file holding one (relative to the project root).
   * Checked before the run starts (run() throws naming the problem); the checked value is
   * in `data`. Docs: docs/editors.md "Library API".
   */
  outputSchema?: object | string;
}

export interface RunOutcome {
  /** The final answer; undefined unless status is "final". With `outputSchema`: its JSON text. */
  answer: string | undefined;
  /** With `outputSchema`: the final answer parsed, valid against the schema; else undefined. */
  data?: unknown;
  sessionId: string;
  runId: string;
  turns: number;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  status: "final" | "plan" | "failed" | "interrupted";
  /** Why the run stopped, to match on (docs/editors.md "Library API"); `status` is derived from it. */
  stop: RunStop;
  /** Why the run failed or stopped (the CLI's one-line message), for people. */
  error?: string;
}

export interface Scoot {
  /** The policy mode runs use. */
  readonly policy: PolicyMode;
  run(goal: string, options?: RunOptions): Promise<RunOutcome>;
  /**
   * Cancels running goals (like Ctrl-C) and waits for them to stop, then releases every
   * session and MCP connection; later runs are refused.
   */
  close(): Promise<void>;
}

let libCounter = 0;
function newLibSessionId(): string {
  libCounter += 1;
  return `lib-${Date.now()}-${process.pid}-${libCounter}`;
}

/** The package's version (from its package.json); "unknown" when that cannot be read. */
export const version: string = scootVersion();

/** The project root runs work in, checked now: a missing one would only fail later, inside a tool. */
function checkedCwd(cwd: string): string {
  const abs = path.resolve(cwd);
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : (e as Error).message;
    throw new Error(`scoot: cwd ${abs} ${why}: pass an existing directory as the project root (cwd)`);
  }
  if (!st.isDirectory())
    throw new Error(`scoot: cwd ${abs} is not a directory: pass the project's directory (cwd)`);
  return abs;
}

/** `outputSchema` as given (an object or a file's path), checked and compiled; throws naming the problem. */
function loadOutputSchema(
  given: object | string | undefined,
  cwd: string | undefined,
): AnswerSchema | undefined {
  if (given === undefined) return undefined;
  const r =
    typeof given === "string"
      ? readAnswerSchemaFile(given, cwd ?? process.cwd())
      : compileAnswerSchema(given, "the outputSchema");
  if (!r.ok) throw new Error(`scoot: outputSchema: ${r.error}`);
  return r.value;
}

/**
 * Loads the configuration now; throws an Error naming the problem when it cannot be used.
 * Everything is checked before the home is created, so a refused call leaves no trace.
 */
export function createScoot(options: ScootOptions = {}): Scoot {
  const env = options.env ?? process.env;
  const warn = options.onWarning ?? ((m: string) => process.stderr.write(`scoot: warning: ${m}\n`));
  const paths = resolveHomePaths(options.home, env);
  const fixedCwd = options.cwd === undefined ? undefined : checkedCwd(options.cwd);
  const loaded = loadConfig(paths.configDir, env, options.configFile);
  if (!loaded.ok)
    throw new Error(loaded.error.problems.map((p) => `scoot: configuration error: ${p}`).join("\n"));
  for (const w of loaded.value.warnings) warn(w);
  const config = loaded.value.config;
  const rules = checkRules(config.tools.rules);
  if (rules.problems.length > 0)
    throw new Error(`scoot: configuration error: ${rulesProblemText(rules.problems)}`);
  let mode = config.tools.policy;
  if (options.policy !== undefined) {
    const parsed = parsePolicyMode(options.policy);
    if (!parsed)
      throw new Error(
        `scoot: unknown policy "${options.policy}" (use readonly, guarded, unrestricted or yolo)`,
      );
    mode = parsed;
  }
  registerSecretEnv(env);
  ensureHome(paths);

  interface Open {
    agent: AgentSession;
    listener?: (e: AgentEvent) => void;
    busy: boolean;
    /** The running goal: its controller and its end. */
    current?: { controller: AbortController; done: Promise<unknown> };
  }
  const sessions = new Map<string, Open>();
  /**
   * Session ids with a goal starting or running. Claimed before the first await, so a second
   * run() on the same id is refused at once instead of interleaving one transcript.
   */
  const claimed = new Set<string>();
  let closed = false;

  const open = async (id: string, resume: boolean): Promise<Open> => {
    const existing = sessions.get(id);
    if (existing && !resume) return existing;
    if (existing) {
      if (existing.busy) throw new Error(`scoot: session ${id} is running a goal`);
      sessions.delete(id);
      await existing.agent.close();
    }
    let messages: Parameters<typeof openAgentSession>[0]["resume"];
    if (resume) {
      const target = loadResumeTarget(paths.sessions, id);
      if (!target.ok) throw new Error(`scoot: ${target.error}`);
      for (const w of target.value.warnings) warn(w);
      messages = target.value.messages;
    }
    const state: Partial<Open> = { busy: false };
    const opened = await openAgentSession({
      config,
      paths,
      cwd: fixedCwd ?? checkedCwd(process.cwd()),
      env,
      sessionId: id,
      mode,
      onWarning: warn,
      onEvent: (e) => state.listener?.(e),
      ...(messages ? { resume: messages } : {}),
    });
    if (!opened.ok) throw new Error(`scoot: ${opened.error}`);
    state.agent = opened.value;
    sessions.set(id, state as Open);
    return state as Open;
  };

  return {
    policy: mode,
    async run(goal, runOptions = {}) {
      if (closed) throw new Error("scoot: this instance is closed");
      if (typeof goal !== "string" || goal.trim() === "")
        throw new Error("scoot: run needs a non-empty goal");
      const resumeId = typeof runOptions.resume === "string" ? runOptions.resume : undefined;
      if (resumeId !== undefined && runOptions.sessionId !== undefined && resumeId !== runOptions.sessionId)
        throw new Error("scoot: resume names another session than sessionId");
      const answerSchema = loadOutputSchema(runOptions.outputSchema, fixedCwd);
      const id = resumeId ?? runOptions.sessionId ?? newLibSessionId();
      const valid = validateSessionId(id);
      if (!valid.ok) throw new Error(`scoot: ${valid.error}`);
      if (runOptions.resume === true && runOptions.sessionId === undefined)
        throw new Error("scoot: resume: true needs the sessionId to continue");
      if (claimed.has(id))
        throw new Error(
          `scoot: session ${id} is running a goal (one at a time per session; await the first run)`,
        );
      claimed.add(id);
      let s: Open;
      try {
        s = await open(id, runOptions.resume !== undefined && runOptions.resume !== false);
      } catch (e) {
        claimed.delete(id);
        throw e;
      }
      s.busy = true;
      let runId = "";
      s.listener = (e) => {
        if (e.type === "run") runId = e.runId;
        runOptions.onEvent?.(e);
      };
      // The caller's signal, or close(), stops the run.
      const controller = new AbortController();
      const outer = runOptions.signal;
      const forward = () => controller.abort(outer?.reason ?? new Error("interrupted"));
      if (outer?.aborted) forward();
      else outer?.addEventListener("abort", forward, { once: true });
      const running = s.agent.run(goal, controller.signal, answerSchema ? { answerSchema } : {});
      s.current = { controller, done: running.catch(() => undefined) };
      try {
        const r = await running;
        return {
          answer: r.status === "final" ? r.answer : undefined,
          ...(answerSchema && r.status === "final" ? { data: r.data } : {}),
          sessionId: id,
          runId,
          turns: r.turns,
          usage: { ...r.usage },
          status: r.status,
          stop: r.stop,
          ...(r.error ? { error: r.error } : {}),
        };
      } finally {
        outer?.removeEventListener("abort", forward);
        s.listener = undefined;
        s.current = undefined;
        s.busy = false;
        claimed.delete(id);
      }
    },
    async close() {
      closed = true;
      const all = [...sessions.values()];
      sessions.clear();
      for (const s of all) s.current?.controller.abort(new Error("interrupted"));
      await Promise.all(all.map((s) => s.current?.done));
      await Promise.all(all.map((s) => s.agent.close()));
    },
  };
}
