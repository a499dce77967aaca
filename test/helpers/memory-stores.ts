/**
 * In-memory stores for loop tests: an audit log and a session transcript that keep what the
 * loop writes in arrays, behind the same public interfaces as the file stores (`AuditLog`,
 * `SessionWriter`). The file stores have their own tests (test/store/); here a test sees what
 * the loop asks of them and in which order, and can make one kind of audit write fail.
 */

import type { AuditLevel } from "../../src/config/schema.js";
import type { AuditCall } from "../../src/store/audit-readers.js";
import { ALWAYS_WRITTEN, type AuditKind, type AuditLog, KIND_LEVEL } from "../../src/store/audit-writer.js";
import type { Message, SessionWriter } from "../../src/store/session.js";

export interface MemoryAuditRecord {
  sessionId: string;
  kind: AuditKind;
  msg: string;
  runId?: string;
  call?: AuditCall;
}

export interface MemoryAuditOptions {
  /** Every write of this kind fails, as a full disk would fail it. */
  failKind?: AuditKind;
  /** The text of the failure (default `disk full (test)`). */
  failure?: string;
  /**
   * Keep only what the file store writes at this `audit.level` (the security record always);
   * default: every record the loop emits, debug ones too.
   */
  level?: AuditLevel;
}

/** Levels from least to most severe, as `audit.level` orders them. */
const LEVELS: readonly AuditLevel[] = ["debug", "info", "warn", "error"];

function kept(kind: AuditKind, level: AuditLevel | undefined): boolean {
  if (level === undefined || ALWAYS_WRITTEN.has(kind)) return true;
  return LEVELS.indexOf(KIND_LEVEL[kind]) >= LEVELS.indexOf(level);
}

export interface MemoryAudit extends AuditLog {
  /** Every record written, in order (failed writes are not here). */
  records: MemoryAuditRecord[];
  kinds(): AuditKind[];
  flushes: number;
}

export function memoryAudit(opts: MemoryAuditOptions = {}): MemoryAudit {
  const records: MemoryAuditRecord[] = [];
  const audit: MemoryAudit = {
    records,
    flushes: 0,
    kinds: () => records.map((r) => r.kind),
    emit(sessionId, kind, msg, runId, call) {
      if (kind === opts.failKind) return { ok: false, error: opts.failure ?? "disk full (test)" };
      if (!kept(kind, opts.level)) return { ok: true, value: undefined };
      records.push({
        sessionId,
        kind,
        msg,
        ...(runId === undefined ? {} : { runId }),
        ...(call ? { call } : {}),
      });
      return { ok: true, value: undefined };
    },
    flush() {
      audit.flushes += 1;
      return { ok: true, value: undefined };
    },
    close: () => {},
  };
  return audit;
}

export interface MemorySession extends SessionWriter {
  /** Every message appended, in order: what the transcript file would hold. */
  messages: Message[];
}

export function memorySession(id = "s", file = `/in-memory/${id}.jsonl`): MemorySession {
  const messages: Message[] = [];
  return { id, path: file, messages, append: (m) => void messages.push({ ...m }) };
}
