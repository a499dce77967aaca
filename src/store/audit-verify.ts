/**
 * `scoot audit verify` (issue 12): walks every retained generation oldest first, then the live
 * file, line by line with bounded memory (a small look-ahead window, never a whole file), and
 * checks that each event's `prev` is the chain hash of the line before it.
 *
 * The first break is named by file, line and kind: an edited, deleted, inserted or reordered
 * event, a generation missing without a gap record, a torn line that is not the last, or a gap
 * record that is not authentic (HMAC logs). Legitimate history is reported, not failed:
 * generations removed by retention with a gap record, a torn last line, a torn line the
 * writer itself chained over after a crash, a generation number a crashed rotation never
 * used, and lines written before the chain existed.
 */
import fs from "node:fs";
import path from "node:path";
import { auditFiles, type GapRecord, readGaps, retiredGenerations } from "./audit.js";
import { GENESIS, gapMac, linkHash } from "./audit-chain.js";
import { acquireLock, type HeldLock } from "./audit-lock.js";
import { readLinesSync, readTextIfExists } from "./jsonl.js";

export type BreakKind =
  | "edited"
  | "deleted"
  | "inserted"
  | "reordered"
  | "generation_missing"
  | "torn"
  | "gap_not_authentic";

export interface VerifyBreak {
  file: string;
  /** 1-based line in `file`. */
  line: number;
  kind: BreakKind;
  detail: string;
}

export interface VerifyReport {
  ok: boolean;
  /** Files walked, oldest first. */
  files: string[];
  /** Lines that carry a chain link. */
  events: number;
  /** Lines written before the hash chain existed (no `prev`), at the start of the log. */
  unchained: number;
  /** Generations removed by retention, as recorded. */
  gaps: { gap_from: number; gap_to: number }[];
  notes: string[];
  /** Chain hash of the last line: record it elsewhere to detect a truncated tail later. */
  head?: string;
  hmac: boolean;
  break?: VerifyBreak;
}

export interface VerifyOptions {
  key?: Buffer;
  /** Only the live file, whose first link is not checked (what `doctor` runs). */
  liveOnly?: boolean;
}

/** How far ahead a break looks for the line it belongs to (reordered / inserted). */
const LOOKAHEAD_LINES = 8;

interface Line {
  file: string;
  /** Generation number; undefined for the live file. */
  gen?: number;
  lineNo: number;
  bytes: Buffer;
  unterminated: boolean;
  firstOfFile: boolean;
  /** Parsed, when the line is a JSON object. */
  json?: Record<string, unknown>;
  hash: string;
}

/** A retired generation vanished (evicted) while we walked: walk again. */
class Moved extends Error {}

interface Source {
  file: string;
  gen?: number;
  /** The live file, opened before the walk: a rotation meanwhile does not change what we read. */
  fd?: number;
}

