/**
 * Builds everything one agent session needs from the loaded configuration — mode, token,
 * backend, audit, transcript, gate settings, skills, MCP — and runs goals in it. `-e`, the
 * REPL, scheduled jobs and `serve` all start runs through here.
 */
import fs from "node:fs";
import os from "node:os";
import { createBackend } from "../backend/client.js";
import type { BackendEvent } from "../backend/types.js";
import { type HomePaths, homeWriteProblem } from "../config/home.js";
import { validateMcpServers } from "../config/mcp-servers.js";
import type { Config, PolicyMode } from "../config/schema.js";
import { effectiveToolTimeout } from "../config/schema.js";
import { resolveToken, tokenFilePath } from "../config/secrets.js";
import { removeStaleTemps } from "../core/stale-temps.js";
import { type RedactingListener, redactStreamedEvents } from "../core/stream-redact.js";
import type { Result } from "../core/types.js";
import type { McpCatalog } from "../mcp/catalog.js";
import { mcpPromptSection } from "../mcp/prompt.js";
import { modeAtProjectRoot, refuseProjectRoot } from "../policy/project-root.js";
import { buildGateSettings } from "../policy/settings.js";
import type { GateSettings } from "../policy/types.js";
import { discoverSkills } from "../skills/discover.js";
import { skillsPromptSection } from "../skills/prompt.js";
import { makeSkillRegistry } from "../skills/registry.js";
import { CHECKPOINT_LIMITS, openCheckpointWriter } from "../store/checkpoints.js";
import { guardSession, openHomeAudit } from "../store/guarded-stores.js";
import { claimSession, type Message, openSession } from "../store/session.js";
import { projectRoot, recordSessionMeta } from "../store/session-meta.js";
import { type Plan, planSha256 } from "../tools/plan-shape.js";
import { enabledTools } from "../tools/registry.js";
import type { AnyTool, ToolServices } from "../tools/types.js";
import type { AnswerSchema } from "./answer-schema.js";
import { type ApprovalMemory, type ApprovalMode, type Approver, approvalMemory } from "./approval.js";
import { compactHistory, historyBytes } from "./compact.js";
import type { ContextFit } from "./context-fit.js";
import { openContextFit } from "./context-setup.js";
import type { AgentEvent, Listener } from "./events.js";
import { NOTE_PREFIX, type UndoneFiles, undoNote } from "./history.js";
import { type RunResult, runGoal } from "./loop.js";
import {
  type GuidanceSnapshot,
  instructionsStatus,
  type NestedInstructions,
  nestedInstructions,
} from "./nested-instructions.js";
import type { ApprovedPlan } from "./plan-file.js";
import { planScope } from "./plan-narrow.js";
import { describeLoaded, loadProjectInstructions, type ProjectInstructions } from "./project-instructions.js";
import { alternating, appendTurn, buildSystemPrompt } from "./prompt.js";
import { gateUndoGuard, type UndoGuard } from "./undo-report.js";

export interface AgentSessionOptions {
  config: Config;
  paths: HomePaths;
  cwd: string;
  env: NodeJS.ProcessEnv;
  sessionId: string;
  mode: PolicyMode;
  /** CLI --retries. */
  retries?: number;
  onEvent?: (e: AgentEvent) => void;
  /** `--unattended` runs and scheduled jobs: bash is sandboxed in every mode that allows it. */
  unattended?: boolean;
  /** A scheduled job: AGENTS.md is not read unless agent.project_instructions says so. */
  job?: boolean;
  /** Problems worth a warning at run start (bad MCP entries, invalid skills). */
  onWarning?: (message: string) => void;
  /**
   * `--resume` / `--continue` (docs/sessions.md "Resuming a session"): the session's transcript, all
   * its parts. The conversation continues from it and the first run's audit names it.
   */
  resume?: Message[];
  /** An editor's open buffers (ACP): file_read reads through them. */
  editorBuffers?: ToolServices["editorBuffers"];
  /**
   * Who approves calls with an effect (docs/safety.md "Approval"): the keyboard, an editor. Absent:
   * nobody is asked — `tools.approval = "never"`, or no person can answer.
   */
  approver?: Approver;
  /** The session's "always" answers when they outlive this process (ACP stores them with the session). */
  approvalMemory?: ApprovalMemory;
  /** Every run of this session is bound to this approved plan (docs/safety.md "Plans as contracts"). */
  plan?: ApprovedPlan;
  /**
   * The same session opened again (an editor's mode change): which AGENTS.md files below the
   * root may be guidance stays as its start found it (docs/context.md "Which files below the
   * root are guidance").
   */
  guidance?: GuidanceSnapshot;
}

