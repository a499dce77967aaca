/**
 * Reads the durable audit log from a cursor, for the exporter and the metrics: the retired
 * generations in order, then the live file (docs/sessions.md "Sessions and audit" has the layout).
 * Nothing here writes the log or takes its lock for long: the audit writer stays the only
 * writer, and an exporter that is slow or down never delays a run.
 *
 * - The live file carries the generation number it will have once retired (the `.gen`
 *   sidecar's next number), so a cursor inside it stays valid across the rotation.
 * - Only newline-terminated lines of the live file are taken; a line being written waits for
 *   the next pass. A torn fragment (a writer was killed) is skipped with a warning.
 * - Generations that retention removed before they were read become one `gap` item per run of
 *   consecutive numbers, so the collector learns of the loss instead of never hearing of it.
 * - Resuming at an offset checks the chain hash of the line that ends there. A file that is
 *   not what the cursor saw (a rotation raced the reading, a log was replaced) is read again
 *   from its start: a duplicate, which the identity (session_id, seq, chain) absorbs, never a
 *   hole.
 */
import fs from "node:fs";
import { openStoreFileSync } from "../core/safe-open.js";
import { linkHash } from "../store/audit-chain.js";
import type { AuditEvent } from "../store/audit-readers.js";
import { readGaps, retiredGenerations } from "../store/audit-rotation.js";
import { lastLineOf, readTextIfExists } from "../store/jsonl.js";
import { readByteLinesFromSync } from "../store/lines.js";
import { type Cursor, START } from "./cursor.js";

export type SourceItem =
  | {
      type: "event";
      event: AuditEvent;
      /** The chain hash of the event's line: what the next line's `prev` holds. */
      chain: string;
      generation: number;
    }
  | { type: "gap"; from: number; to: number; chain: string };

export interface Batch {
  items: SourceItem[];
  /** The cursor to store once these items are acknowledged. */
  next: Cursor;
  /** Lines skipped (torn, not an event) and cursor repairs, each naming where. */
  warnings: string[];
  /** True when the batch ends at the end of the live file: nothing more to read now. */
  caughtUp: boolean;
}

export interface BatchLimits {
  maxItems: number;
  /** Sum of the message bytes; keeps one request well under a collector's body limit. */
  maxBytes: number;
}

/** A gap record spanning more numbers than this is damage, not history: it is ignored. */
const MAX_GAP_SPAN = 1_000_000;
/** Re-reading after a detected race is bounded: more than this means something else is wrong. */
const MAX_SNAPSHOTS = 16;

interface Snapshot {
  retired: number[];
  /** Generation numbers recorded as evicted (sorted, unique). */
  evicted: number[];
  /** The number the live file will get when it is retired. */
  liveGen: number;
}

function isEvent(v: unknown): v is AuditEvent {
  const e = v as Record<string, unknown>;
  return (
    typeof v === "object" &&
    v !== null &&
    Number.isSafeInteger(e.seq) &&
    (e.seq as number) >= 0 &&
    typeof e.ts === "number" &&
    Number.isFinite(e.ts) &&
    typeof e.session_id === "string" &&
    typeof e.kind === "string" &&
    typeof e.msg === "string" &&
    (e.run_id === undefined || typeof e.run_id === "string")
  );
}

function sidecarNext(live: string): number | undefined {
  const first = (readTextIfExists(`${live}.gen`) ?? "").split("\n")[0]?.trim() ?? "";
  if (!/^\d{1,15}$/.test(first)) return undefined;
  const n = Number(first);
  return n >= 1 ? n : undefined;
}

function snapshot(live: string, warnings: string[]): Snapshot {
  const retired = retiredGenerations(live).filter((g) => Number.isSafeInteger(g) && g >= 1);
  const evictedSet = new Set<number>();
  for (const g of readGaps(live).gaps) {
    const ok =
      Number.isSafeInteger(g.gap_from) &&
      Number.isSafeInteger(g.gap_to) &&
      g.gap_from >= 1 &&
      g.gap_to >= g.gap_from &&
      g.gap_to - g.gap_from <= MAX_GAP_SPAN;
    if (!ok) {
      warnings.push(`${live}.gaps.jsonl: ignored a gap record with an impossible range`);
      continue;
    }
    for (let n = g.gap_from; n <= g.gap_to; n++) evictedSet.add(n);
  }
  const evicted = [...evictedSet].sort((a, b) => a - b);
  let liveGen = Math.max(1, sidecarNext(live) ?? 1);
  const top = Math.max(retired.at(-1) ?? 0, evicted.at(-1) ?? 0);
  if (top + 1 > liveGen) liveGen = top + 1;
  return { retired, evicted, liveGen };
}

