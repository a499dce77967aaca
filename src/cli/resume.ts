/**
 * `--resume <id>` and `--continue` (docs/sessions.md "Resuming a session"): which session a run
 * continues, chosen from the flags. Every refusal is a usage error (exit 2) naming the session.
 */

import type { Result } from "../core/types.js";
import { loadResumeTarget, type ResumeTarget } from "../store/resume-target.js";
import { latestSessionOfProject } from "../store/session-meta.js";
import { flagBool, flagString, type ParsedArgs } from "./args.js";

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
  const latest = latestSessionOfProject(sessionsDir, cwd, "use --resume <id>");
  if (!latest.ok) return { ok: false, error: latest.error.replace(/^no session/, "no session to continue") };
  return loadResumeTarget(sessionsDir, latest.value);
}
