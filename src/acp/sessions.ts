/**
 * The ACP agent's sessions (docs/editors.md "Editors (ACP)"). Each ACP session is a Scoot session
 * opened through `openAgentSession` — the same configuration, gate, audit, transcript and
 * sandbox as `-e` — with the client's `cwd` as project root. Protocol-free: `server.ts` maps
 * requests here and `AcpFailure`s to JSON-RPC errors.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type {
  ContentBlock,
  ListSessionsResponse,
  McpServer,
  SessionConfigOption,
  SessionModeState,
  SessionUpdate,
  StopReason,
} from "@agentclientprotocol/sdk";
import type { ApprovalMemory, ApprovalMode } from "../agent/approval.js";
import type { AgentEvent } from "../agent/events.js";
import type { RunResult } from "../agent/loop.js";
import type { GuidanceSnapshot } from "../agent/nested-instructions.js";
import { planBinds, plansFirst } from "../agent/plan-review.js";
import type { RunStop } from "../agent/run-stop.js";
import { type AgentSession, openAgentSession, type RunHow } from "../agent/session-runner.js";
import type { HomePaths } from "../config/home.js";
import type { Config, PolicyMode } from "../config/schema.js";
import { resolveToken } from "../config/secrets.js";
import { effectiveUnattended } from "../policy/modes.js";
import { refuseProjectRoot } from "../policy/project-root.js";
import type { AuditLog } from "../store/audit-writer.js";
import { loadResumeTarget } from "../store/resume-target.js";
import type { Message } from "../store/session.js";
import { readSession, sessionPath } from "../store/session.js";
import { projectRoot, sessionExists } from "../store/session-meta.js";
import {
  type ProjectAnswers,
  readSessionSettings,
  rememberedIn,
  type SessionSettings,
  settingsPath,
  writeSessionSettings,
} from "../store/session-settings.js";
import type { Plan } from "../tools/plan-shape.js";
import { AcpApprover } from "./approver.js";
import { commandOf, statusText } from "./commands.js";
import { type EditorLink, editorBuffers } from "./editor-link.js";
import { mergeClientServers } from "./mcp-servers.js";
import { ModelList } from "./models.js";
import { type PlanTurnEnd, planTurn } from "./plan-turn.js";
import { goalFromPrompt } from "./prompt-content.js";
import { replayUpdates } from "./replay.js";
import { listStoredSessions } from "./session-list.js";
import { UpdateTranslator } from "./updates.js";

/** JSON-RPC codes used by the agent (JSON-RPC 2.0 and ACP's resource-not-found). */
export const ACP_ERROR = { invalidParams: -32602, internal: -32603, notFound: -32002 } as const;

export class AcpFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * The session mode that plans first (docs/editors.md "Plan mode in the editor"): each prompt is
 * planned in readonly, and the plan runs, under the session's policy mode, once the person
 * approves it. It is not a policy mode: the session keeps one underneath.
 */
export const PLAN_MODE_ID = "plan";
/** A mode an editor can pick: a policy mode, or plan. */
export type SessionModeId = PolicyMode | typeof PLAN_MODE_ID;

/** The modes an editor can pick; `yolo` is an alias of unrestricted and not offered. */
const MODES: { id: SessionModeId; name: string; description: string }[] = [
  {
    id: "readonly",
    name: "Read-only",
    description: "reads and searches; no writes, no shell, no network writes",
  },
  {
    id: "guarded",
    name: "Guarded",
    description: "writes inside the project; shell and network under the gate's rules",
  },
  { id: "unrestricted", name: "Unrestricted", description: "every tool; hard-deny rules still apply" },
  {
    id: PLAN_MODE_ID,
    name: "Plan",
    description: "plans first in read-only; runs the plan after you approve it",
  },
];

/** The config option that mirrors the mode, for editors that show config options rather than modes. */
export const MODE_CONFIG_ID = "mode";

/**
 * The stops ACP has a stopReason for. The others (backend, budget, malformed, not_recorded) are
 * failures an editor should show as an error, with the message, not as a turn that ended.
 */
