/**
 * Drives the agent loop in process: `runGoal` with the in-process scripted backend, real tools
 * on real files in the test's project directory, the real gate, and in-memory audit and
 * transcript. This is for the loop's own decisions — corrections, limits, denials, compaction,
 * events. What needs the real binary (argv, exit codes, signals, stdout/stderr, the home on
 * disk) stays in the end-to-end tests that spawn `dist/scoot.cjs` (test/helpers/cli.ts).
 */
import path from "node:path";
import { type Approver, approvalMemory } from "../../src/agent/approval.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { type RunDeps, type RunResult, runGoal } from "../../src/agent/loop.js";
import { nestedInstructions } from "../../src/agent/nested-instructions.js";
import { loadProjectInstructions } from "../../src/agent/project-instructions.js";
import { buildSystemPrompt } from "../../src/agent/prompt.js";
import { traceLine } from "../../src/cli/trace.js";
import { type AuditLevel, type Config, defaultConfig, type PolicyMode } from "../../src/config/schema.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import type { AuditKind } from "../../src/store/audit-writer.js";
import { CHECKPOINT_LIMITS, openCheckpointWriter } from "../../src/store/checkpoints.js";
import type { Message } from "../../src/store/session.js";
import { enabledTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";
import { type MemoryAudit, type MemorySession, memoryAudit, memorySession } from "./memory-stores.js";
import { type ScriptedBackend, type ScriptedBackendOptions, scriptedBackend } from "./scripted-backend.js";
import type { ScriptItem } from "./scripted-server.js";

/** The tool deadline of an in-process run; the config default would be as good, this is explicit. */
const LOOP_TOOL_TIMEOUT_MS = 10_000;

export interface LoopOptions {
  /** The project root the tools work in (a real directory). */
  cwd: string;
  mode?: PolicyMode;
  /** Changes to the default configuration, made before gate settings are built. */
  configure?: (config: Config) => void;
  /**
   * The system prompt the history starts with; default: the one a session would build for
   * these tools, mode and project (`buildSystemPrompt`).
   */
  systemPrompt?: string;
  /** Every audit write of this kind fails (fail-closed tests). */
  failKind?: AuditKind;
  /** The audit keeps what the file store writes at this level (default: everything). */
  auditLevel?: AuditLevel;
  backend?: ScriptedBackendOptions;
  sessionId?: string;
  runId?: string;
  /** The tools offered (default: what a session without MCP servers or skills offers). */
  tools?: ReadonlyMap<string, AnyTool>;
  /** The environment tools' child processes get (default: only PATH). */
  childEnv?: NodeJS.ProcessEnv;
  /** Who answers approval questions (a keyboard over a fake terminal, the editor's approver). */
  approver?: Approver;
  /** Checkpoint file changes for undo under this state directory (real files). */
  checkpointsIn?: string;
}

export interface LoopHarness {
  /** What `runGoal` gets; a test may change any part before `run`. */
  deps: RunDeps;
  backend: ScriptedBackend;
  audit: MemoryAudit;
  session: MemorySession;
  /** Every event the loop emitted, in order. */
  events: AgentEvent[];
  /** The events as `--trace` prints them on stderr, one line each. */
  trace(): string;
  run(goal: string): Promise<RunResult>;
}

export function loopHarness(script: ScriptItem[], opts: LoopOptions): LoopHarness {
  const config = defaultConfig();
  opts.configure?.(config);
  const mode = opts.mode ?? "guarded";
  const sessionId = opts.sessionId ?? "s";
  const tools = opts.tools ?? enabledTools({ hasMcp: false, hasSkills: false });
  const backend = scriptedBackend(script, opts.backend);
  const audit = memoryAudit({
    ...(opts.failKind ? { failKind: opts.failKind } : {}),
    ...(opts.auditLevel ? { level: opts.auditLevel } : {}),
  });
  const session = memorySession(sessionId);
  const events: AgentEvent[] = [];
  const systemPrompt =
    opts.systemPrompt ?? buildSystemPrompt({ tools: [...tools.values()], mode, cwd: opts.cwd });
  const history: Message[] = [{ role: "system", content: systemPrompt }];
  const deps: RunDeps = {
    config,
    mode,
    cwd: opts.cwd,
    backend,
    audit,
    session,
    sessionId,
    runId: opts.runId ?? "run-1",
    gateSettings: buildGateSettings(config, opts.cwd, { mode }),
    tools,
    services: {},
    childEnv: opts.childEnv ?? { PATH: process.env.PATH },
    toolTimeoutMs: LOOP_TOOL_TIMEOUT_MS,
    signal: new AbortController().signal,
    history,
    onEvent: (e) => void events.push(e),
    ...(opts.approver ? { approval: { approver: opts.approver, memory: approvalMemory() } } : {}),
    ...(opts.checkpointsIn
      ? {
          checkpoints: openCheckpointWriter(
            opts.checkpointsIn,
            sessionId,
            path.join(opts.checkpointsIn, "sessions"),
            CHECKPOINT_LIMITS,
            opts.cwd,
          ),
        }
      : {}),
  };
  return {
    deps,
    backend,
    audit,
    session,
    events,
    trace: () =>
      events
        .map(traceLine)
        .filter((l): l is string => l !== undefined)
        .join("\n"),
    run: (goal) => runGoal(deps, goal),
  };
}

/** Gives the harness the nested AGENTS.md tracker a session makes when it opens in `root`. */
export function trackNestedInstructions(h: LoopHarness, root: string): void {
  const tracker = nestedInstructions({
    dirs: loadProjectInstructions(root).dirs,
    settings: h.deps.gateSettings,
    cwd: root,
  });
  if (!tracker) throw new Error("no tracker");
  h.deps.instructions = tracker;
}