function* linesOf(sources: Source[], key: Buffer | undefined): Generator<Line> {
  for (const s of sources) {
    let first = true;
    if (s.fd === undefined && !fs.existsSync(s.file)) throw new Moved();
    for (const raw of readLinesSync(s.file, s.fd)) {
      let json: Record<string, unknown> | undefined;
      try {
        const v = JSON.parse(raw.bytes.toString("utf8")) as unknown;
        if (typeof v === "object" && v !== null && !Array.isArray(v)) json = v as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      yield {
        file: s.file,
        ...(s.gen !== undefined ? { gen: s.gen } : {}),
        lineNo: raw.lineNo,
        bytes: raw.bytes,
        unterminated: raw.unterminated,
        firstOfFile: first,
        ...(json ? { json } : {}),
        hash: linkHash(raw.bytes, key),
      };
      first = false;
    }
  }
}

/** A generator with a bounded look-ahead. */
class Window {
  private readonly buf: Line[] = [];
  constructor(private readonly it: Generator<Line>) {}
  peek(i: number): Line | undefined {
    while (this.buf.length <= i) {
      const n = this.it.next();
      if (n.done) return undefined;
      this.buf.push(n.value);
    }
    return this.buf[i];
  }
  shift(): Line | undefined {
    const l = this.peek(0);
    this.buf.shift();
    return l;
  }
}

function prevOf(l: Line | undefined): string | undefined {
  const p = l?.json?.prev;
  return typeof p === "string" ? p : undefined;
}

function seqOf(l: Line): { seq?: number; session?: string } {
  const seq = l.json?.seq;
  const session = l.json?.session_id;
  return {
    ...(typeof seq === "number" ? { seq } : {}),
    ...(typeof session === "string" ? { session } : {}),
  };
}

function where(l: Line): string {
  return `${path.basename(l.file)}:${l.lineNo}`;
}

/** Walks again when an eviction removed a file under us: at most this many walks. */
const MAX_WALKS = 20;
/** How long verify waits for the audit lock to list the files (each holder keeps it for one append). */
const SNAPSHOT_LOCK_WAIT_MS = 2_000;

interface Snapshot {
  retired: number[];
  /** Taken under the audit lock: no rotation raced the listing. */
  locked: boolean;
  /** The live file, opened while the set was consistent; undefined when there is none. */
  fd?: number;
}

/**
 * The set of files to walk, taken under the audit lock for the instant it takes to list the
 * retired generations and open the live file: no rotation is half done then, so the live file
 * held is the one that follows the newest retired generation. A live file that is also a
 * retired generation (a rotation killed between link and unlink) is already in the list.
 */
function takeSnapshot(live: string): Snapshot {
  const open = (locked: boolean): Snapshot => {
    const retired = retiredGenerations(live);
    let fd: number | undefined;
    try {
      fd = fs.openSync(live, "r");
      if (fs.fstatSync(fd).nlink > 1) {
        fs.closeSync(fd);
        fd = undefined;
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
    return { retired, locked, ...(fd !== undefined ? { fd } : {}) };
  };
  let lock: HeldLock | undefined;
  try {
    lock = acquireLock(auditFiles(live).lock, {}, SNAPSHOT_LOCK_WAIT_MS);
  } catch {
    // A read-only copy of the logs, or a lock we may not take: list without it and let the
    // retry below catch a rotation that raced the listing.
  }
  try {
    return open(lock !== undefined);
  } finally {
    lock?.release();
  }
}

/**
 * Verifies the whole log. The set of files is taken consistently (takeSnapshot); the walk
 * itself holds no lock, so it never stalls writers. An eviction that removes a file before we
 * read it, or (without the lock) a rotation that changed the set, means one more walk.
 */
export function verifyAudit(live: string, opts: VerifyOptions = {}): VerifyReport {
  let report: VerifyReport | undefined;
  for (let walk = 0; walk < MAX_WALKS; walk++) {
    const snap = takeSnapshot(live);
    try {
      report = verifyOnce(live, opts, snap.retired, snap.fd);
      const now = retiredGenerations(live);
      const newest = snap.retired.at(-1);
      // Without the lock a rotation may have slipped in between listing and opening: only a
      // walk whose newest retired generation is still the newest one before it counts.
      if (report.ok || snap.locked || newest === undefined || !now.some((g) => g > newest)) return report;
    } catch (e) {
      if (!(e instanceof Moved)) throw e;
    } finally {
      if (snap.fd !== undefined) fs.closeSync(snap.fd);
    }
  }
  return report ?? verifyOnce(live, opts, retiredGenerations(live), undefined);
}

function verifyOnce(
  live: string,
  opts: VerifyOptions,
  retired: number[],
  liveFd: number | undefined,
): VerifyReport {
  const files = auditFiles(live);
  const key = opts.key;
  const gens = opts.liveOnly ? [] : retired;
  const sources: Source[] = gens.map((g) => ({ file: `${live}.${g}`, gen: g }));
  if (liveFd !== undefined) sources.push({ file: live, fd: liveFd });
  const { gaps } = opts.liveOnly ? { gaps: [] as GapRecord[] } : readGaps(live);
  const sidecarNext = Number.parseInt((readTextIfExists(files.genSidecar) ?? "").split("\n")[0] ?? "", 10);
  const report: VerifyReport = {
    ok: true,
    files: sources.map((s) => s.file),
    events: 0,
    unchained: 0,
    gaps: gaps.map((g) => ({ gap_from: g.gap_from, gap_to: g.gap_to })),
    notes: [],
    hmac: key !== undefined,
  };
  const fail = (l: Line, kind: BreakKind, detail: string): VerifyReport => {
    report.ok = false;
    report.break = { file: l.file, line: l.lineNo, kind, detail };
    return report;
  };
  const gapCovering = (n: number) => gaps.filter((g) => g.gap_from <= n && n <= g.gap_to).at(-1);
  /** The gap record the chain may resume after: the last one covering `n`. Undefined if forged. */
  const authenticGap = (g: GapRecord): boolean => !key || g.mac === gapMac(g, key);

  const w = new Window(linesOf(sources, key));
  let prev: Line | undefined;
  let prevPrevHash: string | undefined;
  let chainStarted = false;
  for (let l = w.shift(); l !== undefined; l = w.shift()) {
    const next = w.peek(0);
    if (!l.json) {
      if (next === undefined) {
        report.notes.push(`${where(l)}: torn last line (a writer was interrupted)`);
      } else if (prevOf(next) === l.hash) {
        report.notes.push(`${where(l)}: torn line, repaired by the next writer (chained over)`);
      } else {
        return fail(l, "torn", `${where(l)} is not a complete event and is not the last line`);
      }
      prevPrevHash = prev?.hash;
      prev = l;
      continue;
    }
    const p = prevOf(l);
    if (p === undefined) {
      if (!chainStarted) {
        report.unchained += 1;
        prevPrevHash = prev?.hash;
        prev = l;
        continue;
      }
      if (next && prev && prevOf(next) === prev.hash)
        return fail(
          l,
          "inserted",
          `${where(l)} was inserted: it has no chain link and the next line skips it`,
        );
      return fail(l, "edited", `${where(l)} has lost its chain link (prev)`);
    }
    chainStarted = true;
    report.events += 1;

    if (l.firstOfFile && !opts.liveOnly) {
      const verdict = checkFileStart(l, prev, p);
      if (verdict) return verdict;
    } else if (l.firstOfFile && opts.liveOnly && prev === undefined) {
      // doctor: where the live file picks up from the retired one is verify's job.
    } else if (prev && p !== prev.hash) {
      return classify(l, prev, p);
    }
    prevPrevHash = prev?.hash;
    prev = l;
  }
  if (prev) report.head = prev.hash;
  return report;

  /** The first line of a file: the link from the previous file, or from retention gaps. */
  function checkFileStart(l: Line, before: Line | undefined, p: string): VerifyReport | undefined {
    const myNumber = l.gen ?? (Number.isInteger(sidecarNext) ? sidecarNext : undefined);
    const fromNumber = before?.gen ?? 0;
    if (before && p === before.hash) {
      if (l.gen !== undefined)
        for (let n = fromNumber + 1; n < l.gen; n++)
          if (!gapCovering(n))
            report.notes.push(`generation number ${n} was never used (a rotation was interrupted)`);
      return undefined;
    }
    if (!before && p === GENESIS) return undefined;
    // Something is missing before this line: only a recorded eviction may explain it.
    const missing: number[] = [];
    if (myNumber !== undefined) for (let n = fromNumber + 1; n < myNumber; n++) missing.push(n);
    const covering = missing.map((n) => gapCovering(n));
    const resumeAt = missing.filter((_, i) => covering[i]).at(-1);
    const lastGap = resumeAt === undefined ? undefined : gapCovering(resumeAt);
    if (resumeAt !== undefined && lastGap) {
      if (!authenticGap(lastGap)) return notAuthentic(l, lastGap);
      if (lastGap.last === undefined || lastGap.last === p) {
        // The chain resumes right after that evicted generation: numbers above it held nothing.
        for (const n of missing) if (n > resumeAt) report.notes.push(neverUsed(n));
        const hole = checkGapChain(missing.filter((n) => n < resumeAt));
        if (hole) return hole(l);
        const removed = missing.filter((_, i) => covering[i]);
        report.notes.push(
          `${removed.length} generation(s) ${removed[0]}..${removed.at(-1)} removed by retention (gap records)`,
        );
        return undefined;
      }
    }
    const unrecorded = missing.filter((_, i) => !covering[i]);
    if (unrecorded.length > 0 || (missing.length > 0 && lastGap)) {
      const named = unrecorded.length > 0 ? unrecorded : [missing[missing.length - 1]!];
      return fail(
        l,
        "generation_missing",
        `generation ${named.map((n) => `${path.basename(live)}.${n}`).join(", ")} is missing without a gap record (${where(l)} does not chain to what is left)`,
      );
    }
    if (!before)
      return fail(
        l,
        "deleted",
        `lines were deleted before ${where(l)} (the first event does not start the chain)`,
      );
    return classify(l, before, p);
  }

  function neverUsed(n: number): string {
    return `generation number ${n} was never used (a rotation was interrupted)`;
  }

  function notAuthentic(l: Line, g: GapRecord): VerifyReport {
    return fail(
      l,
      "gap_not_authentic",
      `the gap record for generation ${g.gap_from} has no valid mac: it was not written with this key`,
    );
  }

  /**
   * Numbers below the resume point with no gap record: a rotation killed before its link never
   * used them, which the records on both sides prove (the evicted file after the hole starts
   * where the one before it ended). Anything else is a generation deleted without a record.
   */
  function checkGapChain(uncoveredCandidates: number[]): ((l: Line) => VerifyReport) | undefined {
    for (const n of uncoveredCandidates) {
      if (gapCovering(n)) continue;
      let lo: GapRecord | undefined;
      for (let k = n - 1; k >= 1 && !lo; k--) lo = gapCovering(k);
      let hi: GapRecord | undefined;
      for (let k = n + 1; !hi && k <= n + uncoveredCandidates.length + 1; k++) hi = gapCovering(k);
      for (const g of [lo, hi]) if (g && !authenticGap(g)) return (l) => notAuthentic(l, g);
      const bridged = hi?.first !== undefined && hi.first === (lo ? lo.last : GENESIS);
      if (bridged) {
        report.notes.push(neverUsed(n));
        continue;
      }
      return (l) =>
        fail(
          l,
          "generation_missing",
          `generation ${path.basename(live)}.${n} is missing without a gap record (the evicted generations around it do not chain)`,
        );
    }
    return undefined;
  }

  /** Names what happened when `l`'s link does not match the line before it. */
  function classify(l: Line, before: Line, p: string): VerifyReport {
    for (let i = 0; i < LOOKAHEAD_LINES; i++) {
      const ahead = w.peek(i);
      if (!ahead) break;
      if (ahead.hash === p)
        return fail(
          l,
          "reordered",
          `${where(l)} is out of order: it follows ${where(ahead)}, which comes after it`,
        );
    }
    const next = w.peek(0);
    if (next && prevOf(next) === before.hash)
      return fail(l, "inserted", `${where(l)} was inserted: the next line chains to ${where(before)}`);
    if (prevPrevHash !== undefined && p === prevPrevHash)
      return fail(
        before,
        "inserted",
        `${where(before)} was inserted: ${where(l)} chains to the line before it`,
      );
    const a = seqOf(before);
    const b = seqOf(l);
    if (a.session !== undefined && a.session === b.session && a.seq !== undefined && b.seq !== undefined) {
      if (b.seq > a.seq + 1)
        return fail(
          l,
          "deleted",
          `event(s) deleted before ${where(l)} (seq ${a.seq + 1}..${b.seq - 1} are gone)`,
        );
    }
    return fail(before, "edited", `${where(before)} was edited: ${where(l)} no longer chains to it`);
  }
}

/** One line for humans. */
export function describeReport(r: VerifyReport): string[] {
  const out: string[] = [];
  out.push(
    `${r.ok ? "intact" : "BROKEN"}: ${r.events} chained event(s) in ${r.files.length} file(s)${r.hmac ? " (HMAC chain)" : ""}`,
  );
  if (r.unchained > 0) out.push(`note: ${r.unchained} line(s) at the start predate the hash chain`);
  for (const n of r.notes) out.push(`note: ${n}`);
  if (r.break) out.push(`break: ${r.break.kind} at ${r.break.file}:${r.break.line}: ${r.break.detail}`);
  if (r.head) out.push(`head: ${r.head}`);
  return out;
}