const ACP_STOP_REASONS: Partial<Record<RunStop, StopReason>> = {
  final: "end_turn",
  interrupted: "cancelled",
  max_turns: "max_turn_requests",
  refused: "refusal",
};

export interface AcpContext {
  config: Config;
  paths: HomePaths;
  env: NodeJS.ProcessEnv;
  /** The configured mode, or `scoot acp --policy` / `--unattended`. */
  mode: PolicyMode;
  retries?: number;
  unattended: boolean;
  /** `tools.approval` for the editor: ask (the default) or never; always never under --unattended. */
  approval: ApprovalMode;
  /** The agent's own audit handle, for mode changes. */
  audit: AuditLog;
  log: (line: string) => void;
}

interface SessionState {
  id: string;
  cwd: string;
  /** `cwd` resolved: the project the "always" answers below were given in, and hold in. */
  root: string;
  /** The policy mode the agent runs in (in plan mode: the one an approved plan runs in). */
  mode: PolicyMode;
  /** Plan mode: each prompt is planned first, and runs once the plan is approved. */
  planning: boolean;
  config: Config;
  agent: AgentSession;
  listener?: (e: AgentEvent) => void;
  running?: AbortController;
  /** The editor, while a prompt runs: file reads and permission requests go to it. */
  link?: EditorLink;
  /** Settles when the running prompt's run has finished (its tool's process group reaped). */
  settled?: Promise<unknown>;
  prompts: number;
  /** Tokens used by this session's prompts in this agent (for /status). */
  tokens: { prompt: number; completion: number; total: number };
  /** The approval keys answered "allow always" in this session, in this project (stored with its settings). */
  approvals: string[];
  /** The approval keys answered "reject always" in this project (stored likewise). */
  refusals: string[];
  /** The answers the session was given in other projects: kept, stored, never applied here. */
  otherAnswers: ProjectAnswers[];
  /** The running prompt's translator: a permission request names the tool call it shows. */
  translator?: UpdateTranslator;
  /** Settles when the current prompt turn has ended (its answer given); none: no turn. */
  turn?: Promise<void>;
  /** The current turn was cancelled: a prompt that comes now waits for it, then runs. */
  cancelled?: boolean;
  /** The model the editor chose (stored with the session); none: the configured one. */
  model?: string;
  /** Fingerprints of the session's failed tool calls (src/acp/call-outcomes.ts). */
  failedCalls: string[];
}

/** The mode the editor shows for a session: plan, or its policy mode. */
function modeIdOf(s: Pick<SessionState, "mode" | "planning">): SessionModeId {
  return s.planning ? PLAN_MODE_ID : s.mode;
}

/** How long shutdown waits for cancelled runs to tear their tools down. */
const SHUTDOWN_WAIT_MS = 10_000;

let sessionCounter = 0;
/**
 * Tool call ids are `p<prompt of this agent>-<this agent>-<call>`: an id the editor has seen must
 * never come back as a new `tool_call` (a reset of that call), not after a session is loaded
 * again, nor after the agent restarts.
 */
const AGENT_TAG = `${Date.now().toString(36)}${process.pid.toString(36)}`;
let promptCounter = 0;
function newAcpSessionId(): string {
  sessionCounter += 1;
  return `acp-${Date.now()}-${process.pid}-${sessionCounter}`;
}

function checkCwd(cwd: unknown): string {
  if (typeof cwd !== "string" || !path.isAbsolute(cwd))
    throw new AcpFailure(ACP_ERROR.invalidParams, `cwd must be an absolute path, got ${JSON.stringify(cwd)}`);
  let st: fs.Stats;
  try {
    st = fs.statSync(cwd);
  } catch (e) {
    throw new AcpFailure(ACP_ERROR.invalidParams, `cwd ${cwd} cannot be used: ${(e as Error).message}`);
  }
  if (!st.isDirectory()) throw new AcpFailure(ACP_ERROR.invalidParams, `cwd ${cwd} is not a directory`);
  return cwd;
}

export class AcpSessions {
  private readonly sessions = new Map<string, SessionState>();
  private readonly models: ModelList;

