/**
 * The chain record, `audit.jsonl.chain` (docs/sessions.md "Sessions and audit"): the chain's mode
 * (SHA-256 or HMAC) and where it starts (how many lines at the head of the log predate it),
 * written once by the first writer that chains, before its first chained line. `audit
 * verify` takes the mode and the start from here, never from config.toml: editing the
 * configuration cannot turn an HMAC log into a SHA-256 one, and stripping every `prev` from
 * a log does not make its lines "older than the chain". With a key the record carries a
 * mac, so it cannot be rewritten without the key either.
 */
import fs from "node:fs";
import path from "node:path";
import { linkHash } from "./audit-chain.js";
import { readTextIfExists } from "./jsonl.js";

export type ChainMode = "sha256" | "hmac";

export interface ChainRecord {
  mode: ChainMode;
  /** Lines at the start of the log written before the chain existed (no `prev`). */
  legacy: number;
  ts: number;
  /** HMAC mode: the key's mac over mode and legacy. */
  mac?: string;
}

/** More legacy lines than this is not a log an older Scoot wrote. */
const MAX_LEGACY_LINES = 1_000_000_000;

export function chainRecordFile(live: string): string {
  return `${live}.chain`;
}

export function chainRecordMac(r: { mode: ChainMode; legacy: number }, key: Buffer): string {
  return linkHash(Buffer.from(`chain ${r.mode} ${r.legacy}`), key);
}

export type ReadRecord =
  | { state: "missing" }
  | { state: "ok"; record: ChainRecord }
  | { state: "bad"; problem: string };

/** Reads and range-checks the record; a bad one is reported, never used. */
export function readChainRecord(live: string): ReadRecord {
  const file = chainRecordFile(live);
  let text: string | undefined;
  try {
    text = readTextIfExists(file);
  } catch (e) {
    return { state: "bad", problem: (e as Error).message };
  }
  if (text === undefined) return { state: "missing" };
  let v: Partial<ChainRecord>;
  try {
    v = JSON.parse(text) as Partial<ChainRecord>;
  } catch {
    return { state: "bad", problem: `${file} is not valid JSON` };
  }
  if (typeof v !== "object" || v === null || (v.mode !== "sha256" && v.mode !== "hmac"))
    return { state: "bad", problem: `${file} names no chain mode ("sha256" or "hmac")` };
  const legacy = v.legacy;
  if (typeof legacy !== "number" || !Number.isSafeInteger(legacy) || legacy < 0 || legacy > MAX_LEGACY_LINES)
    return { state: "bad", problem: `${file}: legacy=${String(legacy)} is outside 0..${MAX_LEGACY_LINES}` };
  return {
    state: "ok",
    record: {
      mode: v.mode,
      legacy,
      ts: typeof v.ts === "number" ? v.ts : 0,
      ...(typeof v.mac === "string" ? { mac: v.mac } : {}),
    },
  };
}

/** Durably, before the first chained line: temp file, fsync, rename, fsync of the directory. */
export function writeChainRecord(
  live: string,
  mode: ChainMode,
  legacy: number,
  key: Buffer | undefined,
): void {
  const file = chainRecordFile(live);
  const record: ChainRecord = { mode, legacy, ts: Date.now() };
  if (key) record.mac = chainRecordMac(record, key);
  const tmp = `${file}.tmp-${process.pid}-${Date.now().toString(36)}`;
  const fd = fs.openSync(tmp, "wx", 0o600);
  try {
    try {
      fs.writeSync(fd, `${JSON.stringify(record)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    // A failed write (a full disk) leaves no temp file behind; the caller reports the failure.
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  const dir = fs.openSync(path.dirname(file), "r");
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

/** What a record says about a key: undefined when they agree, else the mismatch and its fix. */
export function modeMismatch(record: ChainRecord, key: Buffer | undefined, live: string): string | undefined {
  const file = path.basename(chainRecordFile(live));
  if (record.mode === "hmac" && !key)
    return `the audit log is an HMAC chain (recorded in ${file}) but no audit.hmac_key_file is configured. Fix: set audit.hmac_key_file back to the key this log was written with`;
  if (record.mode === "sha256" && key)
    return `the audit log is a SHA-256 chain (recorded in ${file}) but audit.hmac_key_file is set. Fix: remove the key setting, or move logs/audit.jsonl* aside to start a new HMAC chain`;
  if (record.mode === "hmac" && key && record.mac !== chainRecordMac(record, key))
    return `${file} has no valid mac for this key: it was not written with audit.hmac_key_file's key`;
  return undefined;
}
