/**
 * Undo and diff reach a checkpointed file only through descriptors opened from the project
 * root one component at a time (docs/sessions.md "Undo"): each directory is opened with
 * O_DIRECTORY|O_NOFOLLOW through its parent's `/proc/self/fd/N`, and its real path is checked
 * against the expected one (what src/policy/opened.ts does for the file tools). A directory on
 * the way that was swapped for a symlink, a recorded path with `..` or outside the root, or a
 * final component that is a symlink is refused: undo never writes, removes or reads through it.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { canJudgeDescriptors, realPathOf } from "../core/fd-path.js";
import { fsErrorText } from "../core/fs-errors.js";
import type { Result } from "../core/types.js";

/** A file bigger than this is not read back (the store never keeps more). */
const CONTAINED_READ_MAX_BYTES = 16 * 1024 * 1024;
const DIR_FLAGS = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;

/** Why an entry is refused for containment: the fix is always to look at it by hand. */
export class Refused {
  constructor(readonly why: string) {}
}

export interface OpenedParent {
  fd: number;
  /** The entry's name inside the opened parent. */
  name: string;
  /** The path of `name` to hand the kernel: through the descriptor, never through a link. */
  at: string;
  close(): void;
}

/** The components of `file` below `root`, or why the recorded path escapes the root. */
export function componentsBelow(root: string, file: string): Result<string[]> {
  if (!path.isAbsolute(root) || !path.isAbsolute(file))
    return { ok: false, error: "the recorded path or root is not absolute" };
  const raw = file.split("/").filter((s) => s !== "");
  if (raw.some((s) => s === ".." || s === "."))
    return { ok: false, error: "the recorded path contains '..' or '.'" };
  const rootParts = root.split("/").filter((s) => s !== "");
  const inside = rootParts.every((s, i) => raw[i] === s) && raw.length > rootParts.length;
  if (!inside) return { ok: false, error: `the recorded path is outside the project root ${root}` };
  return { ok: true, value: raw.slice(rootParts.length) };
}

/** A directory's identity as checkpoints record it. */
export function directoryId(st: { dev: number | bigint; ino: number | bigint }): string {
  return `${st.dev}:${st.ino}`;
}

function through(fd: number, name: string): string {
  return `/proc/self/fd/${fd}/${name}`;
}

/**
 * Opens the parent directory of `file`, walking from `root`. `create` makes missing
 * directories (a restore of content); otherwise a missing directory is reported as missing.
 */
export function openParent(
  root: string,
  file: string,
  opts: { create: boolean; parentId?: string | undefined },
): Result<OpenedParent | "missing"> | Refused {
  if (!canJudgeDescriptors())
    return new Refused(
      "descriptors cannot be judged here (/proc/self/fd is not mounted); undo needs Linux /proc",
    );
  const parts = componentsBelow(root, file);
  if (!parts.ok) return new Refused(parts.error);
  let fd: number;
  try {
    fd = fs.openSync(root, DIR_FLAGS);
  } catch (e) {
    return new Refused(`cannot open the project root ${root}: ${fsErrorText(e)}`);
  }
  if (realPathOf(fd) !== root) {
    fs.closeSync(fd);
    return new Refused(
      `the project root ${root} is no longer that directory (it was moved or swapped for a symlink)`,
    );
  }
  let expected = root;
  let created = false;
  for (const seg of parts.value.slice(0, -1)) {
    expected = path.join(expected, seg);
    let next: number;
    try {
      next = fs.openSync(through(fd, seg), DIR_FLAGS);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" && opts.create) {
        try {
          fs.mkdirSync(through(fd, seg));
          next = fs.openSync(through(fd, seg), DIR_FLAGS);
          created = true;
        } catch (e2) {
          fs.closeSync(fd);
          return { ok: false, error: `cannot create the directory ${expected}: ${fsErrorText(e2)}` };
        }
      } else {
        fs.closeSync(fd);
        if (code === "ENOENT") return { ok: true, value: "missing" };
        if (code === "ELOOP" || code === "ENOTDIR")
          return new Refused(`${expected} is now a symlink or not a directory; undo does not go through it`);
        return { ok: false, error: `cannot open ${expected}: ${fsErrorText(e)}` };
      }
    }
    fs.closeSync(fd);
    fd = next;
    if (realPathOf(fd) !== expected) {
      fs.closeSync(fd);
      return new Refused(`${expected} is no longer the directory it was (it leads elsewhere)`);
    }
  }
  // The same path can now be another directory (removed and made again, or moved in from
  // elsewhere in the project): what Scoot changed lived in the one it recorded. A directory
  // undo itself just made again is the exception: the recorded one is gone.
  if (opts.parentId !== undefined && !created && directoryId(fs.fstatSync(fd)) !== opts.parentId) {
    fs.closeSync(fd);
    return new Refused(
      `${path.dirname(file)} is no longer the directory Scoot changed the file in (it was replaced since)`,
    );
  }
  const name = parts.value.at(-1)!;
  const held = fd;
  return { ok: true, value: { fd: held, name, at: through(held, name), close: () => fs.closeSync(held) } };
}