  constructor(private readonly ctx: AcpContext) {
    // Resolved once, when the list is first read (a token command runs once, not per session).
    let token: { value: string | undefined } | undefined;
    this.models = new ModelList(
      ctx.config.backend,
      () => {
        token ??= { value: resolveToken(ctx.config, ctx.paths.configDir, ctx.env).token };
        return token.value;
      },
      ctx.log,
    );
  }

  /**
   * The modes an editor may choose. Under `scoot acp --unattended` only those the clamp leaves
   * as they are (edge.max_job_policy, guarded runs as readonly): the editor cannot lift the
   * operator's ceiling.
   */
  private allowedModes(): typeof MODES {
    if (!this.ctx.unattended) return MODES;
    const ceiling = this.ctx.config.edge.max_job_policy;
    // Plan mode plans in readonly, and under --unattended no plan is ever run: always offered.
    return MODES.filter((m) => m.id === PLAN_MODE_ID || effectiveUnattended(m.id, ceiling) === m.id);
  }

  /** The policy mode `id` names when this agent may offer it (never plan). */
  private allowedPolicy(id: string | undefined): PolicyMode | undefined {
    const found = this.allowedModes().find((m) => m.id === id && m.id !== PLAN_MODE_ID)?.id;
    return found as PolicyMode | undefined;
  }

  modeState(mode: SessionModeId): SessionModeState {
    return { currentModeId: mode, availableModes: this.allowedModes().map((m) => ({ ...m })) };
  }

  /**
   * The mode as a select config option (category "mode"), the newer protocol's way to show it,
   * and the model (category "model"), chosen from the server's list.
   */
  configOptionsFor(mode: SessionModeId, model: string): SessionConfigOption[] {
    return [
      {
        id: MODE_CONFIG_ID,
        name: "Policy mode",
        description: "What the agent may do: the policy gate's mode",
        category: "mode",
        type: "select",
        currentValue: mode,
        options: this.allowedModes().map((m) => ({ value: m.id, name: m.name, description: m.description })),
      },
      this.models.option(model),
    ];
  }

  configOptions(id: string): SessionConfigOption[] {
    const s = this.get(id);
    return this.configOptionsFor(modeIdOf(s), s.agent.model());
  }

  /**
   * Reads the server's model list again (at every session/new and session/load, whose answer
   * waits for it a little: src/acp/models.ts); true when it changed (the editor is then sent the options again).
   */
  refreshModels(): Promise<boolean> {
    return this.models.refresh().catch((e: unknown) => {
      this.ctx.log(`warning: the model list could not be read: ${(e as Error)?.message ?? String(e)}`);
      return false;
    });
  }

  /** `session/list`: stored sessions, optionally of one project root. */
  list(cwd: string | undefined, cursor: string | undefined): ListSessionsResponse {
    if (cwd !== undefined && (typeof cwd !== "string" || !path.isAbsolute(cwd)))
      throw new AcpFailure(
        ACP_ERROR.invalidParams,
        `cwd must be an absolute path, got ${JSON.stringify(cwd)}`,
      );
    try {
      return listStoredSessions(this.ctx.paths.sessions, cwd, cursor);
    } catch (e) {
      throw new AcpFailure(ACP_ERROR.invalidParams, (e as Error).message);
    }
  }

  private configFor(mcpServers: readonly McpServer[]): Config {
    if (mcpServers.length === 0) return this.ctx.config;
    const merged = mergeClientServers(this.ctx.config.mcp.servers, mcpServers);
    for (const w of merged.warnings) this.ctx.log(`warning: ${w}`);
    return { ...this.ctx.config, mcp: { ...this.ctx.config.mcp, servers: merged.servers } };
  }

