/**
 * The audit log: `logs/audit.jsonl`, one event per line written with a single append, so
 * concurrent Scoot processes never interleave inside a line.
 *
 * Rotation retires the live file as `audit.jsonl.<gen>`. The next generation number lives
 * in `audit.jsonl.gen` and is written *before* the retirement, and retirement uses link()
 * (which refuses to overwrite), so a number is never reused even across crashes. At most
 * `max_retained_generations` retired files stay; each eviction is recorded in
 * `audit.jsonl.gaps.jsonl` so bounded retention never becomes an invisible loss.
 */
import fs from "node:fs";
import path from "node:path";
import type { AuditLevel } from "../config/schema.js";
import type { Result } from "../tools/types.js";
import { clipAuditMessage } from "./audit-clip.js";
import { withLock } from "./audit-lock.js";
import { fileSize, needsLeadingNewline, readTextIfExists } from "./jsonl.js";
import { type JsonlItem, looksLikeObject, readJsonl, readJsonlSync } from "./lines.js";
import { redact } from "./redact.js";

export type AuditKind =
  | "run"
  | "thought"
  | "tool_call"
  | "observation"
  | "final"
  | "policy_deny"
  | "system_error"
  | "backend";

export const KIND_LEVEL: Record<AuditKind, AuditLevel> = {
  run: "info",
  thought: "info",
  tool_call: "info",
  observation: "info",
  final: "info",
  policy_deny: "warn",
  system_error: "error",
  backend: "debug",
};

const LEVEL_RANK: Record<AuditLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface AuditEvent {
  seq: number;
  ts: number;
  session_id: string;
  run_id?: string;
  kind: string;
  msg: string;
}

export interface GapRecord {
  gap_from: number;
  gap_to: number;
  ts: number;
}

export interface AuditFiles {
  live: string;
  genSidecar: string;
  gaps: string;
  lock: string;
}

export function auditFiles(live: string): AuditFiles {
  return { live, genSidecar: `${live}.gen`, gaps: `${live}.gaps.jsonl`, lock: `${live}.lock` };
}

export interface AuditOptions {
  file: string;
  level: AuditLevel;
  toFile: boolean;
  maxRetained: number;
  maxFileBytes: number;
}

export interface AuditLog {
  /** Writes one event. An error means the event is not on disk: the caller must stop (fail closed). */
  emit(sessionId: string, kind: AuditKind, msg: string, runId?: string): Result<AuditEvent | undefined>;
}

/** The audit options a loaded configuration asks for. */
export function auditOptions(
  audit: { level: AuditLevel; to_file: boolean; max_retained_generations: number; max_file_bytes: number },
  file: string,
): AuditOptions {
  return {
    file,
    level: audit.level,
    toFile: audit.to_file,
    maxRetained: audit.max_retained_generations,
    maxFileBytes: audit.max_file_bytes,
  };
}

export function createAuditLog(opts: AuditOptions): AuditLog {
  const files = auditFiles(opts.file);
  let seq = 0;
  let checkedTail = false;
  return {
    emit(sessionId, kind, rawMsg, runId) {
      const msg = clipAuditMessage(rawMsg);
      if (!opts.toFile) return { ok: true, value: undefined };
      if (LEVEL_RANK[KIND_LEVEL[kind]] < LEVEL_RANK[opts.level]) return { ok: true, value: undefined };
      // Key order is the seed's: seq, ts, session_id, run_id?, kind, msg.
      const event: AuditEvent = {
        seq,
        ts: Date.now(),
        session_id: sessionId,
        ...(runId ? { run_id: runId } : {}),
        kind,
        msg: redact(msg),
      };
      let line = `${JSON.stringify(event)}\n`;
      try {
        const bytes = Buffer.byteLength(line);
        const size = fileSize(files.live);
        if (size > 0 && size + bytes > opts.maxFileBytes) {
          withLock(files.lock, () => rotateIfStillFull(files, bytes, opts));
        }
        if (!checkedTail) {
          checkedTail = true;
          if (needsLeadingNewline(files.live)) line = `\n${line}`;
        }
        fs.appendFileSync(files.live, line, { mode: 0o600 });
      } catch (e) {
        return { ok: false, error: `cannot write the audit log ${files.live}: ${(e as Error).message}` };
      }
      seq += 1;
      return { ok: true, value: event };
    },
  };
}

