/**
 * The exporter's cursor: how far the collector has acknowledged the audit log. It names the
 * generation being read (the live file carries the number it will have once retired), the
 * byte offset just past the last acknowledged line, and that line's chain hash, so a resumed
 * exporter can prove the file at that offset is still the one it shipped from.
 *
 * Written atomically (temp + rename) after each acknowledged batch and never before: a crash
 * re-sends at most one batch (at-least-once), never skips one.
 */
import { atomicWriteFile } from "../core/atomic-write.js";
import type { Result } from "../core/types.js";
import { readTextIfExists } from "../store/jsonl.js";

export interface Cursor {
  generation: number;
  offset: number;
  /** Chain hash of the line that ends at `offset`; absent at offset 0. */
  hash?: string;
}

export const CURSOR_FILE = "telemetry-cursor.json";
/** Where an exporter with no cursor starts: the oldest generation there ever was. */
export const START: Cursor = { generation: 1, offset: 0 };
const HASH = /^[0-9a-f]{64}$/;

function isCount(v: unknown, min: number): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= min;
}

/** The cursor on disk; missing → undefined; damaged → an error naming the file and how to fix it. */
export function readCursor(file: string): Result<Cursor | undefined> {
  let text: string | undefined;
  try {
    text = readTextIfExists(file);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  if (text === undefined) return { ok: true, value: undefined };
  const fix = `delete ${file} to export the whole retained log again (backends deduplicate on session_id, seq, chain)`;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, error: `${file} is not valid JSON; ${fix}` };
  }
  const c = v as Record<string, unknown>;
  if (typeof v !== "object" || v === null || !isCount(c.generation, 1) || !isCount(c.offset, 0))
    return {
      ok: false,
      error: `${file} needs a generation (>= 1) and an offset (>= 0), whole numbers; ${fix}`,
    };
  if (c.hash !== undefined && (typeof c.hash !== "string" || !HASH.test(c.hash)))
    return { ok: false, error: `${file}: hash must be 64 hex digits; ${fix}` };
  if (c.offset > 0 && c.hash === undefined)
    return { ok: false, error: `${file}: an offset past 0 needs the hash of the line before it; ${fix}` };
  return {
    ok: true,
    value: {
      generation: c.generation,
      offset: c.offset,
      ...(typeof c.hash === "string" ? { hash: c.hash } : {}),
    },
  };
}

export function writeCursor(file: string, cursor: Cursor): Result<void> {
  const w = atomicWriteFile(file, `${JSON.stringify(cursor)}\n`, { mode: 0o600 });
  return w.ok ? { ok: true, value: undefined } : { ok: false, error: `cannot write ${file}: ${w.error}` };
}