  private async open(
    id: string,
    cwd: string,
    mode: PolicyMode,
    config: Config,
    resume: Message[] | undefined,
    model?: string,
    planning = false,
    guidance?: GuidanceSnapshot,
  ): Promise<SessionState> {
    const state: Partial<SessionState> & { listener?: (e: AgentEvent) => void } = {};
    const buffers = editorBuffers(() => state.link, [cwd, projectRoot(cwd)]);
    const ask = this.ctx.approval === "ask" ? this.approvalFor(state, cwd) : undefined;
    const opened = await openAgentSession({
      config,
      paths: this.ctx.paths,
      cwd,
      env: this.ctx.env,
      sessionId: id,
      mode,
      retries: this.ctx.retries,
      unattended: this.ctx.unattended,
      onWarning: (w) => this.ctx.log(`warning: ${w}`),
      onEvent: (e) => state.listener?.(e),
      editorBuffers: buffers,
      ...(ask ?? {}),
      ...(resume ? { resume } : {}),
      ...(guidance ? { guidance } : {}),
    });
    if (!opened.ok) throw new AcpFailure(ACP_ERROR.internal, opened.error);
    if (model !== undefined && model !== opened.value.model()) opened.value.setModel(model);
    return Object.assign(state, {
      id,
      cwd,
      root: projectRoot(cwd),
      // The session's own: a home root runs read-only whatever was asked.
      mode: opened.value.mode,
      planning,
      config,
      agent: opened.value,
      prompts: 0,
      tokens: { prompt: 0, completion: 0, total: 0 },
      approvals: [],
      refusals: [],
      otherAnswers: [],
      failedCalls: [],
      ...(model !== undefined ? { model } : {}),
    }) as SessionState;
  }

  /**
   * The session's approver (asks the editor of the running prompt) and its "always" memory,
   * both stored with the session as they change (src/acp/approver.ts).
   */
  private approvalFor(
    state: Partial<SessionState>,
    cwd: string,
  ): { approver: AcpApprover; approvalMemory: ApprovalMemory } {
    const remember = (list: "approvals" | "refusals", key: string) => {
      const keys = state[list];
      if (!keys || keys.includes(key)) return;
      keys.push(key);
      try {
        this.saveSettings(state as SessionState);
      } catch (e) {
        // The answer holds for this process; only its survival across a restart is lost.
        this.ctx.log(`warning: ${(e as Error).message}`);
      }
    };
    return {
      approver: new AcpApprover({
        link: () => state.link,
        toolCallFor: (request) => state.translator?.toolCallFor(request),
        cwd,
      }),
      // Read live: a loaded or re-opened session gets its stored answers after this is made.
      approvalMemory: {
        answer: (key) =>
          state.approvals?.includes(key) ? "allow" : state.refusals?.includes(key) ? "refuse" : undefined,
        remember: (key, answer) => remember(answer === "allow" ? "approvals" : "refusals", key),
      },
    };
  }

  /** Stores what the editor chose for the session (mode, "always" answers) beside its transcript. */
  private saveSettings(s: SessionState): void {
    const settings: SessionSettings = {
      mode: modeIdOf(s),
      ...(s.planning ? { plan_policy: s.mode } : {}),
      ...(s.model !== undefined ? { model: s.model } : {}),
      // This project's answers last: it is the one used most recently.
      remembered: [...s.otherAnswers, { project_root: s.root, approvals: s.approvals, refusals: s.refusals }],
      ...(s.failedCalls.length > 0 ? { failed_calls: s.failedCalls } : {}),
      project_root: s.cwd,
    };
    const r = writeSessionSettings(this.ctx.paths.sessions, s.id, settings);
    if (!r.ok) throw new AcpFailure(ACP_ERROR.internal, r.error);
  }

  /**
   * The mode a loaded session continues in: the one stored with it, when this agent may offer
   * it (under --unattended the same ceiling as set_mode); else the agent's own, with a warning.
   * Plan mode comes back with the policy mode its plans run in, checked the same way.
   */
  private restoredMode(
    id: string,
    settings: SessionSettings | undefined,
  ): { mode: PolicyMode; planning: boolean } {
    const stored = settings?.mode;
    if (stored === undefined) return { mode: this.ctx.mode, planning: false };
    const planning = stored === PLAN_MODE_ID;
    const policy = planning ? (settings?.plan_policy ?? this.ctx.mode) : stored;
    const mode = this.allowedPolicy(policy);
    if (mode) return { mode, planning };
    this.ctx.log(
      `warning: session ${id} was stored in mode "${policy}", which this agent does not offer; it continues in ${this.ctx.mode}`,
    );
    return { mode: this.ctx.mode, planning };
  }

