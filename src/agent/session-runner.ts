/**
 * Builds everything one agent session needs from the loaded configuration — mode, token,
 * backend, audit, transcript, gate settings, skills, MCP — and runs goals in it. `-e`, the
 * REPL, scheduled jobs and `serve` all start runs through here.
 */
import fs from "node:fs";
import os from "node:os";
import { createBackend } from "../backend/client.js";
import type { BackendEvent } from "../backend/types.js";
import type { HomePaths } from "../config/home.js";
import { validateMcpServers } from "../config/mcp-servers.js";
import type { Config, PolicyMode } from "../config/schema.js";
import { effectiveToolTimeout } from "../config/schema.js";
import { resolveToken, tokenFilePath } from "../config/secrets.js";
import { redactStreamedEvents } from "../core/stream-redact.js";
import type { Result } from "../core/types.js";
import type { ToolLister } from "../mcp/describe.js";
import { mcpPromptSection } from "../mcp/prompt.js";
import type { McpToolInfo } from "../mcp/tools-info.js";
import { refuseProjectRoot } from "../policy/project-root.js";
import { buildGateSettings } from "../policy/settings.js";
import { discoverSkills } from "../skills/discover.js";
import { skillsPromptSection } from "../skills/prompt.js";
import { makeSkillRegistry } from "../skills/registry.js";
import { auditOptions, createAuditLog } from "../store/audit.js";
import { loadAuditKey } from "../store/audit-chain.js";
import { openCheckpointWriter } from "../store/checkpoints.js";
import { guardAuditLog, guardSession } from "../store/guarded-stores.js";
import { claimSession, type Message, openSession } from "../store/session.js";
import { recordSessionMeta } from "../store/session-meta.js";
import { enabledTools } from "../tools/registry.js";
import type { AnyTool, ToolServices } from "../tools/types.js";
import { type ApprovalMemory, type ApprovalMode, type Approver, approvalMemory } from "./approval.js";
import { compactHistory, historyBytes } from "./compact.js";
import type { ContextFit } from "./context-fit.js";
import { openContextFit } from "./context-setup.js";
import type { AgentEvent } from "./events.js";
import { type RunResult, runGoal } from "./loop.js";
import { loadProjectInstructions } from "./project-instructions.js";
import { buildSystemPrompt } from "./prompt.js";

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
   * `--resume` / `--continue` (README "Resuming a session"): the session's transcript, all
   * its parts. The conversation continues from it and the first run's audit names it.
   */
  resume?: Message[];
  /** An editor's open buffers (ACP): file_read reads through them. */
  editorBuffers?: ToolServices["editorBuffers"];
  /**
   * Who approves calls with an effect (README "Approval"): the keyboard, an editor. Absent:
   * nobody is asked — `tools.approval = "never"`, or no person can answer.
   */
  approver?: Approver;
  /** The session's "always" answers when they outlive this process (ACP stores them with the session). */
  approvalMemory?: ApprovalMemory;
}

export interface AgentSession {
  sessionId: string;
  mode: PolicyMode;
  /** Whether calls with an effect wait for a person in this session. */
  approval: ApprovalMode;
  /** Runs one goal. Each call is one run with its own run id. */
  run(goal: string, signal: AbortSignal): Promise<RunResult>;
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
  close(): Promise<void>;
}

export type Opened = { ok: true; value: AgentSession } | { ok: false; error: string };

function failedBeforeStart(error: string): RunResult {
  return {
    status: "failed",
    error,
    turns: 0,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    toolCalls: 0,
    denials: 0,
    errors: 1,
    wallMs: 0,
  };
}