export type ContainedRead = { bytes: Buffer | null } | { unreadable: string } | Refused;

/** What the file holds now, read through its opened parent; null when absent. */
export function readContained(root: string, file: string, parentId?: string): ContainedRead {
  const parent = openParent(root, file, { create: false, parentId });
  if (parent instanceof Refused) return parent;
  if (!parent.ok) return { unreadable: parent.error };
  if (parent.value === "missing") return { bytes: null };
  const p = parent.value;
  try {
    let fd: number;
    try {
      fd = fs.openSync(p.at, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { bytes: null };
      if (code === "ELOOP") return new Refused(`${file} is now a symlink; undo does not follow it`);
      return { unreadable: fsErrorText(e) };
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return { unreadable: "it is not a regular file" };
      if (st.size > CONTAINED_READ_MAX_BYTES)
        return { unreadable: `it is over ${CONTAINED_READ_MAX_BYTES} bytes` };
      return { bytes: fs.readFileSync(fd) };
    } finally {
      fs.closeSync(fd);
    }
  } finally {
    p.close();
  }
}

/** Removes `file` through its opened parent; a symlink or directory there is refused. */
export function unlinkContained(root: string, file: string, parentId?: string): Result<void> | Refused {
  const parent = openParent(root, file, { create: false, parentId });
  if (parent instanceof Refused || !parent.ok) return parent;
  if (parent.value === "missing") return { ok: true, value: undefined };
  const p = parent.value;
  try {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p.at);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, value: undefined };
      return { ok: false, error: fsErrorText(e) };
    }
    if (st.isSymbolicLink()) return new Refused(`${file} is now a symlink; undo does not remove it`);
    if (st.isDirectory()) return { ok: false, error: "it is now a directory; not removed" };
    fs.unlinkSync(p.at);
    return { ok: true, value: undefined };
  } catch (e) {
    return { ok: false, error: fsErrorText(e) };
  } finally {
    p.close();
  }
}

/** Writes `bytes` to `file` atomically: a temporary file in the opened parent, renamed over it. */
export function writeContained(
  root: string,
  file: string,
  bytes: Buffer,
  mode: number,
  parentId?: string,
): Result<void> | Refused {
  const parent = openParent(root, file, { create: true, parentId });
  if (parent instanceof Refused || !parent.ok) return parent;
  if (parent.value === "missing") return { ok: false, error: "its directory could not be created" };
  const p = parent.value;
  const temp = through(
    p.fd,
    `.${p.name.slice(0, 40)}.scoot-${process.pid}-${randomBytes(4).toString("hex")}.tmp`,
  );
  try {
    try {
      if (fs.lstatSync(p.at).isSymbolicLink())
        return new Refused(`${file} is now a symlink; undo does not replace it`);
    } catch {
      // Absent: created below.
    }
    const fd = fs.openSync(
      temp,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
      mode,
    );
    try {
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
      fs.fchmodSync(fd, mode);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, p.at);
    return { ok: true, value: undefined };
  } catch (e) {
    try {
      fs.unlinkSync(temp);
    } catch {
      // Never created or already renamed.
    }
    return { ok: false, error: fsErrorText(e) };
  } finally {
    p.close();
  }
}
