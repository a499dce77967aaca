/**
 * The session a run continues and the conversation it continues from: shared by `-e`
 * (`--resume`, `--continue`), the REPL (`/resume`), `serve`'s `run {resume}`, ACP and the
 * library.
 */
import type { Result } from "../core/types.js";
import type { Message } from "./session.js";
import { readSession, sessionPath, validateSessionId } from "./session.js";
import { sessionExists } from "./session-meta.js";

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
      error: `no session "${id}" to resume in ${sessionsDir} (see scoot sessions list --all)`,
    };
  }
  // A session in use by a live run is refused when the agent session claims it
  // (claimSession in src/store/session.ts), before anything is written.
  const { messages, warnings } = readSession(sessionPath(sessionsDir, id));
  return { ok: true, value: { sessionId: id, messages, warnings } };
}
