/**
 * `--resume <id>` and `--continue` (README "Resuming a session"): which session a run
 * continues and the conversation it continues from. Shared by `-e`, the REPL (`/resume`)
 * and `serve`'s `run {resume}`. Every refusal is a usage error (exit 2) naming the session.
 */

import type { Result } from "../core/types.js";
import type { Message } from "../store/session.js";
import { readSession, sessionPath, validateSessionId } from "../store/session.js";
import { latestSessionOfProject, sessionExists } from "../store/session-meta.js";
import { flagBool, flagString, type ParsedArgs } from "./args.js";

export interface ResumeTarget {
  sessionId: string;
  messages: Message[];
  warnings: string[];
}

/** Loads session `id` for continuing it, or says why it cannot be. */
export function loadResumeTarget(sessionsDir: string, id: string): Result<ResumeTarget> {
  const valid = validateSessionId(id);
  if (!valid.ok) return { ok: false, error: `--resume: ${valid.error}` };
  if (!sessionExists(sessionsDir, id)) {
    return {
      ok: false,
      error: `no session "${id}" to resume in ${sessionsDir} (see scoot sessions list)`,
    };
  }
  // A session in use by a live run is refused when the agent session claims it
  // (claimSession in src/store/session.ts), before anything is written.
  const { messages, warnings } = readSession(sessionPath(sessionsDir, id));
  return { ok: true, value: { sessionId: id, messages, warnings } };
}

/**
 * From the flags: undefined when the run starts a new session. `--resume` and `--continue`
 * exclude each other and `--session-id` (a resumed session keeps its own id).
 */
export function resumeFromFlags(
  args: ParsedArgs,
  sessionsDir: string,
  cwd: string,
): Result<ResumeTarget | undefined> {
  const id = flagString(args, "resume");
  const cont = flagBool(args, "continue");
  if (id !== undefined && cont)
    return { ok: false, error: "use either --resume <id> or --continue, not both" };
  if ((id !== undefined || cont) && flagString(args, "session-id") !== undefined) {
    return {
      ok: false,
      error: `--session-id cannot be combined with ${cont ? "--continue" : "--resume"}: a resumed session keeps its id`,
    };
  }
  if (id !== undefined) return loadResumeTarget(sessionsDir, id);
  if (!cont) return { ok: true, value: undefined };
  const latest = latestSessionOfProject(sessionsDir, cwd);
  if (!latest.ok) return latest;
  return loadResumeTarget(sessionsDir, latest.value);
}
