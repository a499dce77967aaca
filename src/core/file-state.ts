/**
 * What a judged path holds right now, read without following a final symlink and without
 * blocking on a FIFO: the file tools' pipeline reads it before and after a change, undo reads
 * it to tell whether a file changed since (docs/sessions.md "Undo").
 */
import fs from "node:fs";

/** A file bigger than this is not read (no checkpoint, no diff: the tools refuse or the store could not keep it). */
export const CHANGE_READ_MAX_BYTES = 16 * 1024 * 1024;

export type Current = { ok: true; bytes: Buffer | null; mode?: number } | { ok: false };

/** What `abs` holds now: its bytes, null when absent, not ok when it is no regular file we may read. */
export function readCurrent(abs: string): Current {
  let fd: number;
  try {
    fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, bytes: null };
    return { ok: false };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > CHANGE_READ_MAX_BYTES) return { ok: false };
    return { ok: true, bytes: fs.readFileSync(fd), mode: st.mode & 0o7777 };
  } catch {
    return { ok: false };
  } finally {
    fs.closeSync(fd);
  }
}
