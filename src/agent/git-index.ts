/**
 * The blobs git's index holds for some paths, read from the index file itself (docs/context.md
 * "Which files below the root are guidance"). No git program runs: a repository's configuration
 * and hooks (core.fsmonitor, filters, …) are the repository's, and reading a file runs none of
 * them. Versions 2, 3 and 4 of the format (version 4 compresses each path against the one
 * before), sha1 and sha256 repositories; only stage-0 entries of regular files count — not a
 * conflict's stages, not an intent-to-add or skip-worktree entry, not a symlink or submodule.
 * A split index (core.splitIndex: most entries live in another file) is not read: its entries
 * here are not the whole story. Anything that does not parse whole is no index at all.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { foreignOwner, OPEN_UNFOLLOWED } from "./project-instructions.js";

/** An index larger than this is not read (a repository of a million files is about 100 MB). */
export const MAX_GIT_INDEX_BYTES = 256 * 1024 * 1024;
/** A `.git` file (`gitdir: …`) larger than this is not one. */
const MAX_GITFILE_BYTES = 4096;

export type ObjectFormat = "sha1" | "sha256";

export interface GitIndex {
  /** The index file read. */
  file: string;
  format: ObjectFormat;
  /** Stage-0 regular files the filter kept: path relative to the work tree, `/`-separated → blob id (hex). */
  blobs: Map<string, string>;
}

export type IndexRead = { ok: true; index: GitIndex } | { ok: false; missing: boolean; error: string };

const SIGNATURE = "DIRC";
const FLAG_EXTENDED = 0x4000;
const FLAG_STAGE = 0x3000;
const NAME_MASK = 0x0fff;
/** Extended flags: intent-to-add (`git add -N`) and skip-worktree (sparse checkout). */
const EXT_INTENT_TO_ADD = 0x2000;
const EXT_SKIP_WORKTREE = 0x4000;
const MODE_TYPE = 0o170000;
const MODE_REGULAR = 0o100000;

/** The index file of the work tree at `root`: `.git/index`, or the one a `.git` file's `gitdir:` names. */
export function indexFileOf(root: string): { file: string } | { missing: boolean; error: string } {
  const dotGit = path.join(root, ".git");
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dotGit);
  } catch {
    return { missing: true, error: `${root} is not a git work tree (no .git)` };
  }
  if (st.isDirectory()) return { file: path.join(dotGit, "index") };
  if (!st.isFile()) return { missing: false, error: `${dotGit} is neither a directory nor a gitdir file` };
  const read = readRegular(dotGit, MAX_GITFILE_BYTES);
  if (!read.ok) return { missing: false, error: read.error };
  const m = /^gitdir: *(.+?)\s*$/m.exec(read.bytes.toString("utf8"));
  if (!m) return { missing: false, error: `${dotGit} names no gitdir` };
  return { file: path.join(path.resolve(root, m[1]!), "index") };
}