  /**
   * The model a loaded session continues with: the one the editor chose, unless the server's
   * list is known and no longer has it (then the configured one, with a warning).
   */
  private restoredModel(id: string, settings: SessionSettings | undefined): string | undefined {
    const stored = settings?.model;
    if (stored === undefined || this.models.lists(stored) !== false) return stored;
    this.ctx.log(
      `warning: session ${id} was stored with model "${stored}", which the server no longer lists; it continues with ${this.ctx.config.backend.model}`,
    );
    return undefined;
  }

  async create(
    cwd: unknown,
    mcpServers: readonly McpServer[],
  ): Promise<{ sessionId: string; modes: SessionModeState; configOptions: SessionConfigOption[] }> {
    const dir = checkCwd(cwd);
    const refused = refuseProjectRoot(dir, {
      mode: this.ctx.mode,
      scootHome: this.ctx.paths.root,
      configDir: this.ctx.paths.configDir,
      userHome: os.homedir(),
    });
    if (refused) throw new AcpFailure(ACP_ERROR.invalidParams, refused);
    const id = newAcpSessionId();
    // agent.default_mode = "plan" plans first here too, as it does for -e and the REPL.
    const planning = plansFirst(this.ctx.config);
    const state = await this.open(
      id,
      dir,
      this.ctx.mode,
      this.configFor(mcpServers),
      undefined,
      undefined,
      planning,
    );
    // Stored now, so a session the editor never prompts can still be loaded.
    try {
      this.saveSettings(state);
    } catch (e) {
      await state.agent.close();
      throw e;
    }
    this.sessions.set(id, state);
    return {
      sessionId: id,
      modes: this.modeState(modeIdOf(state)),
      configOptions: this.configOptionsFor(modeIdOf(state), state.agent.model()),
    };
  }

  /**
   * Replays the stored conversation through `send`, then the session continues it. Without
   * `send` (`session/resume`) nothing is replayed: the session just continues.
   */
  async load(
    id: string,
    cwd: unknown,
    mcpServers: readonly McpServer[],
    send: ((u: SessionUpdate) => void) | undefined,
  ): Promise<{ modes: SessionModeState; configOptions: SessionConfigOption[] }> {
    const dir = checkCwd(cwd);
    const live = this.sessions.get(id);
    if (live) {
      // Loaded again by the same client: close the live one and reopen from its transcript.
      if (live.running) throw new AcpFailure(ACP_ERROR.invalidParams, `session ${id} is running a prompt`);
      this.sessions.delete(id);
      await live.agent.close();
    }
    const messages = this.storedConversation(id);
    const settings = readSessionSettings(this.ctx.paths.sessions, id);
    const { mode, planning } = this.restoredMode(id, settings);
    const failedCalls = settings?.failed_calls ?? [];
    if (send) for (const u of replayUpdates(messages, dir, new Set(failedCalls))) send(u);
    const state = await this.open(
      id,
      dir,
      mode,
      this.configFor(mcpServers),
      messages.length > 0 ? messages : undefined,
      this.restoredModel(id, settings),
      planning,
    );
    // Only the answers given in this project hold here (docs/editors.md "Approval in the editor").
    const remembered = rememberedIn(settings, state.root);
    state.approvals = remembered.here.approvals;
    state.refusals = remembered.here.refusals;
    state.otherAnswers = remembered.others;
    state.failedCalls = failedCalls;
    this.sessions.set(id, state);
    return {
      modes: this.modeState(modeIdOf(state)),
      configOptions: this.configOptionsFor(modeIdOf(state), state.agent.model()),
    };
  }