export interface AgentSession {
  sessionId: string;
  mode: PolicyMode;
  /** Whether calls with an effect wait for a person in this session. */
  approval: ApprovalMode;
  /**
   * Runs one goal. Each call is one run with its own run id; `how` says what kind of run.
   */
  run(goal: string, signal: AbortSignal, how?: RunHow): Promise<RunResult>;
  /** The model's context window in tokens once a run has discovered it (undefined: unknown). */
  contextWindow(): number | undefined;
  /** The model the next goal is sent to. */
  model(): string;
  /** The next goals go to this model (the REPL's `/model`); its window is discovered again. */
  setModel(name: string): void;
  /** A new context in the same session file (the REPL's `/clear`): only the system prompt stays. */
  clear(): void;
  /** Compacts the conversation now (the REPL's `/compact`); undefined when there is nothing to. */
  compact(): Result<{ removed: number; beforeBytes: number; afterBytes: number } | undefined, string>;
  /** Bytes of the conversation kept for the next goal. */
  historyBytes(): number;
  /** Which AGENTS.md files below the root may be guidance, as the session's start found them. */
  guidance(): GuidanceSnapshot | undefined;
  /**
   * The project instructions (AGENTS.md) in words for `/status`: the budget, what was read,
   * clipped or left out, and the files added since on first touch.
   */
  instructions(): string;
  /** The gate of this session (in `mode`, default its own) and its audit log, for `/undo`. */
  undoGuard(mode?: PolicyMode): UndoGuard;
  /**
   * Tells the model something the person did outside its steps (docs/sessions.md "What the
   * model is told"): `text` (without the `[scoot: …]` frame, which is added) goes into the
   * transcript now and reaches the model with the next goal, in the same user message. An
   * error says the transcript could not be written (the next goal still carries the note).
   */
  noteForModel(text: string): Result<void, string>;
  /** After `/undo`: the next goal's request names the files put back (`undoLastRun`'s answer). */
  noteUndo(undone: UndoneFiles): Result<void, string>;
  /**
   * A plan's review that did not run it (the approval of a run is audited by that run): audited
   * with the plan's SHA-256 — `{ notRun: why }` (dropped, refused, nobody to ask) is also told
   * to the model, so the next goal does not take the plan for approved; "revise" precedes a new
   * planning request. An error says the record could not be written.
   */
  planReviewed(plan: Plan, via: "repl" | "acp", outcome: { notRun: string } | "revise"): Result<void, string>;
  close(): Promise<void>;
}

export interface RunHow {
  /**
   * A planning run (docs/safety.md "Plan mode"): the gate is readonly whatever the session's
   * policy, the `plan` action is offered, and the run ends with the plan (stop `plan`) without
   * executing it.
   */
  plan?: boolean;
  /** The final answer must be JSON valid against it (docs/commands.md "Answers in a schema"). */
  answerSchema?: AnswerSchema;
  /**
   * A plan the person approved in this session, carried out by this run (the session's own
   * `--execute-plan` plan, if any, gives way to it).
   */
  execute?: ApprovedPlan;
}

export type Opened = { ok: true; value: AgentSession } | { ok: false; error: string };

/** The session transcript could not be started: nothing was recorded, so nothing runs. */
function failedBeforeStart(error: string): RunResult {
  return {
    stop: "not_recorded",
    status: "failed",
    error,
    turns: 0,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    toolCalls: 0,
    denials: 0,
    refusals: 0,
    errors: 1,
    wallMs: 0,
  };
}

/** AGENTS.md for this session: the prompt section, the trace line, and what `/status` reads. */
interface SessionInstructions {
  section: string;
  message: string;
  /** Undefined when project instructions are off (`message` says why). */
  found?: ProjectInstructions;
}

