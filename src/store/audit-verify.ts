/**
 * `scoot audit verify`: walks every retained generation oldest first, then the live
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
import { acquireLock, type HeldLock } from "../core/lock.js";
import { GENESIS, gapMac, linkHash } from "./audit-chain.js";
import { isGenerationNumber, MAX_GENERATION } from "./audit-numbers.js";
import { type ChainRecord, chainRecordFile, modeMismatch, readChainRecord } from "./audit-record.js";
import {
  auditFiles,
  type GapRecord,
  readGaps,
  readSidecar,
  retiredGenerations,
  type Sidecar,
  sidecarMac,
} from "./audit-rotation.js";
import { numberedSiblings } from "./jsonl.js";
import { MAX_RECORD_LINE_BYTES, readByteLinesSync } from "./lines.js";

export type BreakKind =
  | "edited"
  | "deleted"
  | "inserted"
  | "reordered"
  | "generation_missing"
  | "torn"
  | "gap_not_authentic"
  /** A line without a chain link where the chain record says the chain has begun. */
  | "unchained"
  /** `audit.jsonl.chain` is missing, unreadable, or disagrees with the key. */
  | "chain_record"
  /** The live or a retired file has another name (hard link). */
  | "hard_link"
  /** The head recorded in `audit.jsonl.gen` (or given with --head) is not in the log. */
  | "tail_lost"
  /** A number in the logs outside what Scoot writes (generation, sidecar, gap bounds). */
  | "bad_number";

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
  /** A chain hash recorded elsewhere (`--head`): it must be the hash of a line still in the log. */
  head?: string;
  /** Only the live file, whose first link is not checked (what `doctor` runs). */
  liveOnly?: boolean;
}

/** How far ahead a break looks for the line it belongs to (reordered / inserted). */
const LOOKAHEAD_LINES = 8;
/**
 * Generation numbers a crashed rotation may leave unused between two retained ones (each
 * crash costs one): more missing numbers than gap records plus this is reported at once,
 * without walking the numbers one by one (a planted `audit.jsonl.999999999` would).
 */