  /**
   * The conversation of a stored session: its transcript, or nothing yet for a session that
   * was created and never prompted (it has only its settings).
   */
  private storedConversation(id: string): Message[] {
    const sessionsDir = this.ctx.paths.sessions;
    const target = loadResumeTarget(sessionsDir, id);
    if (target.ok) {
      for (const w of target.value.warnings) this.ctx.log(`warning: ${w}`);
      return target.value.messages;
    }
    if (!sessionExists(sessionsDir, id) && fs.existsSync(settingsPath(sessionsDir, id))) return [];
    const code = sessionExists(sessionsDir, id) ? ACP_ERROR.invalidParams : ACP_ERROR.notFound;
    throw new AcpFailure(code, target.error);
  }

  private get(id: string): SessionState {
    const s = this.sessions.get(id);
    if (!s)
      throw new AcpFailure(
        ACP_ERROR.notFound,
        `no session "${id}" in this agent (use session/new or session/load)`,
      );
    return s;
  }

  /**
   * Changes the session's mode (audited, stored with the session); the conversation goes on
   * under the new mode. Plan mode keeps the policy mode underneath (an approved plan runs in
   * it); leaving plan mode for a policy mode sets that one. Returns whether it changed (the
   * caller then tells the editor).
   */
  async setMode(id: string, modeId: string): Promise<boolean> {
    const s = this.get(id);
    const allowed = this.allowedModes();
    const wanted = allowed.find((m) => m.id === modeId)?.id;
    if (!wanted) {
      const known = MODES.some((m) => m.id === modeId);
      const why = known
        ? `mode "${modeId}" is above what scoot acp --unattended allows (edge.max_job_policy)`
        : `unknown mode "${modeId}"`;
      throw new AcpFailure(ACP_ERROR.invalidParams, `${why} (use ${allowed.map((m) => m.id).join(", ")})`);
    }
    if (s.running)
      throw new AcpFailure(
        ACP_ERROR.invalidParams,
        `session ${id} is running a prompt; cancel it or wait, then set the mode`,
      );
    const current = modeIdOf(s);
    if (wanted === current) return false;
    const planNote = wanted === PLAN_MODE_ID ? `; plans in readonly, an approved plan runs in ${s.mode}` : "";
    const audited = this.ctx.audit.emit(
      id,
      "mode",
      `policy mode ${current} -> ${wanted} (acp session/set_mode${planNote})`,
    );
    if (!audited.ok) throw new AcpFailure(ACP_ERROR.internal, `mode not changed: ${audited.error}`);
    if (wanted === PLAN_MODE_ID || wanted === s.mode) {
      // Planning runs are readonly by themselves (RunHow.plan): the session's gate stays as it is.
      s.planning = wanted === PLAN_MODE_ID;
      this.saveSettings(s);
      return true;
    }
    const mode: PolicyMode = wanted;
    // The gate and the system prompt are fixed when a session opens: reopen it under the new
    // mode with the conversation so far.
    await s.agent.close();
    this.sessions.delete(id);
    const { messages, warnings } = readSession(sessionPath(this.ctx.paths.sessions, id));
    for (const w of warnings) this.ctx.log(`warning: ${w}`);
    const next = await this.open(
      id,
      s.cwd,
      mode,
      s.config,
      // Nothing said yet: a fresh conversation (its first run is not "resumed").
      messages.length > 0 ? messages : undefined,
      s.model,
      false,
      // The same session goes on: what may be project guidance stays as its start found it.
      s.agent.guidance(),
    );
    next.prompts = s.prompts;
    next.approvals = s.approvals;
    next.refusals = s.refusals;
    next.otherAnswers = s.otherAnswers;
    next.failedCalls = s.failedCalls;
    this.sessions.set(id, next);
    this.saveSettings(next);
    return true;
  }

  /** The session's current mode (for `current_mode_update`). */
  modeOf(id: string): SessionModeId {
    return modeIdOf(this.get(id));
  }

