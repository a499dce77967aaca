/**
 * The audit log bound once to one run: the loop and the call pipeline write
 * `record(kind, msg)` instead of passing session and run ids on every call.
 */

import type { Result } from "../core/types.js";
import type { AuditCall } from "../store/audit-readers.js";
import type { AuditKind, AuditLog } from "../store/audit-writer.js";

export type RunAudit = (kind: AuditKind, msg: string, call?: AuditCall) => Result<void>;

export function auditForRun(audit: AuditLog, sessionId: string, runId: string): RunAudit {
  return (kind, msg, call) => {
    try {
      const r = audit.emit(sessionId, kind, msg, runId, call);
      return r.ok ? { ok: true, value: undefined } : { ok: false, error: r.error };
    } catch (e) {
      // A store that throws is as unwritable as one that says so.
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  };
}

/**
 * An audit record (or the transcript, or a file tool's undo checkpoint) could not be written.
 * The call it belonged to did not run, and the run stops: no tool runs without its record
 * (docs/sessions.md "Sessions and audit").
 */
export interface NotRecorded {
  kind: "not_recorded";
  error: string;
  /** The rule the stop message names; absent: the audit record's. */
  rule?: string;
}

/** The stop message's rule when a record could not be written. */
export const AUDIT_RECORD_RULE = "no tool runs without an audit record";
/** The stop message's rule when a file tool's undo checkpoint could not be written (docs/sessions.md "Undo"). */
export const UNDO_CHECKPOINT_RULE = "no file changes without its undo checkpoint";

export function notRecorded(error: string, rule?: string): NotRecorded {
  return { kind: "not_recorded", error, ...(rule ? { rule } : {}) };
}

export function isNotRecorded(v: unknown): v is NotRecorded {
  return typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "not_recorded";
}