/** Re-checked under the lock: another process may have rotated while we waited. */
function rotateIfStillFull(files: AuditFiles, incoming: number, opts: AuditOptions): void {
  const size = fileSize(files.live);
  if (size === 0 || size + incoming <= opts.maxFileBytes) return;
  let gen = nextGeneration(files);
  for (;;) {
    writeNextGeneration(files, gen + 1);
    try {
      fs.linkSync(files.live, `${files.live}.${gen}`);
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EEXIST") throw e;
      gen += 1;
    }
  }
  fs.unlinkSync(files.live);
  evict(files, opts.maxRetained);
}

/** Retired generation numbers present on disk, ascending. */
export function retiredGenerations(live: string): number[] {
  const dir = path.dirname(live);
  const base = path.basename(live);
  const prefix = `${base}.`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
    .map((n) => Number(n.slice(prefix.length)))
    .sort((a, b) => a - b);
}

/** The next number: the sidecar, but never at or below anything already on disk or in a gap. */
function nextGeneration(files: AuditFiles): number {
  let next = 1;
  const sidecar = Number.parseInt(readTextIfExists(files.genSidecar)?.trim() ?? "", 10);
  if (Number.isInteger(sidecar) && sidecar > next) next = sidecar;
  const onDisk = retiredGenerations(files.live);
  const maxOnDisk = onDisk[onDisk.length - 1];
  if (maxOnDisk !== undefined && maxOnDisk + 1 > next) next = maxOnDisk + 1;
  for (const gap of readGaps(files.live).gaps) if (gap.gap_to + 1 > next) next = gap.gap_to + 1;
  return next;
}

function writeNextGeneration(files: AuditFiles, next: number): void {
  // Written only under the rotation lock, so one fixed name suffices, and a writer killed
  // mid-rotation leaves at most this one file, which the next rotation overwrites.
  const tmp = `${files.genSidecar}.tmp`;
  const fd = fs.openSync(tmp, "w", 0o600);
  try {
    fs.writeSync(fd, `${next}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, files.genSidecar);
}

function evict(files: AuditFiles, maxRetained: number): void {
  const gens = retiredGenerations(files.live);
  while (gens.length > maxRetained) {
    const oldest = gens.shift()!;
    fs.rmSync(`${files.live}.${oldest}`, { force: true });
    const gap: GapRecord = { gap_from: oldest, gap_to: oldest, ts: Date.now() };
    fs.appendFileSync(files.gaps, `${JSON.stringify(gap)}\n`, { mode: 0o600 });
  }
}

function isGap(v: unknown): v is GapRecord {
  const g = v as GapRecord;
  return typeof g === "object" && g !== null && Number.isInteger(g.gap_from) && Number.isInteger(g.gap_to);
}

/** The gap records, read line by line (issue 16: bounded memory whatever the file size). */
export function readGaps(live: string): { gaps: GapRecord[]; warnings: string[] } {
  const files = auditFiles(live);
  const gaps: GapRecord[] = [];
  const warnings: string[] = [];
  for (const item of readJsonlSync(files.gaps, isGap)) {
    if (item.warning !== undefined) warnings.push(item.warning);
    else gaps.push(item.record);
  }
  return { gaps, warnings };
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

function auditSources(live: string): string[] {
  return [...retiredGenerations(live).map((g) => `${live}.${g}`), live];
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
 * caller can print each one at once and hold none (issue 16: `audit show` on a log of any size).
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
