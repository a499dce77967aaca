/**
 * The audit log and the session transcript with their append target checked before every
 * write: a symlink or a special file at `logs/audit.jsonl` or
 * `state/sessions/<id>.jsonl` fails the write with a clear error (the run then stops: no
 * tool runs without its record) instead of writing through it. The audit writer also opens its
 * file without following links; the check here names the problem before any write.
 */

import { appendTargetProblem } from "../core/safe-open.js";
import { auditFiles } from "./audit-rotation.js";
import type { AuditLog } from "./audit-writer.js";
import type { SessionWriter } from "./session.js";

export function guardAuditLog(inner: AuditLog, file: string): AuditLog {
  return {
    ...inner,
    emit(sessionId, kind, msg, runId) {
      // The live file and the gap record are appended to; the generation sidecar and the lock
      // are created by rename and O_EXCL, which never write through a link.
      const problem = appendTargetProblem(file) ?? appendTargetProblem(auditFiles(file).gaps);
      if (problem) return { ok: false, error: `cannot write the audit log: ${problem}` };
      return inner.emit(sessionId, kind, msg, runId);
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