/** The smallest element of a sorted list that is >= n. */
function firstAtLeast(sorted: number[], n: number): number | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < n) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo];
}

/** Identity of a gap item: stable for the same range, so a re-sent gap deduplicates too. */
function gapChain(from: number, to: number): string {
  return linkHash(Buffer.from(`gap ${from} ${to}`));
}

interface Segment {
  /** Offset just past the last line taken. */
  end: number;
  hash?: string;
  /** The whole file was taken (up to its end). */
  exhausted: boolean;
}

/**
 * Takes lines of one open file from `start` into `items` until the budget is spent. `retired`
 * files are final, so their torn last fragment is skipped rather than waited for.
 */
function readSegment(
  file: string,
  fd: number,
  generation: number,
  start: number,
  startHash: string | undefined,
  retired: boolean,
  key: Buffer | undefined,
  budget: { items: number; bytes: number },
  items: SourceItem[],
  warnings: string[],
): Segment {
  let end = start;
  let hash = startHash;
  for (const line of readByteLinesFromSync(file, start, undefined, fd)) {
    if (budget.items <= 0 || budget.bytes <= 0) return { end, ...(hash ? { hash } : {}), exhausted: false };
    if (line.unterminated && !retired) return { end, ...(hash ? { hash } : {}), exhausted: true };
    const lineEnd = end + line.bytes + (line.unterminated ? 0 : 1);
    const where = `${file} at byte ${end}`;
    if (line.data === undefined) {
      warnings.push(`${where}: skipped an over-long line (${line.bytes} bytes)`);
      end = lineEnd;
      continue;
    }
    const bytes = line.data;
    const lineHash = linkHash(bytes, key);
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString("utf8"));
    } catch {
      parsed = undefined;
    }
    if (bytes.length > 0 && isEvent(parsed)) {
      items.push({ type: "event", event: parsed, chain: lineHash, generation });
      budget.items -= 1;
      budget.bytes -= Math.max(1, bytes.length);
    } else if (bytes.length > 0) {
      warnings.push(`${where}: skipped a line that is not an audit event (torn or damaged)`);
    }
    end = lineEnd;
    hash = lineHash;
  }
  return { end, ...(hash ? { hash } : {}), exhausted: true };
}

/** True when the line that ends at `offset` of `fd` hashes to `hash`. */
function resumesAt(fd: number, offset: number, hash: string | undefined, key: Buffer | undefined): boolean {
  if (offset === 0) return true;
  if (hash === undefined || offset > fs.fstatSync(fd).size) return false;
  const one = Buffer.alloc(1);
  fs.readSync(fd, one, 0, 1, offset - 1);
  if (one[0] !== 0x0a) return false;
  const last = lastLineOf(fd, offset);
  return last !== undefined && linkHash(last.bytes, key) === hash;
}