/** The whole of a regular file of the user's or root's, opened without following or blocking. */
function readRegular(
  file: string,
  max: number,
): { ok: true; bytes: Buffer } | { ok: false; missing: boolean; error: string } {
  let fd: number;
  try {
    fd = fs.openSync(file, OPEN_UNFOLLOWED);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ok: false, missing: code === "ENOENT", error: `${file}: ${(e as Error).message}` };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { ok: false, missing: false, error: `${file} is not a regular file` };
    const foreign = foreignOwner(file, st);
    if (foreign) return { ok: false, missing: false, error: foreign };
    if (st.size > max) return { ok: false, missing: false, error: `${file} is larger than ${max} bytes` };
    const bytes = Buffer.alloc(st.size);
    let got = 0;
    while (got < bytes.length) {
      const n = fs.readSync(fd, bytes, got, bytes.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return { ok: true, bytes: bytes.subarray(0, got) };
  } catch (e) {
    return { ok: false, missing: false, error: `${file}: ${(e as Error).message}` };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The index of the work tree at `root`, keeping the paths `keep` wants (checked on the path's
 * bytes as text, so a filter that looks at the name's end is cheap on a large index).
 */
export function readGitIndex(root: string, keep: (relPath: string) => boolean): IndexRead {
  const where = indexFileOf(root);
  if (!("file" in where)) return { ok: false, ...where };
  const read = readRegular(where.file, MAX_GIT_INDEX_BYTES);
  if (!read.ok) return read;
  const parsed = parseGitIndex(read.bytes, keep);
  if ("error" in parsed) return { ok: false, missing: false, error: `${where.file}: ${parsed.error}` };
  return { ok: true, index: { file: where.file, ...parsed } };
}

/** The index's entries; the object format is the one whose layout parses to the trailer exactly. */
export function parseGitIndex(
  buf: Buffer,
  keep: (relPath: string) => boolean,
): { format: ObjectFormat; blobs: Map<string, string> } | { error: string } {
  if (buf.length < 12 || buf.toString("latin1", 0, 4) !== SIGNATURE) return { error: "not a git index" };
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return { error: `index version ${version} is not read` };
  let why = "";
  for (const format of ["sha1", "sha256"] as const) {
    const got = parseAs(buf, version, format, keep);
    if ("blobs" in got) return { format, blobs: got.blobs };
    why ||= got.error;
  }
  return { error: why };
}

function hashLength(format: ObjectFormat): number {
  return format === "sha1" ? 20 : 32;
}

/** Git's offset varint (varint.c): each continuation adds one before shifting. */
function readVarint(buf: Buffer, at: number, end: number): { value: number; next: number } | undefined {
  let p = at;
  if (p >= end) return undefined;
  let c = buf[p++]!;
  let value = c & 0x7f;
  while (c & 0x80) {
    if (p >= end || value > 0xffffff) return undefined;
    c = buf[p++]!;
    value = ((value + 1) << 7) | (c & 0x7f);
  }
  return { value, next: p };
}

function parseAs(
  buf: Buffer,
  version: number,
  format: ObjectFormat,
  keep: (relPath: string) => boolean,
): { blobs: Map<string, string> } | { error: string } {
  const hashLen = hashLength(format);
  const end = buf.length - hashLen;
  if (end < 12) return { error: "truncated" };
  const count = buf.readUInt32BE(8);
  const blobs = new Map<string, string>();
  let off = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const flagsAt = off + 40 + hashLen;
    if (flagsAt + 2 > end) return { error: `entry ${i} is cut off` };
    const mode = buf.readUInt32BE(off + 24);
    const flags = buf.readUInt16BE(flagsAt);
    let p = flagsAt + 2;
    let extended = 0;
    if (flags & FLAG_EXTENDED) {
      if (version < 3) return { error: `entry ${i} has extended flags in a version ${version} index` };
      if (p + 2 > end) return { error: `entry ${i} is cut off` };
      extended = buf.readUInt16BE(p);
      p += 2;
    }
    let name: Buffer;
    if (version === 4) {
      const strip = readVarint(buf, p, end);
      if (!strip || strip.value > previous.length) return { error: `entry ${i} has a bad path prefix` };
      const nul = buf.indexOf(0, strip.next);
      if (nul < 0 || nul >= end) return { error: `entry ${i} has no path end` };
      name = Buffer.concat([
        previous.subarray(0, previous.length - strip.value),
        buf.subarray(strip.next, nul),
      ]);
      off = nul + 1;
    } else {
      const nul = buf.indexOf(0, p);
      if (nul < 0 || nul >= end) return { error: `entry ${i} has no path end` };
      name = buf.subarray(p, nul);
      // The entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
      off += ((p - off + name.length + 8) & ~7) >>> 0;
      if (off > end) return { error: `entry ${i} is cut off` };
    }
    const nameLength = flags & NAME_MASK;
    if (nameLength === NAME_MASK ? name.length < NAME_MASK : name.length !== nameLength)
      return { error: `entry ${i}'s path length does not match its flags` };
    previous = name;
    if ((flags & FLAG_STAGE) !== 0 || (extended & (EXT_INTENT_TO_ADD | EXT_SKIP_WORKTREE)) !== 0) continue;
    if ((mode & MODE_TYPE) !== MODE_REGULAR) continue;
    const rel = name.toString("utf8");
    if (keep(rel)) blobs.set(rel, buf.toString("hex", flagsAt - hashLen, flagsAt));
  }
  // Extensions, each a 4-byte signature and a 4-byte length, up to the trailer.
  while (off < end) {
    if (off + 8 > end) return { error: "an extension is cut off" };
    const signature = buf.toString("latin1", off, off + 4);
    if (signature === "link")
      return { error: "the index is split (core.splitIndex); its entries are not all here" };
    off += 8 + buf.readUInt32BE(off + 4);
  }
  if (off !== end) return { error: "the entries do not end at the trailer" };
  // The trailer is the hash of all before it (all zeros when index.skipHash is set).
  const trailer = buf.subarray(end);
  if (
    trailer.some((b) => b !== 0) &&
    !createHash(format).update(buf.subarray(0, end)).digest().equals(trailer)
  )
    return { error: "its checksum does not match" };
  return { blobs };
}

/** The id git gives `content` as a blob: the hash of `blob <length>\0` and the bytes. */
export function blobId(content: Buffer, format: ObjectFormat): string {
  return createHash(format).update(`blob ${content.length}\0`).update(content).digest("hex");
}
