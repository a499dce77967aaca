/**
 * The `serve` methods. Each validates its own params and returns a result or a coded error.
 * Unknown params keys are ignored with a warning on stderr, as the reference v0.9.1 does
 * (its clients send extra keys and must keep working).
 *
 * - `run {goal, resume?}` → `{session_id, reply, turns, usage}`: a new session per request, id
 *   `serve-<ms>-<pid>-<n>`, or the session `resume` names; run with the policy `serve` was
 *   started with. `run.stream` is the same run with every trace event sent before the answer.
 * - `session.list` → `{sessions: [{id, mtime_ms, message_count, first_user_summary, modified,
 *   messages, first_user_message}]}`, newest first (the reference's fields, then Scoot's own).
 * - `session.get {id}` → `{id, messages: [{role, content}]}`.
 * - `audit.query {session_id}` → `{session_id, events: [...]}`, oldest first.
 */
import fs from "node:fs";
import type { AgentEvent } from "../agent/events.js";
import { openAgentSession } from "../agent/session-runner.js";
import type { HomePaths } from "../config/home.js";
import type { Config, PolicyMode } from "../config/schema.js";
import { readAuditEvents } from "../store/audit-readers.js";
import { loadResumeTarget, type ResumeTarget } from "../store/resume-target.js";
import { listSessions, readSession, sessionPath, validateSessionId } from "../store/session.js";
import { sessionExists } from "../store/session-meta.js";
import type { ErrorCode } from "./protocol.js";

export type MethodResult =
  | { ok: true; result: unknown }
  | { ok: false; code: ErrorCode; message: string; extra?: Record<string, unknown> };

/** `events` (given for `run.stream` only) receives each trace event while the request runs. */
export type Method = (
  params: Record<string, unknown>,
  signal: AbortSignal,
  events?: (e: AgentEvent) => void,
) => Promise<MethodResult>;

/** `first_user_summary`: the first user message on one line, cut to this many characters. */
export const SUMMARY_MAX_CHARS = 80;

export function summarize(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > SUMMARY_MAX_CHARS ? `${line.slice(0, SUMMARY_MAX_CHARS - 1)}…` : line;
}

export interface MethodContext {
  config: Config;
  paths: HomePaths;
  cwd: string;
  env: NodeJS.ProcessEnv;
  mode: PolicyMode;
  retries?: number;
  /** `serve --unattended`: bash is sandboxed in every mode that allows it. */
  unattended?: boolean;
  /** Warnings and trace lines: stderr, never stdout. */
  log: (line: string) => void;
  onEvent?: (e: AgentEvent) => void;
  /** Called after each `run` whose loop ran (whatever its outcome). */
  runDone?: () => void;
}

const invalid = (message: string): MethodResult => ({ ok: false, code: "invalid_params", message });

/** Warns (stderr) about keys a method does not take; they are ignored. */
function warnUnknownKeys(
  ctx: MethodContext,
  method: string,
  params: Record<string, unknown>,
  allowed: readonly string[],
): void {
  const extra = Object.keys(params).filter((k) => !allowed.includes(k));
  if (extra.length === 0) return;
  const takes =
    allowed.length === 0 ? "takes no params" : `takes only ${allowed.map((k) => `"${k}"`).join(", ")}`;
  ctx.log(
    `warning: ${method}: ignoring unknown param ${extra.map((k) => `"${k}"`).join(", ")} (${method} ${takes})`,
  );
}

function requireSessionId(
  params: Record<string, unknown>,
  key: string,
): { ok: true; id: string } | MethodResult {
  const v = params[key];
  if (v === undefined) return invalid(`params.${key} is missing`);
  if (typeof v !== "string") return invalid(`params.${key} must be a string`);
  const valid = validateSessionId(v);
  if (!valid.ok) return invalid(valid.error);
  return { ok: true, id: valid.value };
}

let runCounter = 0;
export function newServeSessionId(): string {
  runCounter += 1;
  return `serve-${Date.now()}-${process.pid}-${runCounter}`;
}