function projectInstructionsFor(config: Config, cwd: string, job: boolean): SessionInstructions {
  const setting = config.agent.project_instructions;
  const on = setting ?? !job;
  if (!on) {
    const why =
      setting === false
        ? "agent.project_instructions = false"
        : "a scheduled job (agent.project_instructions unset)";
    return { section: "", message: `off: ${why}` };
  }
  const found = loadProjectInstructions(cwd, config.agent.project_instructions_max_bytes);
  return { section: found.section, message: describeLoaded(found), found };
}

/** `/compact` aims at this share of the conversation's current size. */
export const MANUAL_COMPACT_SHARE = 0.5;

let runCounter = 0;
function newRunId(): string {
  runCounter += 1;
  return `run-${Date.now().toString(36)}-${process.pid}-${runCounter}`;
}

/** The environment tools' child processes get: the backend token never reaches one. */
function childEnvFor(config: Config, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const childEnv: NodeJS.ProcessEnv = { ...env };
  if (config.backend.api_key_env) delete childEnv[config.backend.api_key_env];
  return childEnv;
}

/** `[[mcp.servers]]` validated and the skills discovered, once; their problems become warnings. */
function loadExtensions(opts: AgentSessionOptions) {
  const { config, cwd, paths } = opts;
  const mcp = validateMcpServers(config.mcp.servers);
  for (const p of mcp.problems) opts.onWarning?.(`mcp: ${p}`);
  const discovery = discoverSkills({
    config,
    cwd,
    homeDir: os.homedir(),
    scootHome: paths.root,
    configDir: paths.configDir,
  });
  for (const p of discovery.problems) opts.onWarning?.(`skill: ${p.file}: ${p.message}`);
  return { mcpServers: mcp.servers, skills: discovery.skills, registry: makeSkillRegistry(discovery) };
}
type Extensions = ReturnType<typeof loadExtensions>;

/**
 * The services of a run a plan binds: bash's sandbox holds the plan too (docs/safety.md
 * "Plan mode"), writing only its files and reaching the network only when it names a host.
 */
function boundServices(services: ToolServices, plan: Plan, root: string): ToolServices {
  if (!services.sandbox) return services;
  const scope = planScope(plan, root);
  return {
    ...services,
    sandbox: { ...services.sandbox, plan: { files: [...scope.files], hosts: [...scope.hosts] } },
  };
}

/** What tools reach beyond their input: skills, the sandbox's settings, the editor, MCP (later). */
function servicesFor(
  opts: AgentSessionOptions,
  ext: Extensions,
  onEvent: Listener | undefined,
): ToolServices {
  const { config, paths } = opts;
  return {
    skills: ext.registry,
    sandbox: {
      scootHome: paths.root,
      configDir: paths.configDir,
      tokenFile: tokenFilePath(config, paths.configDir),
      skillDirs: ext.skills.map((s) => s.dir),
      unattended: opts.unattended ?? false,
      notify: (message) => onEvent?.({ type: "sandbox", message }),
    },
    ...(opts.editorBuffers ? { editorBuffers: opts.editorBuffers } : {}),
  };
}

/**
 * The MCP pool when servers are configured (loaded only then); it becomes `services.mcp`. Outside
 * readonly (where every mcp_call is denied and no server is started just to describe it) the
 * catalog keeps each server's tool list true for the session (docs/mcp.md "Tool lists that stay
 * true"): the pool tells it when a server connects or announces a change, and asks it to check
 * each call's arguments against the newest list.
 */