  /**
   * The session's next prompts go to `model`, one the server lists (stored with the session).
   * Returns whether it changed (the caller then tells the editor).
   */
  setModel(id: string, model: string): boolean {
    const s = this.get(id);
    const current = s.agent.model();
    const refused = this.models.refusal(model, current);
    if (refused) throw new AcpFailure(ACP_ERROR.invalidParams, refused);
    if (s.turn)
      throw new AcpFailure(
        ACP_ERROR.invalidParams,
        `session ${id} is running a prompt; cancel it or wait, then choose the model`,
      );
    if (model === current) return false;
    s.agent.setModel(model);
    s.model = model;
    this.saveSettings(s);
    return true;
  }

  /** `session/close`: cancels a running prompt, waits for it, and releases the session. */
  async close(id: string): Promise<void> {
    const s = this.get(id);
    this.sessions.delete(id);
    s.running?.abort(new Error("interrupted"));
    await s.settled;
    await s.agent.close();
  }

  /**
   * One goal in the session's conversation; updates go to `send` while it runs. One turn at a
   * time: a prompt while another runs is refused, but one right after `session/cancel` waits
   * until the cancelled turn has ended (its tool stopped, its answer given), then runs.
   */
  async prompt(
    id: string,
    blocks: readonly ContentBlock[],
    send: (u: SessionUpdate) => void,
    link?: EditorLink,
  ): Promise<StopReason> {
    let s = this.get(id);
    while (s.turn) {
      if (!s.cancelled)
        throw new AcpFailure(
          ACP_ERROR.invalidParams,
          `session ${id} is already running a prompt (one at a time; session/cancel it first)`,
        );
      await s.turn;
      // The session may have been reopened (a mode change) or closed meanwhile.
      s = this.get(id);
    }
    let ended!: () => void;
    s.turn = new Promise((resolve) => {
      ended = resolve;
    });
    s.cancelled = false;
    const state = s;
    try {
      return await this.turn(state, blocks, send, link);
    } finally {
      state.turn = undefined;
      state.cancelled = false;
      ended();
    }
  }

  private async turn(
    s: SessionState,
    blocks: readonly ContentBlock[],
    send: (u: SessionUpdate) => void,
    link: EditorLink | undefined,
  ): Promise<StopReason> {
    const goal = goalFromPrompt(blocks);
    if (!goal.ok) throw new AcpFailure(ACP_ERROR.invalidParams, goal.error);
    const command = commandOf(goal.value);
    if (command) {
      const text = await this.runCommand(s, command);
      send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
      return "end_turn";
    }
    s.prompts += 1;
    promptCounter += 1;
    const translator = new UpdateTranslator(s.cwd, send, `p${promptCounter}-${AGENT_TAG}`, {
      contextWindow: () => s.agent.contextWindow(),
    });
    const controller = new AbortController();
    s.running = controller;
    s.link = link;
    s.translator = translator;
    s.listener = (e) => translator.handle(e);
    const run = async (how: RunHow): Promise<RunResult> => {
      const r = await s.agent.run(goal.value, controller.signal, how);
      s.tokens.prompt += r.usage.prompt_tokens;
      s.tokens.completion += r.usage.completion_tokens;
      s.tokens.total += r.usage.total_tokens;
      return r;
    };
    const running: Promise<PlanTurnEnd> = s.planning
      ? planTurn({
          signal: controller.signal,
          translator,
          send,
          ...(this.ctx.approval === "ask" && link ? { ask: link.requestPermission } : {}),
          nobody: this.ctx.unattended ? "scoot acp --unattended" : 'tools.approval = "never"',
          binds: planBinds(s.config),
          run,
          notRun: (plan, why) => this.planNotRun(s, plan, why),
        })
      : run({}).then((result) => ({ result }));
    // Close and shutdown wait for the whole turn: a plan's second run never starts after them.
    s.settled = running.catch(() => undefined);
    let ended: PlanTurnEnd;
    try {
      ended = await running;
    } finally {
      s.listener = undefined;
      s.link = undefined;
      s.translator = undefined;
      s.running = undefined;
      s.settled = undefined;
    }
    if ("notRun" in ended) return ended.notRun === "cancelled" ? "cancelled" : "end_turn";
    const r = ended.result;
    if (r.stop === "final") return "end_turn";
    translator.close(r.error ?? r.status);
    const reason = ACP_STOP_REASONS[r.stop];
    if (reason) return reason;
    // The CLI's one-line message (`scoot: <error>`), as a JSON-RPC error.
    throw new AcpFailure(ACP_ERROR.internal, r.error ?? `run ended: ${r.status}`, {
      sessionId: s.id,
      runId: translator.runId ?? null,
      status: r.status,
      stop: r.stop,
    });
  }

