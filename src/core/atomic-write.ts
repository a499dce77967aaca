/**
 * Replace a file's contents all at once: write a temporary file beside it, flush it, then
 * rename it over the target. Readers see the old bytes or the new ones, never half of each,
 * and on any failure the original is untouched and the temporary file is gone.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fsErrorText } from "./fs-errors.js";
import type { Result } from "./types.js";

/** The temp name borrows at most this much of the target's name, so long names still fit NAME_MAX. */
const TEMP_NAME_BASE_CHARS = 40;

export interface AtomicWriteOptions {
  /** Permission bits for the result (e.g. the replaced file's); default: 0o666 minus the umask. */
  mode?: number;
  /** Owner to restore when replacing another user's file; best effort (needs privilege). */
  owner?: { uid: number; gid: number };
  /**
   * Checks where the temporary file really is, on its descriptor: once created (before any
   * byte is written) and after the rename. A failure removes the file wherever it landed.
   */
  landing?: (fd: number, stage: "created" | "renamed") => Result<void>;
}

/** Writes `data` to `target` atomically; returns the bytes written. The parent directory must exist. */
export function atomicWriteFile(
  target: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): Result<number> {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const dir = path.dirname(target);
  const base = path.basename(target).slice(0, TEMP_NAME_BASE_CHARS);
  const temp = path.join(dir, `.${base}.scoot-${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
  let created = false;
  try {
    const fd = fs.openSync(
      temp,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
      opts.mode ?? 0o666,
    );
    created = true;
    let renamed = false;
    try {
      const there = opts.landing?.(fd, "created");
      if (there && !there.ok) {
        removeLanded(fd, temp);
        created = false;
        return there;
      }
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
      // open() applied the umask; an explicit mode (the replaced file's) must survive exactly.
      if (opts.mode !== undefined) fs.fchmodSync(fd, opts.mode);
      if (opts.owner) chownQuietly(fd, opts.owner);
      fs.fsyncSync(fd);
      fs.renameSync(temp, target);
      renamed = true;
      created = false;
      const landed = opts.landing?.(fd, "renamed");
      if (landed && !landed.ok) {
        removeLanded(fd, target);
        return landed;
      }
    } finally {
      fs.closeSync(fd);
    }
    if (!renamed) return { ok: false, error: "the temporary file was not renamed into place" };
    syncDirQuietly(dir);
    return { ok: true, value: bytes.length };
  } catch (e) {
    if (created) removeQuietly(temp);
    return { ok: false, error: fsErrorText(e) };
  }
}

function chownQuietly(fd: number, owner: { uid: number; gid: number }): void {
  try {
    fs.fchownSync(fd, owner.uid, owner.gid);
  } catch {
    // Only a privileged process may give a file away; an unprivileged write keeps its own owner.
  }
}

function syncDirQuietly(dir: string): void {
  // Makes the rename itself durable; not every platform lets a directory be fsynced.
  try {
    const fd = fs.openSync(dir, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // The data is already in place; durability of the directory entry is best effort.
  }
}

/** Removes the file open on `fd` where it really is (its descriptor says), else by name. */
function removeLanded(fd: number, byName: string): void {
  let real: string | undefined;
  try {
    real = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    real = undefined;
  }
  removeQuietly(real && !real.endsWith(" (deleted)") ? real : byName);
}

function removeQuietly(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch {
    // Nothing more can be done; the caller reports the original failure.
  }
}