const MAX_UNUSED_NUMBERS = 1_000;

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
    for (const raw of readByteLinesSync(s.file, MAX_RECORD_LINE_BYTES, s.fd)) {
      // The look-ahead window keeps lines after the reader moves on: each gets its own copy.
      // A line over the cap comes as empty bytes, which no check accepts as a record.
      const bytes = raw.data ? Buffer.from(raw.data) : Buffer.alloc(0);
      let json: Record<string, unknown> | undefined;
      try {
        const v = JSON.parse(bytes.toString("utf8")) as unknown;
        if (typeof v === "object" && v !== null && !Array.isArray(v)) json = v as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      yield {
        file: s.file,
        ...(s.gen !== undefined ? { gen: s.gen } : {}),
        lineNo: raw.number,
        bytes,
        unterminated: raw.unterminated,
        firstOfFile: first,
        ...(json ? { json } : {}),
        hash: linkHash(bytes, key),
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
  /**
   * The `.gen` sidecar read with the listing: read later, a rotation meanwhile would record a
   * head in a generation the listing does not hold, and a sound log would look cut short.
   */
  sidecar: Sidecar;
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
      fd = fs.openSync(live, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
    const sidecar = readSidecar(auditFiles(live));
    return { retired, locked, sidecar, ...(fd !== undefined ? { fd } : {}) };
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
      report = verifyOnce(live, opts, snap.retired, snap.fd, snap.sidecar);
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

/**
 * Hard links: the live file may share its inode with one retired generation only (a rotation
 * killed between link and unlink: then it is walked once, as that generation). Any other
 * extra name is refused — an edit made through it would change the walked file unseen, and
 * the next writer would treat the live file as already retired.
 */
function linkProblem(
  live: string,
  retired: number[],
  liveFd: number | undefined,
): { liveIsRetired: boolean; problem?: { file: string; detail: string } } {
  const liveSt = liveFd === undefined ? undefined : fs.fstatSync(liveFd);
  if (liveSt && !liveSt.isFile())
    return { liveIsRetired: false, problem: { file: live, detail: `${live} is not a regular file` } };
  let twin: number | undefined;
  const refuse = (file: string, nlink: number) => ({
    liveIsRetired: false,
    problem: {
      file,
      detail: `${file} has ${nlink} hard links: refused (an edit through another name would go unseen). Fix: find the other name (find ${path.dirname(path.dirname(live))} -samefile ${file}) and remove it`,
    },
  });
  for (const g of retired) {
    const file = `${live}.${g}`;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue;
    }
    if (st.nlink === 1) continue;
    if (liveSt && st.ino === liveSt.ino && st.dev === liveSt.dev && st.nlink === 2 && twin === undefined) {
      twin = g;
      continue;
    }
    return refuse(file, st.nlink);
  }
  if (liveSt && liveSt.nlink > 1 && twin === undefined) {
    // Listed without the lock, a rotation may have linked the live file since: its twin is a
    // generation newer than the listing. That set is stale: walk again.
    for (const g of retiredGenerations(live)) {
      if (retired.includes(g)) continue;
      try {
        const st = fs.lstatSync(`${live}.${g}`);
        if (st.ino === liveSt.ino && st.dev === liveSt.dev) throw new Moved();
      } catch (e) {
        if (e instanceof Moved) throw e;
      }
    }
    return refuse(live, liveSt.nlink);
  }
  return { liveIsRetired: twin !== undefined };
}

/** One walk over the files: what it reads, and what it has found so far. The steps below share it. */
interface Walk {
  live: string;
  opts: VerifyOptions;
  key: Buffer | undefined;
  files: ReturnType<typeof auditFiles>;
  retired: number[];
  links: ReturnType<typeof linkProblem>;
  gapRead: { gaps: GapRecord[]; poisoned: string[] };
  gaps: GapRecord[];
  sidecar: Sidecar;
  record: ReturnType<typeof readChainRecord>;
  report: VerifyReport;
  /** Gap bounds are range-checked (readGaps): each number maps to the last record covering it. */
  cover: Map<number, GapRecord>;
  w: Window;
  /** The hash of the line before the previous one (an insertion shows as a link skipping one). */
  prevPrevHash: string | undefined;
  /** The sidecar's recorded head was met on the walk. */
  headSeen: boolean;
  /** The head given by the caller (`--head`) was met on the walk. */
  externalSeen: boolean;
}

function verifyOnce(
  live: string,
  opts: VerifyOptions,
  retired: number[],
  liveFd: number | undefined,
  sidecarRead?: Sidecar,
): VerifyReport {
  const v = openWalk(live, opts, retired, liveFd, sidecarRead);
  return checkBeforeWalk(v) ?? walkLines(v) ?? checkAfterWalk(v) ?? v.report;
}

/** The files to walk (retired generations, then the live file), the gap records, the sidecar. */
function openWalk(
  live: string,
  opts: VerifyOptions,
  retired: number[],
  liveFd: number | undefined,
  sidecarRead: Sidecar | undefined,
): Walk {
  const files = auditFiles(live);
  const key = opts.key;
  const gens = opts.liveOnly ? [] : retired;
  const sources: Source[] = gens.map((g) => ({ file: `${live}.${g}`, gen: g }));
  const links = linkProblem(live, retired, liveFd);
  if (liveFd !== undefined && !links.liveIsRetired) sources.push({ file: live, fd: liveFd });
  const gapRead = opts.liveOnly ? { gaps: [] as GapRecord[], poisoned: [] as string[] } : readGaps(live);
  const { gaps } = gapRead;
  const cover = new Map<number, GapRecord>();
  for (const g of gaps) for (let n = g.gap_from; n <= g.gap_to; n++) cover.set(n, g);
  return {
    live,
    opts,
    key,
    files,
    retired,
    links,
    gapRead,
    gaps,
    sidecar: sidecarRead ?? readSidecar(files),
    record: readChainRecord(live),
    report: {
      ok: true,
      files: sources.map((s) => s.file),
      events: 0,
      unchained: 0,
      gaps: gaps.map((g) => ({ gap_from: g.gap_from, gap_to: g.gap_to })),
      notes: [],
      hmac: key !== undefined,
    },
    cover,
    w: new Window(linesOf(sources, key)),
    prevPrevHash: undefined,
    headSeen: false,
    externalSeen: false,
  };
}

function fail(v: Walk, l: Line, kind: BreakKind, detail: string): VerifyReport {
  v.report.ok = false;
  v.report.break = { file: l.file, line: l.lineNo, kind, detail };
  return v.report;
}

function failAt(v: Walk, file: string, kind: BreakKind, detail: string): VerifyReport {
  v.report.ok = false;
  v.report.break = { file, line: 1, kind, detail };
  return v.report;
}

function gapCovering(v: Walk, n: number): GapRecord | undefined {
  return v.cover.get(n);
}

/** More numbers missing between two files than gaps and crashes can explain: named at once. */
function tooManyMissing(v: Walk, from: number, to: number): string | undefined {
  return to - from - 1 > v.cover.size + MAX_UNUSED_NUMBERS
    ? `generation numbers ${from + 1}..${to - 1} are missing (${to - from - 1} numbers) and the gap records cover at most ${v.cover.size}`
    : undefined;
}

/** A gap record the chain may resume after: with a key, its mac must be this key's. */
function authenticGap(v: Walk, g: GapRecord): boolean {
  return !v.key || g.mac === gapMac(g, v.key);
}

/** What can be judged before reading a line: the chain record, links, numbers, the sidecar. */
function checkBeforeWalk(v: Walk): VerifyReport | undefined {
  const { live, record, key, links, gapRead, opts, sidecar, files, retired, gaps } = v;
  const recordFile = chainRecordFile(live);
  if (record.state === "bad")
    return failAt(
      v,
      recordFile,
      "chain_record",
      `${record.problem}. Fix: restore it from a backup; it was not written by scoot`,
    );
  if (record.state === "ok") {
    const mismatch = modeMismatch(record.record as ChainRecord, key, live);
    if (mismatch) return failAt(v, recordFile, "chain_record", mismatch);
  }
  if (links.problem) return failAt(v, links.problem.file, "hard_link", links.problem.detail);
  for (const n of numberedSiblings(live))
    if (!isGenerationNumber(n))
      return failAt(
        v,
        `${live}.${n}`,
        "bad_number",
        `generation number ${n} is outside 1..${MAX_GENERATION}: scoot never wrote this file. Fix: move it out of logs/`,
      );
  if (gapRead.poisoned.length > 0)
    return failAt(
      v,
      files.gaps,
      "bad_number",
      `${gapRead.poisoned[0]}: not written by scoot. Fix: remove that record (or restore the file from a backup)`,
    );
  if (opts.liveOnly) return undefined;
  if (sidecar.problem)
    return failAt(
      v,
      files.genSidecar,
      "bad_number",
      `${sidecar.problem}: not written by scoot, not obeyed. Fix: write the number after the newest retired generation (or restore the file)`,
    );
  if (
    key &&
    sidecar.next !== undefined &&
    sidecar.head !== undefined &&
    sidecar.mac !== sidecarMac(sidecar.next, sidecar.head, key)
  )
    return failAt(
      v,
      files.genSidecar,
      "tail_lost",
      `${path.basename(files.genSidecar)} has no valid mac for this key: the recorded head was rewritten`,
    );
  if (sidecar.next === undefined && (retired.length > 0 || gaps.length > 0))
    return failAt(
      v,
      files.genSidecar,
      "tail_lost",
      `${path.basename(files.genSidecar)} is missing though generations were retired: the head of the retired generations cannot be checked`,
    );
  return undefined;
}

/** Every line in order: each must chain to the one before it; the first break ends the walk. */
function walkLines(v: Walk): VerifyReport | undefined {
  const { w, report, opts, sidecar, record, live } = v;
  const legacyAllowed = record.state === "ok" ? record.record.legacy : 0;
  let prev: Line | undefined;
  let chainStarted = false;
  for (let l = w.shift(); l !== undefined; l = w.shift()) {
    const next = w.peek(0);
    if (!l.json) {
      if (next === undefined) {
        report.notes.push(`${where(l)}: torn last line (a writer was interrupted)`);
      } else if (prevOf(next) === l.hash) {
        report.notes.push(`${where(l)}: torn line, repaired by the next writer (chained over)`);
      } else {
        return fail(v, l, "torn", `${where(l)} is not a complete event and is not the last line`);
      }
      v.prevPrevHash = prev?.hash;
      prev = l;
      continue;
    }
    if (sidecar.head !== undefined && l.hash === sidecar.head) v.headSeen = true;
    if (opts.head !== undefined && l.hash === opts.head) v.externalSeen = true;
    const p = prevOf(l);
    if (p === undefined) {
      // Only as many lines as the chain record counts may predate the chain (doctor, which
      // sees the live file alone, allows them when the record counts any).
      if (!chainStarted && (report.unchained < legacyAllowed || (opts.liveOnly && legacyAllowed > 0))) {
        report.unchained += 1;
        v.prevPrevHash = prev?.hash;
        prev = l;
        continue;
      }
      if (!chainStarted)
        return fail(
          v,
          l,
          "unchained",
          `${where(l)} has no chain link (prev), but ${path.basename(chainRecordFile(live))} says ${legacyAllowed === 0 ? "every line is chained" : `only the first ${legacyAllowed} line(s) predate the chain`}: chain links were stripped`,
        );
      if (next && prev && prevOf(next) === prev.hash)
        return fail(
          v,
          l,
          "inserted",
          `${where(l)} was inserted: it has no chain link and the next line skips it`,
        );
      return fail(v, l, "edited", `${where(l)} has lost its chain link (prev)`);
    }
    chainStarted = true;
    report.events += 1;

    if (l.firstOfFile && !opts.liveOnly) {
      const verdict = checkFileStart(v, l, prev, p);
      if (verdict) return verdict;
    } else if (l.firstOfFile && opts.liveOnly && prev === undefined) {
      // doctor: where the live file picks up from the retired one is verify's job.
    } else if (prev && p !== prev.hash) {
      return classify(v, l, prev, p);
    }
    v.prevPrevHash = prev?.hash;
    prev = l;
  }
  if (prev) report.head = prev.hash;
  return undefined;
}

/** After the walk: the record must exist for a non-empty log, and the heads must be in it. */
function checkAfterWalk(v: Walk): VerifyReport | undefined {
  const { record, live, opts, sidecar, files, gaps, report } = v;
  // The walk set a head when the log has any line.
  if (record.state === "missing" && report.head !== undefined)
    return failAt(
      v,
      chainRecordFile(live),
      "chain_record",
      `${path.basename(chainRecordFile(live))} is missing, so the chain's mode and start are unknown (stripped chain links would pass). A log written before scoot kept this record gets it from the next run`,
    );
  if (!opts.liveOnly && sidecar.head !== undefined && !v.headSeen) {
    const newest = (sidecar.next ?? 1) - 1;
    const gap = gapCovering(v, newest);
    if (!(gap && gap.last === sidecar.head))
      return failAt(
        v,
        files.genSidecar,
        "tail_lost",
        `the head recorded in ${path.basename(files.genSidecar)} (the last line of generation ${newest}) is not in the log: ${path.basename(live)}.${newest} and what followed it were removed`,
      );
  }
  if (opts.head !== undefined && !v.externalSeen) {
    if (gaps.some((g) => g.last === opts.head))
      report.notes.push("the given head is in a generation removed by retention (gap record)");
    else
      return failAt(
        v,
        live,
        "tail_lost",
        `the given head ${opts.head} is not the hash of any line in the log: lines at or before it were removed`,
      );
  }
  return undefined;
}

/** The first line of a file: the link from the previous file, or from retention gaps. */
function checkFileStart(v: Walk, l: Line, before: Line | undefined, p: string): VerifyReport | undefined {
  const { live, report } = v;
  const myNumber = l.gen ?? v.sidecar.next;
  const fromNumber = before?.gen ?? 0;
  const tooMany = myNumber === undefined ? undefined : tooManyMissing(v, fromNumber, myNumber);
  if (tooMany) return fail(v, l, "generation_missing", tooMany);
  if (before && p === before.hash) {
    if (l.gen !== undefined)
      for (let n = fromNumber + 1; n < l.gen; n++)
        if (!gapCovering(v, n))
          report.notes.push(`generation number ${n} was never used (a rotation was interrupted)`);
    return undefined;
  }
  if (!before && p === GENESIS) return undefined;
  // Something is missing before this line: only a recorded eviction may explain it.
  const missing: number[] = [];
  if (myNumber !== undefined) for (let n = fromNumber + 1; n < myNumber; n++) missing.push(n);
  const covering = missing.map((n) => gapCovering(v, n));
  const resumeAt = missing.filter((_, i) => covering[i]).at(-1);
  const lastGap = resumeAt === undefined ? undefined : gapCovering(v, resumeAt);
  if (resumeAt !== undefined && lastGap) {
    if (!authenticGap(v, lastGap)) return notAuthentic(v, l, lastGap);
    if (lastGap.last === undefined || lastGap.last === p) {
      // The chain resumes right after that evicted generation: numbers above it held nothing.
      for (const n of missing) if (n > resumeAt) report.notes.push(neverUsed(n));
      const hole = checkGapChain(
        v,
        missing.filter((n) => n < resumeAt),
      );
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
      v,
      l,
      "generation_missing",
      `generation ${named.map((n) => `${path.basename(live)}.${n}`).join(", ")} is missing without a gap record (${where(l)} does not chain to what is left)`,
    );
  }
  if (!before)
    return fail(
      v,
      l,
      "deleted",
      `lines were deleted before ${where(l)} (the first event does not start the chain)`,
    );
  return classify(v, l, before, p);
}

function neverUsed(n: number): string {
  return `generation number ${n} was never used (a rotation was interrupted)`;
}

function notAuthentic(v: Walk, l: Line, g: GapRecord): VerifyReport {
  return fail(
    v,
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
function checkGapChain(v: Walk, uncoveredCandidates: number[]): ((l: Line) => VerifyReport) | undefined {
  for (const n of uncoveredCandidates) {
    if (gapCovering(v, n)) continue;
    let lo: GapRecord | undefined;
    for (let k = n - 1; k >= 1 && k >= n - 1 - v.cover.size && !lo; k--) lo = gapCovering(v, k);
    let hi: GapRecord | undefined;
    for (let k = n + 1; !hi && k <= n + uncoveredCandidates.length + 1; k++) hi = gapCovering(v, k);
    for (const g of [lo, hi]) if (g && !authenticGap(v, g)) return (l) => notAuthentic(v, l, g);
    const bridged = hi?.first !== undefined && hi.first === (lo ? lo.last : GENESIS);
    if (bridged) {
      v.report.notes.push(neverUsed(n));
      continue;
    }
    return (l) =>
      fail(
        v,
        l,
        "generation_missing",
        `generation ${path.basename(v.live)}.${n} is missing without a gap record (the evicted generations around it do not chain)`,
      );
  }
  return undefined;
}

/** Names what happened when `l`'s link does not match the line before it. */
function classify(v: Walk, l: Line, before: Line, p: string): VerifyReport {
  const { w } = v;
  for (let i = 0; i < LOOKAHEAD_LINES; i++) {
    const ahead = w.peek(i);
    if (!ahead) break;
    if (ahead.hash === p)
      return fail(
        v,
        l,
        "reordered",
        `${where(l)} is out of order: it follows ${where(ahead)}, which comes after it`,
      );
  }
  const next = w.peek(0);
  if (next && prevOf(next) === before.hash)
    return fail(v, l, "inserted", `${where(l)} was inserted: the next line chains to ${where(before)}`);
  if (v.prevPrevHash !== undefined && p === v.prevPrevHash)
    return fail(
      v,
      before,
      "inserted",
      `${where(before)} was inserted: ${where(l)} chains to the line before it`,
    );
  const a = seqOf(before);
  const b = seqOf(l);
  if (a.session !== undefined && a.session === b.session && a.seq !== undefined && b.seq !== undefined) {
    if (b.seq > a.seq + 1)
      return fail(
        v,
        l,
        "deleted",
        `event(s) deleted before ${where(l)} (seq ${a.seq + 1}..${b.seq - 1} are gone)`,
      );
  }
  return fail(v, before, "edited", `${where(before)} was edited: ${where(l)} no longer chains to it`);
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