async function startMcp(
  opts: AgentSessionOptions,
  ext: Extensions,
  services: ToolServices,
  childEnv: NodeJS.ProcessEnv,
  onEvent: Listener | undefined,
): Promise<{ pool: { close(): Promise<void> }; catalog: McpCatalog | undefined } | undefined> {
  if (ext.mcpServers.length === 0) return undefined;
  const { createMcpPool } = await import("../mcp/pool.js");
  let catalog: McpCatalog | undefined;
  const pool = createMcpPool(ext.mcpServers, {
    caFile: opts.config.backend.ca_file,
    env: childEnv,
    timeoutMs: effectiveToolTimeout(opts.config),
    projectRoot: projectRoot(opts.cwd),
    scootHome: opts.paths.root,
    bwrapPath: opts.config.tools.sandbox_bwrap_path,
    onWarning: (message) => opts.onWarning?.(`mcp: ${message}`),
    onToolsStale: (server, why) => catalog?.stale(server, why),
    checkCall: async (server, tool, args) => catalog?.checkCall(server, tool, args),
  });
  services.mcp = pool;
  if (opts.mode === "readonly") return { pool, catalog };
  const { createMcpCatalog } = await import("../mcp/catalog.js");
  catalog = createMcpCatalog({
    servers: ext.mcpServers,
    lister: pool,
    stateDir: opts.paths.state,
    say: (message) => onEvent?.({ type: "mcp", message }),
  });
  await catalog.load();
  return { pool, catalog };
}

/** The enabled tools, with `mcp_call` checking each MCP tool's schema against the catalog's lists. */
async function toolsFor(
  ext: Extensions,
  catalog: McpCatalog | undefined,
  planning = false,
): Promise<ReadonlyMap<string, AnyTool>> {
  const tools = enabledTools({
    hasMcp: ext.mcpServers.length > 0,
    hasSkills: ext.skills.length > 0,
    planning,
  });
  if (!catalog) return tools;
  const { mcpCallWithSchemas } = await import("../tools/mcp_call.js");
  const checked = new Map(tools);
  const withSchemas = mcpCallWithSchemas(catalog.tools);
  checked.set(withSchemas.name, withSchemas as unknown as AnyTool);
  return checked;
}

/**
 * The session's records: the audit log (its key loaded once), the sessions directory (made
 * once), the claim on the session id, the transcript and the undo checkpoints.
 */
function openStores(opts: AgentSessionOptions) {
  const { paths, sessionId } = opts;
  // Guarded: no write through a symlink or special file planted in the home (test/store/home-files.test.ts).
  const opened = openHomeAudit(opts.config, paths);
  if (!opened.ok) return opened;
  const audit = opened.value;
  fs.mkdirSync(paths.sessions, { recursive: true, mode: 0o700 });
  // One live process per session id (docs/sessions.md "Sessions and audit"): a second one is refused, not interleaved.
  const claim = claimSession(paths.sessions, sessionId);
  if (!claim.ok) return claim;
  const session = guardSession(openSession(paths.sessions, sessionId));
  const checkpoints = openCheckpointWriter(
    paths.state,
    sessionId,
    paths.sessions,
    CHECKPOINT_LIMITS,
    projectRoot(opts.cwd),
  );
  return { ok: true as const, value: { audit, claim: claim.value, session, checkpoints } };
}
type Stores = Extract<ReturnType<typeof openStores>, { ok: true }>["value"];

/** openStores, with a home that refuses writes (full, read-only) said in one line naming the fix. */
function openStoresOrSay(opts: AgentSessionOptions): ReturnType<typeof openStores> {
  // Temp files of writers killed mid-write (the audit's rotation sidecars, caches) go first.
  for (const dir of [opts.paths.logs, opts.paths.state]) removeStaleTemps(dir);
  try {
    return openStores(opts);
  } catch (e) {
    const line = homeWriteProblem(e, opts.paths.root);
    if (line) return { ok: false, error: line };
    throw e;
  }
}