/** AGENTS.md for this session, and the trace line that says what was read or why not. */
function projectInstructionsFor(
  config: Config,
  cwd: string,
  job: boolean,
): { section: string; message: string } {
  const setting = config.agent.project_instructions;
  const on = setting ?? !job;
  if (!on) {
    const why =
      setting === false
        ? "agent.project_instructions = false"
        : "a scheduled job (agent.project_instructions unset)";
    return { section: "", message: `off: ${why}` };
  }
  const found = loadProjectInstructions(cwd);
  const read =
    found.files.length === 0 ? "no AGENTS.md found" : `read ${found.files.join(", ")} (nearest last)`;
  const notes = found.notes.length > 0 ? `; ${found.notes.join("; ")}` : "";
  return { section: found.section, message: `${read}${notes}` };
}

/** `/compact` aims at this share of the conversation's current size. */
export const MANUAL_COMPACT_SHARE = 0.5;

let runCounter = 0;
function newRunId(): string {
  runCounter += 1;
  return `run-${Date.now().toString(36)}-${process.pid}-${runCounter}`;
}

export async function openAgentSession(opts: AgentSessionOptions): Promise<Opened> {
  const { config, paths, cwd, env } = opts;
  const refused = refuseProjectRoot(cwd, { mode: opts.mode, scootHome: paths.root, userHome: os.homedir() });
  if (refused) return { ok: false, error: refused };
  // The one point every subscriber's events pass (terminal, REPL, ACP, serve, the library):
  // streamed text is redacted and safely cut here, so no subscriber can see it raw.
  const onEvent = opts.onEvent ? redactStreamedEvents(opts.onEvent) : undefined;
  const token = resolveToken(config, paths.root, env);
  if (token.error) return { ok: false, error: token.error };
  fs.mkdirSync(paths.sessions, { recursive: true, mode: 0o700 });
  // One live process per session: a second one would interleave two conversations.

  const childEnv: NodeJS.ProcessEnv = { ...env };
  // The backend token never reaches a child process.
  if (config.backend.api_key_env) delete childEnv[config.backend.api_key_env];

  const mcp = validateMcpServers(config.mcp.servers);
  for (const p of mcp.problems) opts.onWarning?.(`mcp: ${p}`);
  const discovery = discoverSkills({ config, cwd, homeDir: os.homedir(), scootHome: paths.root });
  for (const p of discovery.problems) opts.onWarning?.(`skill: ${p.file}: ${p.message}`);
  const skills = makeSkillRegistry(discovery);

  const services: ToolServices = {
    skills,
    sandbox: {
      scootHome: paths.root,
      tokenFile: tokenFilePath(config, paths.root),
      skillDirs: discovery.skills.map((s) => s.dir),
      unattended: opts.unattended ?? false,
      notify: (message) => onEvent?.({ type: "sandbox", message }),
    },
    ...(opts.editorBuffers ? { editorBuffers: opts.editorBuffers } : {}),
  };
  let pool: { close(): Promise<void> } | undefined;
  if (mcp.servers.length > 0) {
    const { createMcpPool } = await import("../mcp/pool.js");
    const created = createMcpPool(mcp.servers, {
      caFile: config.backend.ca_file,
      env: childEnv,
      timeoutMs: effectiveToolTimeout(config),
      cwd,
    });
    pool = created;
    services.mcp = created;
  }

  let tools = enabledTools({ hasMcp: mcp.servers.length > 0, hasSkills: discovery.skills.length > 0 });
  let mcpTools = new Map<string, McpToolInfo[]>();
  // In readonly every mcp_call is denied: no server is started just to describe its tools.
  if (pool && services.mcp && opts.mode !== "readonly") {
    const { describeMcpTools } = await import("../mcp/describe.js");
    const lister = services.mcp as unknown as ToolLister;
    mcpTools = await describeMcpTools(mcp.servers, lister, paths.state, (message) =>
      onEvent?.({ type: "mcp", message }),
    );
    if (mcpTools.size > 0) {
      const { mcpCallWithSchemas } = await import("../tools/mcp_call.js");
      const checked = new Map(tools);
      checked.set("mcp_call", mcpCallWithSchemas(mcpTools) as unknown as AnyTool);
      tools = checked;
    }
  }
  const gateSettings = buildGateSettings(config, cwd, {
    mode: opts.mode,
    tokenFile: tokenFilePath(config, paths.root),
    scootHome: paths.root,
    skillDirs: discovery.skills.map((s) => s.dir),
  });
  services.identities = gateSettings;
  let backendConfig = config.backend;
  const makeBackend = () =>
    createBackend(backendConfig, {
      token: token.token,
      retries: opts.retries,
      onEvent: (event: BackendEvent) => onEvent?.({ type: "backend", event }),
    });
  let backend = makeBackend();
  const auditOpts = auditOptions(config.audit, paths.audit);
  const key = loadAuditKey(auditOpts.hmacKeyFile);
  if (!key.ok) {
    await pool?.close();
    return { ok: false, error: key.error };
  }
  // Guarded: no write through a symlink or special file planted in the home (issue 17 item 7).
  const audit = guardAuditLog(createAuditLog(auditOpts), paths.audit);
  fs.mkdirSync(paths.sessions, { recursive: true, mode: 0o700 });
  // One live process per session id (issue 12): a second one is refused, not interleaved.
  const claim = claimSession(paths.sessions, opts.sessionId);
  if (!claim.ok) {
    await pool?.close();
    return { ok: false, error: claim.error };
  }
  const session = guardSession(openSession(paths.sessions, opts.sessionId));
  const project = projectInstructionsFor(config, cwd, opts.job === true);
  onEvent?.({ type: "project", message: project.message });
  const systemPrompt = buildSystemPrompt({
    tools: [...tools.values()],
    mode: opts.mode,
    cwd,
    skillsSection: discovery.skills.length > 0 ? skillsPromptSection(discovery.skills) : undefined,
    mcpSection: mcpPromptSection(mcp.servers, mcpTools) || undefined,
    projectSection: project.section || undefined,
  });

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
  const checkpoints = openCheckpointWriter(paths.state, opts.sessionId, paths.sessions);
  let clearedBeforeStart = false;
  const lastSystem = resumed?.filter((m) => m.role === "system").at(-1)?.content;
  // `/model` replaces the backend section for the goals that follow.
  let runConfig: Config = config;

  return {
    ok: true,
    value: {
      sessionId: opts.sessionId,
      mode: opts.mode,
      approval: approval ? "ask" : "never",
      async run(goal, signal) {
        if (!systemWritten) {
          try {
            recordSessionMeta(paths.sessions, opts.sessionId, cwd);
            if (!resumed || lastSystem !== systemPrompt)
              session.append({ role: "system", content: systemPrompt });
          } catch (e) {
            const error = `cannot write the session transcript ${session.path}: ${(e as Error).message}`;
            return failedBeforeStart(error);
          }
          history.push({ role: "system", content: systemPrompt });
          if (resumed && !clearedBeforeStart) history.push(...resumed.filter((m) => m.role !== "system"));
          systemWritten = true;
        }
        fit ??= await openContextFit({
          config: runConfig,
          token: token.token,
          stateDir: paths.state,
          toolNames: [...tools.keys()],
          signal,
          say: (message) => onEvent?.({ type: "context", message }),
        });
        const resumedNow = resumePending;
        resumePending = false;
        const result = await runGoal(
          {
            config: runConfig,
            mode: opts.mode,
            cwd,
            backend,
            audit,
            session,
            sessionId: opts.sessionId,
            runId: newRunId(),
            gateSettings,
            tools,
            services,
            childEnv,
            toolTimeoutMs: effectiveToolTimeout(config),
            signal,
            history,
            onEvent,
            fit,
            ...(resumedNow ? { resumed: opts.sessionId } : {}),
            ...(approval ? { approval } : {}),
            checkpoints,
          },
          goal,
        );
        onEvent?.flush();
        // Batched records reach the disk at run end (tool_call and policy_deny already did).
        audit.flush();
        return result;
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
      async close() {
        audit.close();
        claim.value.release();
        await pool?.close();
      },
    },
  };
}
