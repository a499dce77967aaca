/**
 * The audit log a test home holds, read the plain way: `<home>/logs/audit.jsonl`, one JSON
 * record a line. The store's own reader (readAuditEvents) checks the chain and is tested in
 * test/store/; end-to-end tests want the records exactly as the CLI wrote them.
 */
import fs from "node:fs";
import path from "node:path";

/** One record as written: the fields tests read are typed, the rest are still there. */
export interface AuditLine {
  session_id: string;
  kind: string;
  msg: string;
  run_id?: string;
  seq?: number;
  [field: string]: unknown;
}

export interface AuditFileOptions {
  /** Only this session's records. */
  sessionId?: string;
  /** No audit file yet reads as no records (default: a missing file fails the test). */
  missingOk?: boolean;
}

export function auditFile(home: string): string {
  return path.join(home, "logs", "audit.jsonl");
}

export function auditEvents(home: string, opts: AuditFileOptions = {}): AuditLine[] {
  const file = auditFile(home);
  if (opts.missingOk && !fs.existsSync(file)) return [];
  const lines = fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as AuditLine);
  return opts.sessionId === undefined ? lines : lines.filter((e) => e.session_id === opts.sessionId);
}