  /**
   * A plan that did not run (refused, cancelled, nobody to ask): on the security record beside
   * the approvals, and told to the model with the next goal, so the next prompt plans again
   * knowing it.
   */
  private planNotRun(s: SessionState, plan: Plan, why: string): void {
    const recorded = s.agent.planReviewed(plan, "acp", { notRun: why });
    if (!recorded.ok) this.ctx.log(`warning: ${recorded.error}`);
  }

  /** A slash command the editor offered (src/acp/commands.ts), answered without the model. */
  private async runCommand(s: SessionState, command: { name: string; args: string }): Promise<string> {
    switch (command.name) {
      case "undo":
      case "diff": {
        if (command.args !== "" && !(command.name === "undo" && command.args === "--force"))
          return command.name === "undo" ? "usage: /undo [--force]" : "/diff takes no argument";
        // The REPL's /undo and /diff (src/agent/undo-report.ts), their output collected as the answer.
        const { showSessionDiff, undoLastRun } = await import("../agent/undo-report.js");
        const lines: string[] = [];
        const collect = (t: string) => {
          lines.push(t);
        };
        const io = { out: collect, err: collect, raw: collect, color: false };
        if (command.name === "undo") {
          const undone = undoLastRun(io, this.ctx.paths, s.id, s.cwd, {
            force: command.args === "--force",
            what: "/undo",
            guard: s.agent.undoGuard(s.mode),
          });
          // The model's next prompt names the files put back (docs/sessions.md "What the model is told").
          const told = s.agent.noteUndo(undone);
          if (!told.ok) collect(`warning: ${told.error}\n`);
        } else await showSessionDiff(io, this.ctx.paths, s.id, s.cwd);
        return lines.join("").trimEnd();
      }
      case "compact": {
        if (command.args !== "") return "/compact takes no argument";
        // The REPL's /compact: the same session's compactor, before the next prompt.
        const r = s.agent.compact();
        if (!r.ok) return `cannot compact: ${r.error}`;
        if (!r.value) return "nothing to compact yet";
        return `compacted ${r.value.removed} messages: ${r.value.beforeBytes} → ${r.value.afterBytes} bytes`;
      }
      case "status":
        return statusText({
          sessionId: s.id,
          model: s.agent.model(),
          mode: s.planning ? `plan (an approved plan runs in ${s.mode})` : s.mode,
          approval: this.approvalLabel(),
          contextWindow: s.agent.contextWindow(),
          prompts: s.prompts,
          tokens: s.tokens,
          instructions: s.agent.instructions(),
        });
      default:
        return `/${command.name} is not available here`;
    }
  }

  private approvalLabel(): string {
    if (this.ctx.unattended) return "never (scoot acp --unattended)";
    return this.ctx.approval === "ask" ? "ask (the editor is asked)" : "never (tools.approval)";
  }

  /**
   * `session/cancel`: the running goal stops at once (its tool's process group is killed); a
   * prompt sent after it waits for the turn to end instead of being refused.
   */
  cancel(id: string): void {
    const s = this.sessions.get(id);
    if (!s?.turn) return;
    s.cancelled = true;
    s.running?.abort(new Error("interrupted"));
  }

  /**
   * Cancels every running prompt, waits (bounded) until their runs have finished — the tools'
   * process groups killed and the interruption audited — then closes every session.
   */
  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    for (const s of all) s.running?.abort(new Error("interrupted"));
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
    });
    await Promise.race([Promise.all(all.map((s) => s.settled)), bound]);
    clearTimeout(timer);
    await Promise.all(all.map((s) => s.agent.close()));
  }
}
