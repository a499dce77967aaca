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
import type { Config, PolicyMode } from "../config/schema.js";
import { effectiveToolTimeout } from "../config/schema.js";
import { resolveToken, tokenFilePath } from "../config/secrets.js";
import { redactStreamedEvents } from "../core/stream-redact.js";
import { validateMcpServers } from "../mcp/config.js";
import { mcpPromptSection } from "../mcp/prompt.js";
import { buildGateSettings } from "../policy/gate.js";
import { discoverSkills } from "../skills/discover.js";
import { skillsPromptSection } from "../skills/prompt.js";
import { makeSkillRegistry } from "../skills/registry.js";
import { auditOptions, createAuditLog } from "../store/audit.js";
import { loadAuditKey } from "../store/audit-chain.js";
import { guardAuditLog, guardSession } from "../store/guarded-stores.js";
import { claimSession, type Message, openSession } from "../store/session.js";
import { recordSessionMeta } from "../store/session-meta.js";
import { enabledTools } from "../tools/registry.js";
import type { ToolServices } from "../tools/types.js";
import type { ContextFit } from "./context-fit.js";
import { openContextFit } from "./context-setup.js";
import type { AgentEvent } from "./events.js";
import { type RunResult, runGoal } from "./loop.js";
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
  /** Problems worth a warning at run start (bad MCP entries, invalid skills). */
  onWarning?: (message: string) => void;
  /**
   * `--resume` / `--continue` (README "Resuming a session"): the session's transcript, all
   * its parts. The conversation continues from it and the first run's audit names it.
   */
  resume?: Message[];
}

export interface AgentSession {
  sessionId: string;
  mode: PolicyMode;
  /** Runs one goal. Each call is one run with its own run id. */
  run(goal: string, signal: AbortSignal): Promise<RunResult>;
  /** The model's context window in tokens once a run has discovered it (undefined: unknown). */
  contextWindow(): number | undefined;
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

let runCounter = 0;
function newRunId(): string {
  runCounter += 1;
  return `run-${Date.now().toString(36)}-${process.pid}-${runCounter}`;
}

export async function openAgentSession(opts: AgentSessionOptions): Promise<Opened> {
  const { config, paths, cwd, env } = opts;
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
      unattended: opts.unattended ?? false,
      notify: (message) => onEvent?.({ type: "sandbox", message }),
    },
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

  const tools = enabledTools({ hasMcp: mcp.servers.length > 0, hasSkills: discovery.skills.length > 0 });
  const gateSettings = buildGateSettings(config, cwd, {
    mode: opts.mode,
    tokenFile: tokenFilePath(config, paths.root),
  });
  const backend = createBackend(config.backend, {
    token: token.token,
    retries: opts.retries,
    onEvent: (event: BackendEvent) => onEvent?.({ type: "backend", event }),
  });
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
  const systemPrompt = buildSystemPrompt({
    tools: [...tools.values()],
    mode: opts.mode,
    cwd,
    skillsSection: discovery.skills.length > 0 ? skillsPromptSection(discovery.skills) : undefined,
    mcpSection: mcpPromptSection(mcp.servers) || undefined,
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
  const lastSystem = resumed?.filter((m) => m.role === "system").at(-1)?.content;

  return {
    ok: true,
    value: {
      sessionId: opts.sessionId,
      mode: opts.mode,
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
          if (resumed) history.push(...resumed.filter((m) => m.role !== "system"));
          systemWritten = true;
        }
        fit ??= await openContextFit({
          config,
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
            config,
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
          },
          goal,
        );
        onEvent?.flush();
        // Batched records reach the disk at run end (tool_call and policy_deny already did).
        audit.flush();
        return result;
      },
      contextWindow: () => fit?.window.tokens,
      async close() {
        audit.close();
        claim.value.release();
        await pool?.close();
      },
    },
  };
}
