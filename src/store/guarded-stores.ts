/**
 * The audit log and the session transcript with their append target checked before every
 * write: a symlink or a special file at `logs/audit.jsonl` or
 * `state/sessions/<id>.jsonl` fails the write with a clear error (the run then stops: no
 * tool runs without its record) instead of writing through it. The audit writer also opens its
 * file without following links; the check here names the problem before any write.
 */

import type { HomePaths } from "../config/home.js";
import type { Config } from "../config/schema.js";
import { appendTargetProblem } from "../core/safe-open.js";
import type { Result } from "../core/types.js";
import { auditFiles } from "./audit-rotation.js";
import { type AuditLog, auditOptions, createAuditLog, openAuditLog } from "./audit-writer.js";
import type { SessionWriter } from "./session.js";

/** When the audit key is read: now (a missing or bad key refuses the command) or at the first write. */
export type AuditKeyLoad = "now" | "at first write";

/**
 * The home's audit log, as the config sets it up, guarded against links planted at its files.
 * A command that must not start without a usable key loads it now; a long-lived server that
 * should start anyway (and fail the first write that needs it) loads it at the first write.
 */
export function openHomeAudit(
  config: Pick<Config, "audit">,
  paths: Pick<HomePaths, "audit">,
): Result<AuditLog>;
export function openHomeAudit(
  config: Pick<Config, "audit">,
  paths: Pick<HomePaths, "audit">,
  key: "at first write",
): AuditLog;
export function openHomeAudit(
  config: Pick<Config, "audit">,
  paths: Pick<HomePaths, "audit">,
  key: AuditKeyLoad = "now",
): Result<AuditLog> | AuditLog {
  const opts = auditOptions(config.audit, paths.audit);
  if (key === "at first write") return guardAuditLog(createAuditLog(opts), paths.audit);
  const opened = openAuditLog(opts);
  if (!opened.ok) return opened;
  return { ok: true, value: guardAuditLog(opened.value, paths.audit) };
}

export function guardAuditLog(inner: AuditLog, file: string): AuditLog {
  return {
    ...inner,
    emit(sessionId, kind, msg, runId, call) {
      // The live file and the gap record are appended to; the generation sidecar and the lock
      // are created by rename and O_EXCL, which never write through a link.
      const problem = appendTargetProblem(file) ?? appendTargetProblem(auditFiles(file).gaps);
      if (problem) return { ok: false, error: `cannot write the audit log: ${problem}` };
      return inner.emit(sessionId, kind, msg, runId, call);
    },
  };
}

export function guardSession(inner: SessionWriter): SessionWriter {
  return {
    ...inner,
    append(message) {
      const problem = appendTargetProblem(inner.path);
      if (problem) throw new Error(problem);
      inner.append(message);
    },
  };
}
