/**
 * Batches the collector would not take, set aside beside the cursor
 * (`state/telemetry-rejected.jsonl`): a refusal the OTLP specification says must not be retried
 * (HTTP 400, 401, 403, 404, 413, …: everything but 429, 502, 503 and 504), or a partial success
 * (`rejected_log_records` > 0). The exporter records the batch here, with the collector's
 * message, *before* it moves the cursor past it, so nothing is lost without a trace and nothing
 * waits behind a batch that can never be delivered.
 *
 * A record names the batch by its cursors (`from` is exactly what `state/telemetry-cursor.json`
 * holds, so writing it there sends the batch again once the collector is fixed) and by its first
 * and last event. The events themselves stay in the audit log.
 */
import fs from "node:fs";
import { appendTargetProblem } from "../core/safe-open.js";
import type { Result } from "../core/types.js";
import { needsLeadingNewline } from "../store/jsonl.js";
import type { SourceItem } from "./audit-source.js";
import type { Cursor } from "./cursor.js";

export const REJECTED_FILE = "telemetry-rejected.jsonl";
/** Past this size the file is moved to `<file>.1` (replacing the older one): a collector that refuses everything for weeks cannot fill the disk. */
export const MAX_REJECTED_FILE_BYTES = 16 * 1024 * 1024;

export interface RejectedRecord {
  ts: string;
  /** `refused`: the collector answered with a non-retryable HTTP status; `partial`: it took some records only. */
  reason: "refused" | "partial";
  /** The HTTP status of a refusal. */
  status?: number;
  /** The collector's own message (redacted, clipped). */
  message: string;
  /** Records the collector did not take (the whole batch for a refusal). */
  rejected: number;
  events: number;
  gaps: number;
  /** The cursor before the batch (null: the start of the log); write it to the cursor file to send the batch again. */
  from: Cursor | null;
  /** The cursor after the batch. */
  to: Cursor;
  first?: { session_id: string; seq: number };
  last?: { session_id: string; seq: number };
}

function identity(item: SourceItem | undefined): { session_id: string; seq: number } | undefined {
  return item?.type === "event" ? { session_id: item.event.session_id, seq: item.event.seq } : undefined;
}

export function rejectedRecord(opts: {
  reason: RejectedRecord["reason"];
  status?: number;
  message: string;
  rejected: number;
  items: readonly SourceItem[];
  from: Cursor | undefined;
  to: Cursor;
  now?: Date;
}): RejectedRecord {
  const events = opts.items.filter((i) => i.type === "event");
  const first = identity(events[0]);
  const last = identity(events.at(-1));
  return {
    ts: (opts.now ?? new Date()).toISOString(),
    reason: opts.reason,
    ...(opts.status !== undefined ? { status: opts.status } : {}),
    message: opts.message,
    rejected: opts.rejected,
    events: events.length,
    gaps: opts.items.length - events.length,
    from: opts.from ?? null,
    to: opts.to,
    ...(first ? { first } : {}),
    ...(last ? { last } : {}),
  };
}

/** Appends one record and syncs it to disk (it must be there before the cursor moves). */
export function appendRejected(file: string, record: RejectedRecord): Result<void> {
  const problem = appendTargetProblem(file);
  if (problem) return { ok: false, error: problem };
  try {
    const st = fs.statSync(file, { throwIfNoEntry: false });
    if (st && st.size > MAX_REJECTED_FILE_BYTES) fs.renameSync(file, `${file}.1`);
    const line = `${needsLeadingNewline(file) ? "\n" : ""}${JSON.stringify(record)}\n`;
    const fd = fs.openSync(
      file,
      fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW,
      0o600,
    );
    try {
      fs.writeSync(fd, line);
      fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return { ok: true, value: undefined };
  } catch (e) {
    return { ok: false, error: `cannot record the rejected batch in ${file}: ${(e as Error).message}` };
  }
}
