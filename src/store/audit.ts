/**
 * The audit log: `logs/audit.jsonl`, one event per line, written under a cross-process lock
 * (`core/lock.ts`) with one write(2) on a descriptor kept open between events.
 *
 * Durability: `tool_call` and `policy_deny` records are fdatasync'ed before emit
 * returns, so the record is on disk before the effect it announces starts; other kinds are
 * flushed by `flush()` at run end and when the process ends (`core/process-end.ts`).
 *
 * Tamper evidence: every event carries `prev`, the hash of the previous line in file order
 * (`audit-chain.ts`). The lock is taken for every append so racing processes still build one
 * chain; `scoot audit verify` walks it (`audit-verify.ts`).
 *
 * Rotation retires the live file as `audit.jsonl.<gen>`. The next generation number and the
 * chain head (hash of the retired file's last line) live in `audit.jsonl.gen`, written
 * durably *before* the retirement, and retirement uses link() (which refuses to overwrite),
 * so a number is never reused even across crashes. At most `max_retained_generations`
 * retired files stay; each eviction is first recorded (and flushed) in
 * `audit.jsonl.gaps.jsonl`, and only then is the file deleted.
 */
import fs from "node:fs";
import path from "node:path";
import type { AuditLevel } from "../config/schema.js";
import { acquireLock } from "../core/lock.js";
import { onProcessEnd } from "../core/process-end.js";
import { redact } from "../core/redact.js";
import { openStoreFileSync } from "../core/safe-open.js";
import type { Result } from "../core/types.js";
import { GENESIS, gapMac, linkHash, loadAuditKey } from "./audit-chain.js";
import { clipAuditMessage } from "./audit-clip.js";
import { gapBoundsProblem, isGenerationNumber, MAX_GENERATION, MAX_LINK_ATTEMPTS } from "./audit-numbers.js";
import { modeMismatch, readChainRecord, writeChainRecord } from "./audit-record.js";
import { lastLineOf, needsLeadingNewline, numberedSiblings, readTextIfExists } from "./jsonl.js";
import { type JsonlItem, looksLikeObject, readJsonl, readJsonlSync, readLinesSync } from "./lines.js";

export type AuditKind =
  | "run"
  | "thought"
  | "tool_call"
  | "observation"
  | "final"
  | "policy_deny"
  | "system_error"
  | "backend"
  /** A session's policy mode changed mid-session (ACP `session/set_mode`). */
  | "mode"
  /** A question to the person before a call with an effect, and the answer (docs/safety.md "Approval"). */
  | "approval"
  /** `scoot undo` / `/undo` put a file back, or the gate or containment refused it (docs/sessions.md "Undo"). */
  | "undo";

export const KIND_LEVEL: Record<AuditKind, AuditLevel> = {
  run: "info",
  thought: "info",
  tool_call: "info",
  observation: "info",
  final: "info",
  policy_deny: "warn",
  system_error: "error",
  backend: "debug",
  mode: "warn",
  approval: "warn",
  undo: "warn",
};

/** The security record: written whatever `audit.level` says. */
export const ALWAYS_WRITTEN: ReadonlySet<AuditKind> = new Set([
  "tool_call",
  "policy_deny",
  "system_error",
  // A policy mode change (ACP session/set_mode) is part of the security record.
  "mode",
  // What a person allowed or refused is as much the security record as what the gate did.
  "approval",
  // Undo writes files outside any tool call: each one it writes or refuses is on the record.
  "undo",
]);
/** Flushed to disk before emit returns: the effect (or its refusal) must never outlive its record. */
export const SYNCED_KINDS: ReadonlySet<AuditKind> = new Set([
  "tool_call",
  "policy_deny",
  "mode",
  "approval",
  "undo",
]);

const LEVEL_RANK: Record<AuditLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
/** `,"prev":"<64 hex>"` plus the newline: what the chain adds to each line. */
const PREV_FIELD_BYTES = 75;

export interface AuditEvent {
  seq: number;
  ts: number;
  session_id: string;
  run_id?: string;
  kind: string;
  msg: string;
  /** Hash of the previous line (see audit-chain.ts); absent only on lines older than the chain. */
  prev?: string;
}

