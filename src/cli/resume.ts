/**
 * `--resume <id>` and `--continue` (docs/sessions.md "Resuming a session"): which session a run
 * continues, chosen from the flags. Every refusal is a usage error (exit 2) naming the session.
 */

import fs from "node:fs";
import type { Result } from "../core/types.js";
import { loadResumeTarget, type ResumeTarget } from "../store/resume-target.js";
import { sessionPath, transcriptFiles } from "../store/session.js";
import { latestSessionOfProject } from "../store/session-meta.js";
import { flagBool, flagString, type ParsedArgs } from "./args.js";
import { relativeTime } from "./relative-time.js";
import { goalCount } from "./repl/last-exchange.js";

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

/** When the session's transcript last changed (its newest file), or undefined when none can be read. */
function lastChanged(sessionsDir: string, id: string): number | undefined {
  // The live file is written last: only when it is gone (retired just now) are the parts
  // looked for, a listing of the whole sessions directory.
  const live = fs.lstatSync(sessionPath(sessionsDir, id), { throwIfNoEntry: false });
  if (live !== undefined) return live.mtimeMs;
  let newest: number | undefined;
  for (const f of transcriptFiles(sessionPath(sessionsDir, id))) {
    try {
      const m = fs.lstatSync(f).mtimeMs;
      newest = newest === undefined ? m : Math.max(newest, m);
    } catch {
      // a part removed since: the others still say when
    }
  }
  return newest;
}

/**
 * The line that says which session a run continues, e.g. `continuing session repl-… (3 goals,
 * last 5 min ago)`: said before anything is written to it, so "last" is the earlier work.
 */
export function continuingLine(target: ResumeTarget, sessionsDir: string, now: number): string {
  const goals = goalCount(target.messages);
  const when = lastChanged(sessionsDir, target.sessionId);
  const counted = goals === 0 ? "no goals yet" : `${goals} goal${goals === 1 ? "" : "s"}`;
  return `continuing session ${target.sessionId} (${counted}${when === undefined ? "" : `, last ${relativeTime(when, now)}`})`;
}