/** Reads the next batch after `cursor` (undefined: from the very start). */
export function readBatch(
  live: string,
  cursor: Cursor | undefined,
  key: Buffer | undefined,
  limits: BatchLimits,
): Batch {
  const items: SourceItem[] = [];
  const warnings: string[] = [];
  const budget = { items: limits.maxItems, bytes: limits.maxBytes };
  let cur: Cursor = cursor ?? START;
  const full = () => budget.items <= 0 || budget.bytes <= 0;
  for (let round = 0; round < MAX_SNAPSHOTS; round++) {
    const snap = snapshot(live, warnings);
    if (cur.generation > snap.liveGen) {
      warnings.push(
        `the export cursor points at generation ${cur.generation}, past the log's ${snap.liveGen}: the log was replaced; exporting it from its start`,
      );
      cur = START;
    }
    // Retired and evicted generations before the live one, in order.
    while (cur.generation < snap.liveGen && !full()) {
      const g = cur.generation;
      const nextRetired = firstAtLeast(snap.retired, g);
      const nextEvicted = firstAtLeast(snap.evicted, g);
      const next = Math.min(nextRetired ?? snap.liveGen, nextEvicted ?? snap.liveGen, snap.liveGen);
      if (next !== g) {
        // Numbers nobody used (a rotation was interrupted before it took one): nothing to send.
        cur = { generation: next, offset: 0 };
        continue;
      }
      if (nextRetired === g) {
        const file = `${live}.${g}`;
        const fd = openStoreFileSync(file);
        if (fd === undefined) break; // evicted while we looked: take a new snapshot
        try {
          let start = cur.offset;
          let startHash = cur.hash;
          if (!resumesAt(fd, start, startHash, key)) {
            warnings.push(`${file}: not the file the export cursor was in; sending it again from its start`);
            start = 0;
            startHash = undefined;
          }
          const seg = readSegment(file, fd, g, start, startHash, true, key, budget, items, warnings);
          cur = seg.exhausted
            ? { generation: g + 1, offset: 0 }
            : { generation: g, offset: seg.end, ...(seg.hash ? { hash: seg.hash } : {}) };
        } finally {
          fs.closeSync(fd);
        }
        continue;
      }
      // Evicted before it was read: one gap item for the whole run of removed numbers.
      let to = g;
      while (
        to + 1 < snap.liveGen &&
        firstAtLeast(snap.evicted, to + 1) === to + 1 &&
        firstAtLeast(snap.retired, to + 1) !== to + 1
      )
        to += 1;
      items.push({ type: "gap", from: g, to, chain: gapChain(g, to) });
      budget.items -= 1;
      cur = { generation: to + 1, offset: 0 };
    }
    if (full()) return { items, next: cur, warnings, caughtUp: false };
    if (cur.generation < snap.liveGen) continue; // a file vanished: look again
    // The live file.
    const fd = openStoreFileSync(live);
    if (fd === undefined) return { items, next: cur, warnings, caughtUp: true };
    try {
      const st = fs.fstatSync(fd);
      const retiredAs = (() => {
        try {
          return fs.statSync(`${live}.${snap.liveGen}`);
        } catch {
          return undefined;
        }
      })();
      // Rotated since the snapshot (the file we hold may be the next generation), or a rotation
      // is half done (the live name is still a link to the retired file): look again.
      if (retiredAs || st.nlink > 1) continue;
      let start = cur.offset;
      let startHash = cur.hash;
      if (!resumesAt(fd, start, startHash, key)) {
        warnings.push(`${live}: not the file the export cursor was in; sending it again from its start`);
        start = 0;
        startHash = undefined;
      }
      const seg = readSegment(live, fd, snap.liveGen, start, startHash, false, key, budget, items, warnings);
      const next: Cursor = {
        generation: snap.liveGen,
        offset: seg.end,
        ...(seg.hash ? { hash: seg.hash } : {}),
      };
      return { items, next, warnings, caughtUp: seg.exhausted };
    } finally {
      fs.closeSync(fd);
    }
  }
  warnings.push("the audit log kept rotating while it was read; the rest waits for the next pass");
  return { items, next: cur, warnings, caughtUp: false };
}

/** How many complete events lie after `cursor` (the exporter's lag), read without holding them. */
export function countPending(live: string, cursor: Cursor | undefined, key: Buffer | undefined): number {
  let n = 0;
  let cur = cursor;
  for (let i = 0; i < 10_000; i++) {
    const b = readBatch(live, cur, key, { maxItems: 4096, maxBytes: Number.MAX_SAFE_INTEGER });
    n += b.items.filter((x) => x.type === "event").length;
    cur = b.next;
    if (b.caughtUp || b.items.length === 0) break;
  }
  return n;
}

/**
 * A cursor at the current end of the log (after its last complete line): where a reader that
 * counts only what is written from now on starts (the daemon's metrics).
 */
export function endCursor(live: string, key: Buffer | undefined): Cursor {
  const snap = snapshot(live, []);
  const fd = openStoreFileSync(live);
  if (fd === undefined) return { generation: snap.liveGen, offset: 0 };
  try {
    const size = fs.fstatSync(fd).size;
    const last = lastLineOf(fd, size);
    if (!last) return { generation: snap.liveGen, offset: 0 };
    // A torn last line is not complete yet: the cursor stays before it.
    const end = last.unterminated ? size - last.bytes.length : size;
    if (end === 0) return { generation: snap.liveGen, offset: 0 };
    const complete = lastLineOf(fd, end);
    return complete
      ? { generation: snap.liveGen, offset: end, hash: linkHash(complete.bytes, key) }
      : { generation: snap.liveGen, offset: 0 };
  } finally {
    fs.closeSync(fd);
  }
}