export interface GapRecord {
  gap_from: number;
  gap_to: number;
  ts: number;
  /** Chain hash of the evicted generation's last line: where the next retained file picks up. */
  last?: string;
  /** The `prev` of its first line: lets verify prove a skipped number was never used. */
  first?: string;
  /** With an HMAC key: the record cannot be forged without it. */
  mac?: string;
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

/** Points inside a rotation, for the crash drill (test/drills/crash.test.ts) to die at. */
export type RotationStep = "sidecar" | "link" | "unlink" | "gap" | "evict";

export interface AuditOptions {
  file: string;
  level: AuditLevel;
  toFile: boolean;
  maxRetained: number;
  maxFileBytes: number;
  /** `audit.hmac_key_file`, resolved: the chain becomes an HMAC chain. */
  hmacKeyFile?: string;
  /** Test hook: called at each step of a rotation. */
  onRotationStep?: (step: RotationStep) => void;
}

export interface AuditLog {
  /** Writes one event. An error means the event is not on disk: the caller must stop (fail closed). */
  emit(sessionId: string, kind: AuditKind, msg: string, runId?: string): Result<AuditEvent | undefined>;
  /** fdatasync whatever was written since the last flush (run end, exit). */
  flush(): Result<void>;
  /** Flushes and closes the descriptor; a later emit reopens it. */
  close(): void;
}

/** The audit options a loaded configuration asks for. A relative key file is under the home. */
export function auditOptions(
  audit: {
    level: AuditLevel;
    to_file: boolean;
    max_retained_generations: number;
    max_file_bytes: number;
    hmac_key_file?: string;
  },
  file: string,
): AuditOptions {
  const home = path.dirname(path.dirname(file));
  return {
    file,
    level: audit.level,
    toFile: audit.to_file,
    maxRetained: audit.max_retained_generations,
    maxFileBytes: audit.max_file_bytes,
    ...(audit.hmac_key_file ? { hmacKeyFile: path.resolve(home, audit.hmac_key_file) } : {}),
  };
}

/** Logs with unflushed writes; they are flushed and closed when the process ends. */
const openLogs = new Set<AuditLog>();
let settleRegistered = false;
function closeAtProcessEnd(): void {
  if (settleRegistered) return;
  settleRegistered = true;
  onProcessEnd(() => {
    for (const log of openLogs) log.close();
  });
}

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function writeAll(fd: number, buf: Buffer): void {
  // Appends happen under the lock, so finishing a short write cannot interleave with another
  // writer. When the disk is full the next write throws ENOSPC, which names the cause; the
  // torn line it leaves is repaired by the next append (docs/sessions.md "Sessions and audit").
  let done = 0;
  while (done < buf.length) {
    const n = fs.writeSync(fd, buf, done, buf.length - done);
    if (n === 0) throw new Error(`short write (${done} of ${buf.length} bytes): is the disk full?`);
    done += n;
  }
}

/** Chain hash of a file's last line (the fragment when torn); undefined for an empty or missing file. */
function lastHashOfFile(file: string, key: Buffer | undefined): string | undefined {
  let fd: number | undefined;
  try {
    // A FIFO or symlink planted as a generation must not block or be followed.
    fd = openStoreFileSync(file);
  } catch {
    return undefined;
  }
  if (fd === undefined) return undefined;
  try {
    const last = lastLineOf(fd, fs.fstatSync(fd).size);
    return last ? linkHash(last.bytes, key) : undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** Inode plus birth time: an inode number freed by an eviction and reused is another file. */
function fileId(st: fs.Stats): string {
  return `${st.dev}-${st.ino}-${st.birthtimeMs}`;
}

/** The `prev` of a file's first line, when it has one. */
function firstPrevOfFile(file: string): string | undefined {
  for (const l of readLinesSync(file)) {
    try {
      const prev = (JSON.parse(l.text ?? "") as { prev?: unknown }).prev;
      return typeof prev === "string" ? prev : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface Sidecar {
  next?: number;
  head?: string;
  /** HMAC logs: the key's mac over next and head. */
  mac?: string;
  /** Set when the file holds something Scoot never writes: reported by verify, ignored here. */
  problem?: string;
}

/** `audit.jsonl.gen`, range-checked: a number outside 1..MAX_GENERATION+1 is not obeyed. */
export function readSidecar(files: AuditFiles): Sidecar {
  const text = readTextIfExists(files.genSidecar);
  if (text === undefined) return {};
  const [n, h, m] = text.split("\n").map((l) => l.trim());
  const next = /^\d{1,16}$/.test(n ?? "") ? Number(n) : Number.NaN;
  const head = h && /^[0-9a-f]{64}$/.test(h) ? h : undefined;
  const mac = m && /^[0-9a-f]{64}$/.test(m) ? m : undefined;
  if (!(Number.isSafeInteger(next) && next >= 1 && next <= MAX_GENERATION + 1))
    return {
      problem: `${files.genSidecar}: next generation "${clipAuditMessage(n ?? "").slice(0, 40)}" is outside 1..${MAX_GENERATION + 1}`,
    };
  return { next, ...(head ? { head } : {}), ...(mac ? { mac } : {}) };
}

/** What the sidecar's mac covers. */
export function sidecarMac(next: number, head: string, key: Buffer): string {
  return linkHash(Buffer.from(`gen ${next} ${head}`), key);
}

/** "a+" without following a final-component symlink or blocking on a FIFO. */
const LIVE_OPEN_FLAGS =
  fs.constants.O_RDWR |
  fs.constants.O_APPEND |
  fs.constants.O_CREAT |
  fs.constants.O_NOFOLLOW |
  fs.constants.O_NONBLOCK;

/**
 * The audit log with its HMAC key loaded once, now: a bad key file is an error before any
 * run starts, and the log does not load it again.
 */
export function openAuditLog(opts: AuditOptions): Result<AuditLog> {
  const key = loadAuditKey(opts.hmacKeyFile);
  if (!key.ok) return { ok: false, error: key.error };
  return { ok: true, value: createAuditLog(opts, { key: key.value }) };
}

/** `loaded`: the key, already loaded (openAuditLog); absent: loaded at the first write. */
export function createAuditLog(opts: AuditOptions, loaded?: { key: Buffer | undefined }): AuditLog {
  const files = auditFiles(opts.file);
  const dir = path.dirname(opts.file);
  let seq = 0;
  let fd: number | undefined;
  let dirty = false;
  let key: Buffer | undefined = loaded?.key;
  let keyLoaded = loaded !== undefined;
  /** The chain record (audit-record.ts) was found matching, or written, by this process. */
  let recordChecked = false;
  /** The chain head as this process last left the live file: valid while nobody else appended. */
  let cache: { id: string; size: number; hash: string } | undefined;

  const closeFd = () => {
    if (fd !== undefined) fs.closeSync(fd);
    fd = undefined;
    cache = undefined;
  };

  /** Under the lock: `fd` is the current live file (someone may have rotated it away). */
  const ensureOpen = (): number => {
    for (let attempt = 0; attempt < 3; attempt++) {
      let onDisk: fs.Stats | undefined;
      try {
        onDisk = fs.statSync(files.live);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      }
      if (onDisk && onDisk.nlink > 1) {
        // A rotation died between link and unlink: this inode is already a retired
        // generation. Finish that rotation rather than append to it or retire it twice —
        // also when our descriptor was opened on it before that writer died. Any other
        // extra name is refused: unlinking would drop history no gap record names.
        refuseForeignLink(files.live, onDisk);
        closeFd();
        fs.unlinkSync(files.live);
        continue;
      }
      if (fd !== undefined && onDisk && fs.fstatSync(fd).ino === onDisk.ino) return fd;
      closeFd();
      // Never through a symlink, never blocking on a FIFO planted at the name.
      fd = fs.openSync(files.live, LIVE_OPEN_FLAGS, 0o600);
      if (!fs.fstatSync(fd).isFile()) {
        closeFd();
        throw new Error(`${files.live} is not a regular file; refused`);
      }
      const opened = fs.fstatSync(fd);
      if (opened.nlink > 1) {
        try {
          refuseForeignLink(files.live, opened);
        } catch (e) {
          closeFd();
          throw e;
        }
        closeFd();
        fs.unlinkSync(files.live);
        continue;
      }
      // A new live file: its directory entry must be durable with the first record.
      if (!onDisk) fsyncDir(dir);
      return fd;
    }
    throw new Error(`${files.live} keeps reappearing as a hard link to a retired generation`);
  };

  /** Under the lock: the `prev` for the next line, and whether the file ends in a torn line. */
  const chainHead = (liveFd: number, id: string, size: number): { prev: string; torn: boolean } => {
    if (size === 0) {
      const sidecar = readSidecar(files);
      if (sidecar.head) return { prev: sidecar.head, torn: false };
      const gens = retiredGenerations(files.live);
      const newest = gens[gens.length - 1];
      const fromFile = newest !== undefined ? lastHashOfFile(`${files.live}.${newest}`, key) : undefined;
      return { prev: fromFile ?? GENESIS, torn: false };
    }
    if (cache && cache.id === id && cache.size === size) return { prev: cache.hash, torn: false };
    const last = lastLineOf(liveFd, size)!;
    return { prev: linkHash(last.bytes, key), torn: last.unterminated };
  };

  const rotate = (liveFd: number, id: string, size: number): void => {
    // The retiring file's content is durable before its name changes.
    fs.fdatasyncSync(liveFd);
    const head = chainHead(liveFd, id, size).prev;
    let gen = nextGeneration(files, key);
    for (let attempt = 0; ; attempt++) {
      if (attempt >= MAX_LINK_ATTEMPTS || gen > MAX_GENERATION)
        throw new Error(
          `cannot retire ${files.live}: generation names up to ${gen} are taken. Fix: run scoot audit verify and move unexpected audit.jsonl.<n> files aside`,
        );
      opts.onRotationStep?.("sidecar");
      writeSidecar(files, gen + 1, head, key);
      opts.onRotationStep?.("link");
      try {
        fs.linkSync(files.live, `${files.live}.${gen}`);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        gen += 1;
      }
    }
    fsyncDir(dir);
    opts.onRotationStep?.("unlink");
    fs.unlinkSync(files.live);
    fsyncDir(dir);
    closeFd();
    evict(files, opts.maxRetained, key, opts.onRotationStep);
  };

  const log: AuditLog = {
    emit(sessionId, kind, rawMsg, runId) {
      const msg = clipAuditMessage(rawMsg);
      if (!opts.toFile) return { ok: true, value: undefined };
      if (!ALWAYS_WRITTEN.has(kind) && LEVEL_RANK[KIND_LEVEL[kind]] < LEVEL_RANK[opts.level])
        return { ok: true, value: undefined };
      if (!keyLoaded) {
        const k = loadAuditKey(opts.hmacKeyFile);
        if (!k.ok) return { ok: false, error: `cannot write the audit log ${files.live}: ${k.error}` };
        key = k.value;
        keyLoaded = true;
      }
      // Key order is the seed's: seq, ts, session_id, run_id?, kind, msg; then the chain.
      const event: AuditEvent = {
        seq,
        ts: Date.now(),
        session_id: sessionId,
        ...(runId ? { run_id: runId } : {}),
        kind,
        msg: redact(msg),
      };
      let written: number;
      try {
        const lock = acquireLock(files.lock);
        try {
          if (!recordChecked) {
            ensureChainRecord(opts.file, key);
            recordChecked = true;
          }
          let liveFd = ensureOpen();
          let st = fs.fstatSync(liveFd);
          const bytes = Buffer.byteLength(JSON.stringify(event)) + PREV_FIELD_BYTES;
          if (st.size > 0 && st.size + bytes > opts.maxFileBytes) {
            rotate(liveFd, fileId(st), st.size);
            liveFd = ensureOpen();
            st = fs.fstatSync(liveFd);
          }
          const { prev, torn } = chainHead(liveFd, fileId(st), st.size);
          event.prev = prev;
          const line = JSON.stringify(event);
          // After a torn last line the record starts on a fresh line; the chain covers the
          // fragment, so verify can tell this repair from an inserted line.
          const buf = Buffer.from(`${torn ? "\n" : ""}${line}\n`);
          cache = undefined;
          writeAll(liveFd, buf);
          cache = { id: fileId(st), size: st.size + buf.length, hash: linkHash(Buffer.from(line), key) };
          written = liveFd;
        } finally {
          lock.release();
        }
        // Outside the lock: the data is in the file already; only our wait depends on the disk.
        if (SYNCED_KINDS.has(kind)) fs.fdatasyncSync(written);
        else dirty = true;
      } catch (e) {
        return { ok: false, error: `cannot write the audit log ${files.live}: ${(e as Error).message}` };
      }
      openLogs.add(log);
      seq += 1;
      return { ok: true, value: event };
    },
    flush() {
      if (fd === undefined || !dirty) return { ok: true, value: undefined };
      try {
        fs.fdatasyncSync(fd);
        dirty = false;
        return { ok: true, value: undefined };
      } catch (e) {
        return { ok: false, error: `cannot flush the audit log ${files.live}: ${(e as Error).message}` };
      }
    },
    close() {
      log.flush();
      try {
        closeFd();
      } catch {
        // closing a descriptor that is already gone
      }
      openLogs.delete(log);
    },
  };
  closeAtProcessEnd();
  return log;
}

/**
 * Retired generation numbers present on disk, ascending: only names in range (a planted
 * `audit.jsonl.99999999999999` is reported by verify, never walked up to).
 */
export function retiredGenerations(live: string): number[] {
  return numberedSiblings(live).filter(isGenerationNumber);
}

/**
 * The live file has another name. A retired generation with the same inode is a rotation
 * killed between link and unlink (the caller finishes it); anything else is refused.
 */
function refuseForeignLink(live: string, st: fs.Stats): void {
  for (const g of retiredGenerations(live)) {
    try {
      const r = fs.lstatSync(`${live}.${g}`);
      if (r.ino === st.ino && r.dev === st.dev) return;
    } catch {
      // evicted meanwhile
    }
  }
  throw new Error(
    `${live} has ${st.nlink} hard links, and no retired generation is one of them: refused (removing it would drop history no gap record names). Fix: find the other name (find ${path.dirname(path.dirname(live))} -samefile ${live}) and remove it`,
  );
}

/**
 * Under the lock, before the first chained line this process writes: the chain record
 * exists and names this writer's mode. A missing one is written now, counting the lines
 * that predate the chain (a log an older Scoot wrote); a bad one or another mode stops the
 * writer with the fix, so it never chains onto a log it cannot extend.
 */
function ensureChainRecord(live: string, key: Buffer | undefined): void {
  const r = readChainRecord(live);
  if (r.state === "bad")
    throw new Error(
      `${r.problem}. Fix: run scoot audit verify; if the log is intact otherwise, move logs/audit.jsonl* aside to start a new chain`,
    );
  if (r.state === "ok") {
    const mismatch = modeMismatch(r.record, key, live);
    if (mismatch) throw new Error(mismatch);
    return;
  }
  writeChainRecord(live, key ? "hmac" : "sha256", legacyLines(live), key);
}

/** Lines at the start of the log that carry no chain link, up to the first that does. */
function legacyLines(live: string): number {
  let n = 0;
  for (const file of auditSources(live)) {
    for (const l of readLinesSync(file)) {
      try {
        if (typeof (JSON.parse(l.text ?? "") as { prev?: unknown }).prev === "string") return n;
      } catch {
        // a torn line is not a chain link
      }
      n += 1;
    }
  }
  return n;
}

/** Gap records the writer may act on: in range and, with a key, authentic. */
function trustedGaps(live: string, key: Buffer | undefined): GapRecord[] {
  return readGaps(live).gaps.filter((g) => !key || g.mac === gapMac(g, key));
}

/** The next number: the sidecar, but never at or below anything already on disk or in a gap. */
function nextGeneration(files: AuditFiles, key: Buffer | undefined): number {
  let next = 1;
  const sidecar = readSidecar(files).next;
  if (sidecar !== undefined && sidecar > next) next = sidecar;
  const onDisk = retiredGenerations(files.live);
  const maxOnDisk = onDisk[onDisk.length - 1];
  if (maxOnDisk !== undefined && maxOnDisk + 1 > next) next = maxOnDisk + 1;
  for (const gap of trustedGaps(files.live, key)) if (gap.gap_to + 1 > next) next = gap.gap_to + 1;
  return next;
}

/**
 * `audit.jsonl.gen`: the next generation number, then the chain head of the file being
 * retired, then (HMAC logs) a mac over both so the head cannot be moved without the key.
 */
function writeSidecar(files: AuditFiles, next: number, head: string, key: Buffer | undefined): void {
  // A unique temp name: a writer killed here leaves litter, never a file another writer
  // could rename into place half-written.
  const tmp = `${files.genSidecar}.tmp-${process.pid}-${Date.now().toString(36)}`;
  const fd = fs.openSync(tmp, "wx", 0o600);
  try {
    fs.writeSync(fd, `${next}\n${head}\n${key ? `${sidecarMac(next, head, key)}\n` : ""}`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, files.genSidecar);
}

/** Appends one line and flushes it before returning. */
function appendDurable(file: string, line: string): void {
  const created = !fs.existsSync(file);
  const prefix = !created && needsLeadingNewline(file) ? "\n" : "";
  const fd = fs.openSync(file, "a", 0o600);
  try {
    writeAll(fd, Buffer.from(`${prefix}${line}\n`));
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (created) fsyncDir(path.dirname(file));
}

/**
 * Removes the oldest retired generations beyond `maxRetained`. The gap record is on disk
 * before the file goes, so a crash in between leaves a recorded gap for a file that still
 * exists (harmless, and not recorded twice), never a silent loss.
 */
function evict(
  files: AuditFiles,
  maxRetained: number,
  key: Buffer | undefined,
  onStep?: (step: RotationStep) => void,
): void {
  // Only records the writer can trust (in range; authentic with a key) may delete a file.
  const gapsNow = trustedGaps(files.live, key);
  const recorded = { has: (n: number) => gapsNow.some((g) => g.gap_from <= n && n <= g.gap_to) };
  // A generation whose gap record is written but whose file is still here is an eviction a
  // killed writer did not finish (the record goes first, by design): finish it now, whatever
  // the count, so no generation is both retained and recorded as removed.
  const gens: number[] = [];
  for (const g of retiredGenerations(files.live)) {
    if (!recorded.has(g)) gens.push(g);
    else {
      onStep?.("evict");
      fs.rmSync(`${files.live}.${g}`, { force: true });
    }
  }
  while (gens.length > maxRetained) {
    const oldest = gens.shift()!;
    const file = `${files.live}.${oldest}`;
    if (!recorded.has(oldest)) {
      const last = lastHashOfFile(file, key);
      const first = firstPrevOfFile(file);
      const gap: GapRecord = {
        gap_from: oldest,
        gap_to: oldest,
        ts: Date.now(),
        ...(last ? { last } : {}),
        ...(first ? { first } : {}),
      };
      if (key) gap.mac = gapMac(gap, key);
      onStep?.("gap");
      appendDurable(files.gaps, JSON.stringify(gap));
    }
    onStep?.("evict");
    fs.rmSync(file, { force: true });
  }
  fsyncDir(path.dirname(files.live));
}

function isGap(v: unknown): v is GapRecord {
  const g = v as GapRecord;
  return (
    typeof g === "object" && g !== null && typeof g.gap_from === "number" && typeof g.gap_to === "number"
  );
}

/**
 * The gap records, read line by line (bounded memory whatever the file size).
 * A record whose bounds are out of range (audit-numbers.ts) is not a gap: it is listed in
 * `poisoned` for verify to report, and nobody loops over it.
 */
export function readGaps(live: string): { gaps: GapRecord[]; warnings: string[]; poisoned: string[] } {
  const files = auditFiles(live);
  const gaps: GapRecord[] = [];
  const warnings: string[] = [];
  const poisoned: string[] = [];
  for (const item of readJsonlSync(files.gaps, isGap)) {
    if (item.warning !== undefined) warnings.push(item.warning);
    else {
      const problem = gapBoundsProblem(item.record.gap_from, item.record.gap_to);
      if (problem) poisoned.push(`${path.basename(files.gaps)}: ${problem}`);
      else gaps.push(item.record);
    }
  }
  return { gaps, warnings, poisoned };
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