export function createMethods(ctx: MethodContext): Record<string, Method> {
  const run = async (
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    events?: (e: AgentEvent) => void,
  ): Promise<MethodResult> => {
    warnUnknownKeys(ctx, method, params, ["goal", "resume"]);
    if (params.goal === undefined) return invalid("params.goal is missing");
    if (typeof params.goal !== "string" || params.goal.trim() === "")
      return invalid("params.goal must be a non-empty string");
    // `resume`: continue that session (docs/sessions.md "Resuming a session").
    let resume: ResumeTarget | undefined;
    if (params.resume !== undefined) {
      if (typeof params.resume !== "string") return invalid("params.resume must be a session id string");
      const loaded = loadResumeTarget(ctx.paths.sessions, params.resume);
      if (!loaded.ok) {
        const missing = !sessionExists(ctx.paths.sessions, params.resume);
        return { ok: false, code: missing ? "not_found" : "invalid_params", message: loaded.error };
      }
      resume = loaded.value;
      for (const w of resume.warnings) ctx.log(`warning: ${w}`);
    }
    const sessionId = resume?.sessionId ?? newServeSessionId();
    const opened = await openAgentSession({
      config: ctx.config,
      paths: ctx.paths,
      cwd: ctx.cwd,
      env: ctx.env,
      sessionId,
      mode: ctx.mode,
      retries: ctx.retries,
      unattended: ctx.unattended ?? false,
      onWarning: (w) => ctx.log(`warning: ${w}`),
      onEvent:
        events || ctx.onEvent
          ? (e) => {
              ctx.onEvent?.(e);
              events?.(e);
            }
          : undefined,
      ...(resume ? { resume: resume.messages } : {}),
    });
    if (!opened.ok)
      return { ok: false, code: "run_failed", message: opened.error, extra: { session_id: sessionId } };
    const agent = opened.value;
    try {
      const r = await agent.run(params.goal, signal);
      ctx.runDone?.();
      if (r.status === "final") {
        return {
          ok: true,
          result: {
            session_id: sessionId,
            reply: r.answer ?? "",
            turns: r.turns,
            usage: r.usage,
            stop: r.stop,
          },
        };
      }
      return {
        ok: false,
        code: "run_failed",
        message: r.error ?? `run ended: ${r.status}`,
        extra: { session_id: sessionId, status: r.status, stop: r.stop, turns: r.turns },
      };
    } finally {
      await agent.close();
    }
  };
  return {
    run: (params, signal) => run("run", params, signal),
    "run.stream": (params, signal, events) => run("run.stream", params, signal, events),

    async "session.list"(params) {
      warnUnknownKeys(ctx, "session.list", params, []);
      const { sessions, warnings } = listSessions(ctx.paths.sessions);
      for (const w of warnings) ctx.log(`warning: ${w}`);
      return {
        ok: true,
        result: {
          sessions: sessions.map((s) => ({
            id: s.id,
            mtime_ms: Math.trunc(s.modified),
            message_count: s.messages,
            first_user_summary: summarize(s.firstUser),
            modified: new Date(s.modified).toISOString(),
            messages: s.messages,
            first_user_message: s.firstUser,
          })),
        },
      };
    },

    async "session.get"(params) {
      warnUnknownKeys(ctx, "session.get", params, ["id"]);
      const id = requireSessionId(params, "id");
      if (!("id" in id)) return id;
      const file = sessionPath(ctx.paths.sessions, id.id);
      if (!fs.existsSync(file) && !fs.existsSync(`${file}.1`)) {
        return { ok: false, code: "not_found", message: `no session "${id.id}"` };
      }
      const { messages, warnings } = readSession(file);
      for (const w of warnings) ctx.log(`warning: ${w}`);
      return { ok: true, result: { id: id.id, messages } };
    },

    async "audit.query"(params) {
      warnUnknownKeys(ctx, "audit.query", params, ["session_id"]);
      const id = requireSessionId(params, "session_id");
      if (!("id" in id)) return id;
      const { events, warnings } = readAuditEvents(ctx.paths.audit, id.id);
      for (const w of warnings) ctx.log(`warning: ${w}`);
      return { ok: true, result: { session_id: id.id, events } };
    },
  };
}