export async function openAgentSession(given: AgentSessionOptions): Promise<Opened> {
  const refused = refuseProjectRoot(given.cwd, {
    mode: given.mode,
    scootHome: given.paths.root,
    configDir: given.paths.configDir,
    userHome: os.homedir(),
  });
  if (refused) return { ok: false, error: refused };
  const atRoot = modeAtProjectRoot(given.cwd, { mode: given.mode, userHome: os.homedir() });
  if (atRoot.notice) given.onWarning?.(atRoot.notice);
  const opts: AgentSessionOptions = { ...given, mode: atRoot.mode };
  const { config, paths, cwd, env } = opts;
  // The one point every subscriber's events pass (terminal, REPL, ACP, serve, the library):
  // streamed text is redacted and safely cut here, so no subscriber can see it raw.
  const onEvent = opts.onEvent ? redactStreamedEvents(opts.onEvent) : undefined;
  const token = resolveToken(config, paths.configDir, env, projectRoot(cwd));
  if (token.error) return { ok: false, error: token.error };
  const childEnv = childEnvFor(config, env);
  const ext = loadExtensions(opts);
  const services = servicesFor(opts, ext, onEvent);
  const mcp = await startMcp(opts, ext, services, childEnv, onEvent);
  const pool = mcp?.pool;
  const catalog = mcp?.catalog;
  const tools = await toolsFor(ext, catalog);
  const planTools = await toolsFor(ext, catalog, true);
  const gateSettings = buildGateSettings(config, cwd, {
    mode: opts.mode,
    tokenFile: tokenFilePath(config, paths.configDir),
    scootHome: paths.root,
    configDir: paths.configDir,
    skillDirs: ext.skills.map((s) => s.dir),
    mcpServers: ext.mcpServers,
    env,
  });
  if (atRoot.readonlyFix) gateSettings.readonlyFix = atRoot.readonlyFix;
  services.identities = gateSettings;
  // bash's sandbox and glob hide the places the gate refuses, resolved once here.
  if (services.sandbox) services.sandbox.places = gateSettings;
  const stores = openStoresOrSay(opts);
  if (!stores.ok) {
    await pool?.close();
    return { ok: false, error: stores.error };
  }
  const project = projectInstructionsFor(config, cwd, opts.job === true);
  onEvent?.({ type: "project", message: project.message });
  const nested = project.found
    ? nestedInstructions({
        dirs: project.found.dirs,
        settings: gateSettings,
        cwd,
        ...(opts.resume ? { resumed: opts.resume } : {}),
        ...(opts.guidance ? { snapshot: opts.guidance } : {}),
      })
    : undefined;
  const promptWith = (listed: McpCatalog["tools"] | undefined, planning = false) =>
    buildSystemPrompt({
      tools: [...(planning ? planTools : tools).values()],
      // A planning run's gate is readonly, and its prompt says so.
      mode: planning ? "readonly" : opts.mode,
      ...(planning ? { planning } : {}),
      cwd,
      skillsSection: ext.skills.length > 0 ? skillsPromptSection(ext.skills) : undefined,
      mcpSection: mcpPromptSection(ext.mcpServers, listed) || undefined,
      projectSection: project.section || undefined,
    });
  const systemPrompt = systemPromptOf(catalog, (listed) => promptWith(listed));
  const planPrompt = systemPromptOf(catalog, (listed) => promptWith(listed, true));

  return {
    ok: true,
    value: agentSession({
      opts,
      onEvent,
      token: token.token,
      tools,
      planTools,
      services,
      childEnv,
      gateSettings,
      systemPrompt,
      planPrompt,
      stores: stores.value,
      pool,
      project,
      nested,
    }),
  };
}

/**
 * The system prompt as the MCP tool lists stand now (docs/mcp.md "Tool lists that stay true"):
 * rebuilt only when the catalog's version moved. `fresh` first lets the catalog re-read aged
 * lists and waits for re-lists under way, so a request never describes a list already replaced.
 */
interface SystemPrompt {
  now(): string;
  fresh?: (signal: AbortSignal) => Promise<string>;
}

function systemPromptOf(
  catalog: McpCatalog | undefined,
  build: (listed: McpCatalog["tools"] | undefined) => string,
): SystemPrompt {
  if (!catalog) {
    const fixed = build(undefined);
    return { now: () => fixed };
  }
  let built = { version: catalog.version(), text: build(catalog.tools) };
  const now = () => {
    if (built.version !== catalog.version())
      built = { version: catalog.version(), text: build(catalog.tools) };
    return built.text;
  };
  return {
    now,
    fresh: async (signal) => {
      await catalog.settle(signal);
      return now();
    },
  };
}

