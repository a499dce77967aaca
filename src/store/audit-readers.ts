/**
 * Reading the audit log: every retained event, oldest generation first, whole or streamed,
 * and the canonical form `audit show` prints.
 */
import { auditSources } from "./audit-rotation.js";
import { type JsonlItem, looksLikeObject, readJsonl, readJsonlSync } from "./lines.js";

export interface AuditEvent {
  seq: number;
  ts: number;
  session_id: string;
  run_id?: string;
  kind: string;
  msg: string;
  /**
   * On `tool_call`, `policy_deny`, `approval` and `observation` records: the call as fields, so
   * no reader parses `msg` (docs/sessions.md "Sessions and audit"). Absent on older lines.
   */
  call?: AuditCall;
  /** Hash of the previous line (see audit-chain.ts); absent only on lines older than the chain. */
  prev?: string;
}

/** A call's facts on its audit records. */
export interface AuditCall {
  tool: string;
  /** `approval` records: what was decided (`run`, `refuse`, `ask`) or the person's answer. */
  decision?: "run" | "refuse" | "ask" | "once" | "always";
  /** `policy_deny`, a refusing `approval`, `observation`: how the call ended. */
  outcome?: "ran" | "refused" | "denied" | "failed" | "interrupted";
  rule?: string;
  exit_code?: number;
}

function isEvent(v: unknown): v is AuditEvent {
  const e = v as AuditEvent;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.seq === "number" &&
    typeof e.ts === "number" &&
    typeof e.session_id === "string" &&
    typeof e.kind === "string" &&
    typeof e.msg === "string"
  );
}

/** Every retained event, oldest generation first, then the live file. Optionally one session only. */
export function readAuditEvents(
  live: string,
  sessionId?: string,
): { events: AuditEvent[]; warnings: string[] } {
  const events: AuditEvent[] = [];
  const warnings: string[] = [];
  for (const file of auditSources(live)) {
    for (const item of readJsonlSync(file, isEvent)) {
      if (item.warning !== undefined) warnings.push(item.warning);
      else if (sessionId === undefined || item.record.session_id === sessionId) events.push(item.record);
    }
  }
  return { events, warnings };
}

/**
 * The same events and warnings as readAuditEvents, in the same order, as they are read: a
 * caller can print each one at once and hold none (`audit show` on a log of any size).
 */
export async function* streamAuditEvents(
  live: string,
  sessionId?: string,
): AsyncGenerator<JsonlItem<AuditEvent>> {
  // A line that does not contain the session id cannot be one of its events (the writer's
  // JSON.stringify never escapes an id's characters), so it is not parsed unless it looks
  // damaged: a line that is not a whole object still gets its warning.
  const id = sessionId === undefined ? undefined : Buffer.from(JSON.stringify(sessionId));
  const skip = id && ((line: Buffer) => !line.includes(id) && looksLikeObject(line));
  for (const file of auditSources(live)) {
    for await (const item of readJsonl(file, isEvent, skip)) {
      if (item.warning !== undefined || sessionId === undefined || item.record.session_id === sessionId)
        yield item;
    }
  }
}

/** Canonical key order for printing, whatever order the line was written in. */
export function formatEvent(e: AuditEvent): string {
  const out: Record<string, unknown> = { seq: e.seq, ts: e.ts, session_id: e.session_id };
  if (e.run_id !== undefined) out.run_id = e.run_id;
  out.kind = e.kind;
  out.msg = e.msg;
  return JSON.stringify(out);
}
