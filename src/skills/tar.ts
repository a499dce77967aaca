/**
 * A minimal POSIX ustar writer: regular files only, which is all a skill package holds.
 * Written by hand because the format is small and a dependency for it would be larger
 * than this file. Output is readable by GNU tar, bsdtar and Python's tarfile.
 */
import type { Result } from "../core/types.js";

const BLOCK = 512;
/** GNU tar writes 20-block records; padding to one keeps strict readers quiet. */
const RECORD = 20 * BLOCK;
const NAME_BYTES = 100;
const PREFIX_BYTES = 155;
/** ustar's 11 octal digits of size: 8 GiB - 1. */
export const MAX_TAR_ENTRY_BYTES = 8 ** 11 - 1;
export const MAX_TAR_PATH_BYTES = NAME_BYTES + 1 + PREFIX_BYTES;

export interface TarEntry {
  /** `/`-separated relative path. */
  path: string;
  data: Buffer;
  /** Seconds since the epoch. */
  mtime: number;
}

/** Splits a path into ustar (prefix, name) at a `/`, or says why it cannot. */
export function splitUstarPath(p: string): Result<{ prefix: string; name: string }> {
  const len = Buffer.byteLength(p);
  if (len <= NAME_BYTES) return { ok: true, value: { prefix: "", name: p } };
  if (len > MAX_TAR_PATH_BYTES) {
    return {
      ok: false,
      error: `path is ${len} bytes; a ustar archive holds at most ${MAX_TAR_PATH_BYTES}: ${p}`,
    };
  }
  // The name part should be as long as allowed, so try the leftmost workable slash.
  for (let i = p.indexOf("/"); i >= 0; i = p.indexOf("/", i + 1)) {
    const prefix = p.slice(0, i);
    const name = p.slice(i + 1);
    if (Buffer.byteLength(prefix) <= PREFIX_BYTES && Buffer.byteLength(name) <= NAME_BYTES && name !== "") {
      return { ok: true, value: { prefix, name } };
    }
  }
  return { ok: false, error: `path cannot be split into ustar prefix (155) and name (100) parts: ${p}` };
}

function putString(buf: Buffer, offset: number, length: number, value: string): void {
  buf.write(value, offset, length, "utf8");
}

/** Octal number, zero-padded to `length - 1` digits, NUL-terminated. */
function putOctal(buf: Buffer, offset: number, length: number, value: number): void {
  putString(buf, offset, length, `${value.toString(8).padStart(length - 1, "0")}\0`);
}

/** One 512-byte header for a regular file, mode 0644, owner 0:0. */
export function ustarHeader(entry: { path: string; size: number; mtime: number }): Result<Buffer> {
  const split = splitUstarPath(entry.path);
  if (!split.ok) return split;
  if (entry.size > MAX_TAR_ENTRY_BYTES)
    return { ok: false, error: `file too large for ustar: ${entry.path}` };
  const h = Buffer.alloc(BLOCK, 0);
  putString(h, 0, NAME_BYTES, split.value.name);
  putOctal(h, 100, 8, 0o644);
  putOctal(h, 108, 8, 0);
  putOctal(h, 116, 8, 0);
  putOctal(h, 124, 12, entry.size);
  putOctal(h, 136, 12, Math.max(0, Math.floor(entry.mtime)));
  h.fill(0x20, 148, 156); // checksum is computed with its own field as spaces
  putString(h, 156, 1, "0");
  putString(h, 257, 6, "ustar\0");
  putString(h, 263, 2, "00");
  putOctal(h, 329, 8, 0);
  putOctal(h, 337, 8, 0);
  putString(h, 345, PREFIX_BYTES, split.value.prefix);
  let sum = 0;
  for (const b of h) sum += b;
  putString(h, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return { ok: true, value: h };
}

/** The whole archive as chunks in order (headers, data padded to blocks, end blocks, record padding). */
export function ustarChunks(entries: readonly TarEntry[]): Result<Buffer[]> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (const e of entries) {
    const header = ustarHeader({ path: e.path, size: e.data.length, mtime: e.mtime });
    if (!header.ok) return header;
    chunks.push(header.value, e.data);
    const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
    if (pad > 0) chunks.push(Buffer.alloc(pad));
    total += BLOCK + e.data.length + pad;
  }
  chunks.push(Buffer.alloc(2 * BLOCK));
  total += 2 * BLOCK;
  const recordPad = (RECORD - (total % RECORD)) % RECORD;
  if (recordPad > 0) chunks.push(Buffer.alloc(recordPad));
  return { ok: true, value: chunks };
}
