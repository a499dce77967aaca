/**
 * The audit hash chain: every event's `prev` is the SHA-256 — or, with
 * `audit.hmac_key_file`, the HMAC-SHA256 — of the previous line's bytes in file order, the
 * generations read oldest first and the live file last. The very first event of a log has
 * `prev` = GENESIS. See docs/sessions.md "Sessions and audit".
 */
import { createHash, createHmac } from "node:crypto";
import fs from "node:fs";
import { untrustedFileProblem } from "../config/trusted-file.js";
import type { Result } from "../core/types.js";

export const GENESIS = "0".repeat(64);
/** The key file's mode, like the token file's: only the owner may read it. */
export const KEY_FILE_MODE = 0o600;
/** Fewer bytes than this is not a key worth the name. */
export const MIN_KEY_BYTES = 16;
const MAX_KEY_BYTES = 4096;

export function linkHash(line: Buffer, key?: Buffer): string {
  return (key ? createHmac("sha256", key) : createHash("sha256")).update(line).digest("hex");
}

/** What a gap record's `mac` covers: an HMAC log's gap records cannot be forged without the key. */
export function gapMac(
  g: { gap_from: number; gap_to: number; last?: string; first?: string },
  key: Buffer,
): string {
  return linkHash(Buffer.from(`gap ${g.gap_from} ${g.gap_to} ${g.last ?? ""} ${g.first ?? ""}`), key);
}

/** Reads `audit.hmac_key_file`: a regular file of mode 0600 with at least MIN_KEY_BYTES. */
export function loadAuditKey(file: string | undefined): Result<Buffer | undefined> {
  if (file === undefined) return { ok: true, value: undefined };
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    return {
      ok: false,
      error: `audit.hmac_key_file ${file}: ${(e as Error).message}. Fix: create it (e.g. head -c 32 /dev/urandom | base64 > ${file}; chmod 600 ${file}) or remove the key`,
    };
  }
  if (!st.isFile()) return { ok: false, error: `audit.hmac_key_file ${file} is not a regular file` };
  const untrusted = untrustedFileProblem(file, "audit.hmac_key_file");
  if (untrusted) return { ok: false, error: untrusted };
  const mode = st.mode & 0o777;
  if (mode !== KEY_FILE_MODE) {
    return {
      ok: false,
      error: `audit.hmac_key_file ${file} has mode ${mode.toString(8).padStart(4, "0")}; it must be 0600 so only you can read it. Fix: chmod 600 ${file}`,
    };
  }
  if (st.size > MAX_KEY_BYTES)
    return { ok: false, error: `audit.hmac_key_file ${file} is larger than ${MAX_KEY_BYTES} bytes` };
  // Trailing whitespace (the newline an editor adds) is not part of the key.
  const key = Buffer.from(fs.readFileSync(file, "utf8").trimEnd());
  if (key.length < MIN_KEY_BYTES) {
    return {
      ok: false,
      error: `audit.hmac_key_file ${file} holds ${key.length} bytes; use at least ${MIN_KEY_BYTES}`,
    };
  }
  return { ok: true, value: key };
}
