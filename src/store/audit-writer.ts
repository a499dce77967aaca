/**
 * Writing the audit log: `logs/audit.jsonl`, one event per line, written under a
 * cross-process lock (`core/lock.ts`) with one write(2) on a descriptor kept open between
 * events. Retiring a full file and evicting old generations is `audit-rotation.ts`.
 *
 * Durability: `tool_call` and `policy_deny` records are fdatasync'ed before emit
 * returns, so the record is on disk before the effect it announces starts; other kinds are
 * flushed by `flush()` at run end and when the process ends (`core/process-end.ts`).
 *
 * Tamper evidence: every event carries `prev`, the hash of the previous line in file order
 * (`audit-chain.ts`). The lock is taken for every append so racing processes still build one
 * chain; `scoot audit verify` walks it (`audit-verify.ts`).
 */
import fs from "node:fs";
import path from "node:path";
import type { AuditLevel } from "../config/schema.js";
import { acquireLock } from "../core/lock.js";
import { onProcessEnd } from "../core/process-end.js";
import { redact } from "../core/redact.js";
import type { Result } from "../core/types.js";
import { GENESIS, linkHash, loadAuditKey } from "./audit-chain.js";
import { clipAuditMessage } from "./audit-clip.js";
import type { AuditCall, AuditEvent } from "./audit-readers.js";
import { modeMismatch, readChainRecord, writeChainRecord } from "./audit-record.js";
import {
  auditFiles,
  auditSources,
  evict,
  fsyncDir,
  lastHashOfFile,
  type RotationStep,
  readSidecar,
  retiredGenerations,
  retireLive,
  writeAll,
} from "./audit-rotation.js";
import { lastLineOf } from "./jsonl.js";
import { readLinesSync } from "./lines.js";

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
  | "undo"
  /** Plan mode: a plan the model proposed (its SHA-256 and steps), and a plan step's progress as it runs. */
  | "plan";

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
  plan: "info",
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
  emit(
    sessionId: string,
    kind: AuditKind,
    msg: string,
    runId?: string,
    call?: AuditCall,
  ): Result<AuditEvent | undefined>;
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

/** Inode plus birth time: an inode number freed by an eviction and reused is another file. */
function fileId(st: fs.Stats): string {
  return `${st.dev}-${st.ino}-${st.birthtimeMs}`;
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
    retireLive(files, chainHead(liveFd, id, size).prev, key, opts.onRotationStep);
    closeFd();
    evict(files, opts.maxRetained, key, opts.onRotationStep);
  };

  const log: AuditLog = {
    emit(sessionId, kind, rawMsg, runId, call) {
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
      // Key order is the seed's: seq, ts, session_id, run_id?, kind, msg; the call's fields;
      // then the chain (which covers them like the rest of the line).
      const event: AuditEvent = {
        seq,
        ts: Date.now(),
        session_id: sessionId,
        ...(runId ? { run_id: runId } : {}),
        kind,
        msg: redact(msg),
        ...(call ? { call } : {}),
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