/** What one session runs with, wired once by openAgentSession. */
interface Wired {
  opts: AgentSessionOptions;
  onEvent: RedactingListener<AgentEvent> | undefined;
  token: string | undefined;
  tools: ReadonlyMap<string, AnyTool>;
  /** The tools of a planning run: `tools` and the `plan` action. */
  planTools: ReadonlyMap<string, AnyTool>;
  services: ToolServices;
  childEnv: NodeJS.ProcessEnv;
  gateSettings: GateSettings;
  systemPrompt: SystemPrompt;
  /** The system prompt of a planning run (readonly, the plan action and how to plan). */
  planPrompt: SystemPrompt;
  stores: Stores;
  pool: { close(): Promise<void> } | undefined;
  project: SessionInstructions;
  /** AGENTS.md files below the root, added on first touch; undefined when instructions are off. */
  nested: NestedInstructions | undefined;
}

/** The session's conversation and its goals, over the wired parts. */
function agentSession(w: Wired): AgentSession {
  const { opts, onEvent, tools, services, childEnv, gateSettings, systemPrompt, pool } = w;
  const { config, paths, cwd } = opts;
  const { audit, claim, session, checkpoints } = w.stores;
  let backendConfig = config.backend;
  const makeBackend = () =>
    createBackend(backendConfig, {
      token: w.token,
      retries: opts.retries,
      onEvent: (event: BackendEvent) => onEvent?.({ type: "backend", event }),
    });
  let backend = makeBackend();
  // One conversation per session: REPL goals build on each other. A session id that
  // already has a transcript (a job, or --session-id reuse) starts a fresh conversation
  // but keeps appending to the same file.
  const history: Message[] = [];
  let systemWritten = false;
  let fit: ContextFit | undefined;
  // A resumed conversation keeps every earlier message under today's system prompt (tools,
  // skills and policy are this process's); the transcript gets that prompt only if it changed.
  const resumed = opts.resume;
  let resumePending = resumed !== undefined;
  // "always" answers hold for the whole session, across its goals.
  const approval = opts.approver
    ? { approver: opts.approver, memory: opts.approvalMemory ?? approvalMemory() }
    : undefined;
  let clearedBeforeStart = false;
  const lastSystem = resumed?.filter((m) => m.role === "system").at(-1)?.content;
  // `/model` replaces the backend section for the goals that follow.
  let runConfig: Config = config;
  // Notes given before the conversation is rebuilt (the first goal of this process) wait here.
  const notesBeforeStart: Message[] = [];
  const note = (content: string): Result<void, string> => {
    const m: Message = { role: "user", content };
    if (systemWritten) appendTurn(history, m);
    else notesBeforeStart.push(m);
    try {
      session.append(m);
      return { ok: true, value: undefined };
    } catch (e) {
      return {
        ok: false,
        error: `cannot write the session transcript ${session.path}: ${(e as Error).message}; the next goal still tells the model`,
      };
    }
  };

  return {
    sessionId: opts.sessionId,
    mode: opts.mode,
    approval: approval ? "ask" : "never",
    undoGuard: (mode) =>
      gateUndoGuard({ ...gateSettings, mode: mode ?? opts.mode }, (msg) => {
        audit.emit(opts.sessionId, "undo", msg);
      }),
    async run(goal, signal, how = {}) {
      const planning = how.plan === true;
      const planned = planning ? undefined : (how.execute ?? opts.plan);
      const promptNow = planning ? w.planPrompt : systemPrompt;
      if (!systemWritten) {
        const prompt = promptNow.now();
        try {
          recordSessionMeta(paths.sessions, opts.sessionId, cwd);
          if (!resumed || lastSystem !== prompt) session.append({ role: "system", content: prompt });
        } catch (e) {
          const error = `cannot write the session transcript ${session.path}: ${(e as Error).message}`;
          return failedBeforeStart(error);
        }
        history.push({ role: "system", content: prompt });
        // Merged as the live history is (history.ts): a transcript may hold two user lines in a row.
        if (resumed && !clearedBeforeStart)
          history.push(...alternating(resumed.filter((m) => m.role !== "system")));
        for (const m of notesBeforeStart.splice(0)) appendTurn(history, m);
        systemWritten = true;
      }
      fit ??= await openContextFit({
        config: runConfig,
        token: w.token,
        stateDir: paths.state,
        toolNames: [...tools.keys()],
        signal,
        say: (message) => onEvent?.({ type: "context", message }),
      });
      const resumedNow = resumePending;
      resumePending = false;
      // A plan is made in readonly whatever the policy: nothing is written or run while planning.
      const runMode: PolicyMode = planning ? "readonly" : opts.mode;
      const result = await runGoal(
        {
          config: runConfig,
          mode: runMode,
          cwd,
          backend,
          audit,
          session,
          sessionId: opts.sessionId,
          runId: newRunId(),
          gateSettings: planning ? { ...gateSettings, mode: runMode } : gateSettings,
          tools: planning ? w.planTools : tools,
          services: planned?.binds
            ? boundServices(services, planned.plan, gateSettings.projectRoot)
            : services,
          childEnv,
          toolTimeoutMs: effectiveToolTimeout(config),
          signal,
          history,
          onEvent,
          fit,
          ...(resumedNow ? { resumed: opts.sessionId } : {}),
          ...(approval ? { approval } : {}),
          ...(w.nested ? { instructions: w.nested } : {}),
          checkpoints,
          // Each run asks for its own kind's prompt: after a planning run the next goal's is the
          // normal one again (the switch is recorded in the transcript).
          systemPrompt: promptNow.fresh ?? (async () => promptNow.now()),
          ...(planned ? { plan: planned } : {}),
          ...(how.answerSchema ? { answerSchema: how.answerSchema } : {}),
        },
        goal,
      );
      onEvent?.flush();
      // Batched records reach the disk at run end (tool_call and policy_deny already did).
      audit.flush();
      return result;
    },
    noteForModel: (text) => note(`${NOTE_PREFIX}${text}]`),
    noteUndo(undone) {
      const text = undoNote(undone);
      return text === undefined ? { ok: true, value: undefined } : note(text);
    },
    planReviewed(plan, via, outcome) {
      const what = outcome === "revise" ? "plan revision asked" : "plan not run";
      const why = outcome === "revise" ? "" : `: ${outcome.notRun}`;
      const logged = audit.emit(
        opts.sessionId,
        "approval",
        `${what} sha256=${planSha256(plan)} steps=${plan.steps.length} via=${via}${why}`,
      );
      if (!logged.ok) return { ok: false, error: logged.error };
      return outcome === "revise"
        ? { ok: true, value: undefined }
        : note(`${NOTE_PREFIX}the plan above was not run: ${outcome.notRun}]`);
    },
    contextWindow: () => fit?.window.tokens,
    model: () => backendConfig.model,
    setModel(name) {
      backendConfig = { ...backendConfig, model: name };
      runConfig = { ...config, backend: backendConfig };
      backend = makeBackend();
      fit = undefined;
    },
    clear() {
      if (systemWritten) history.splice(1);
      // A resumed conversation that has not run yet starts empty too.
      resumePending = false;
      if (!systemWritten) {
        history.length = 0;
        clearedBeforeStart = true;
      }
      // A new context: notes about the old one are not carried into it.
      notesBeforeStart.length = 0;
    },
    compact() {
      if (!systemWritten || history.length <= 2) return { ok: true, value: undefined };
      const before = historyBytes(history);
      const system = historyBytes(history.slice(0, 1));
      // Aim at a share of the conversation; when that cannot hold its newest part, keep
      // as much as still means a smaller history.
      const targets = [system + Math.floor((before - system) * MANUAL_COMPACT_SHARE), before - 1];
      for (const target of targets) {
        const c = compactHistory(history, new Set([0]), target, runConfig.agent.compactor);
        if (!c.ok) continue;
        if (!c.value) return { ok: true, value: undefined };
        history.splice(0, history.length, ...c.value.messages);
        const { removed, beforeBytes, afterBytes } = c.value;
        return { ok: true, value: { removed, beforeBytes, afterBytes } };
      }
      return { ok: true, value: undefined };
    },
    historyBytes: () => historyBytes(history),
    guidance: () => w.nested?.snapshot(),
    instructions: () => (w.project.found ? instructionsStatus(w.project.found, w.nested) : w.project.message),
    async close() {
      audit.close();
      claim.release();
      await pool?.close();
    },
  };
}
