/**
 * The few filesystem moves skills need, done so that a hostile tree cannot hang or
 * escape them: reads open non-blocking and check the open descriptor (a FIFO named
 * SKILL.md must not block discovery), containment compares realpaths.
 */
import * as fs from "node:fs";
import * as path from "node:path";

export type ReadResult =
  | { ok: true; data: Buffer }
  | { ok: false; error: string; code: "missing" | "not_file" | "too_large" | "io" };

/**
 * Reads a regular file of at most `maxBytes`. The type and size are checked on the
 * opened descriptor, not on a separate stat, so a swap between check and read cannot
 * turn the read into a blocking FIFO read or an unbounded one.
 */
export function readRegularFile(
  file: string,
  maxBytes: number,
  opts: { noFollow?: boolean; singleLink?: boolean } = {},
): ReadResult {
  let fd: number;
  // O_NOFOLLOW: a packer that walked with lstat must not read through a symlink swapped in since.
  const flags =
    fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | (opts.noFollow ? fs.constants.O_NOFOLLOW : 0);
  try {
    fd = fs.openSync(file, flags);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, code: "missing", error: "no such file" };
    if (code === "EISDIR") return { ok: false, code: "not_file", error: "is a directory" };
    if (code === "ELOOP") return { ok: false, code: "not_file", error: "is a symlink" };
    return { ok: false, code: "io", error: `cannot open: ${code ?? String(e)}` };
  }
  try {
    const st = fs.fstatSync(fd);
    if (st.isDirectory()) return { ok: false, code: "not_file", error: "is a directory" };
    if (!st.isFile()) return { ok: false, code: "not_file", error: "is not a regular file" };
    if (opts.singleLink && st.nlink > 1)
      return { ok: false, code: "not_file", error: hardLinkError(st.nlink) };
    if (st.size > maxBytes) {
      return { ok: false, code: "too_large", error: `is ${st.size} bytes; the limit is ${maxBytes} bytes` };
    }
    // Read up to one byte past the limit: a file that grew after fstat is still caught.
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let got = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
      if (got === buf.length) break;
    }
    if (got > maxBytes)
      return { ok: false, code: "too_large", error: `is over the limit of ${maxBytes} bytes` };
    return { ok: true, data: buf.subarray(0, got) };
  } catch (e) {
    return { ok: false, code: "io", error: `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A hard link is a second name for a file that may live anywhere on the same filesystem, so
 * realpath containment cannot see it leave the skill: skill reads and
 * `skills pack` refuse files with more than one link.
 */
export function hardLinkError(nlink: number): string {
  return `has ${nlink} hard links; refused (a hard link can name a file outside the skill; copy the file instead)`;
}

/** realpath that answers with undefined instead of throwing (missing, loop, permission). */
export function realpathOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

/** Hidden entries (dotfiles, dot-directories) are never part of a skill's published surface. */
export function isHidden(name: string): boolean {
  return name.startsWith(".");
}

/**
 * Regular, non-hidden files below `dir` as sorted `/`-separated relative paths.
 * Symlinks are not followed (a listing must not wander out of the skill), and the walk
 * is bounded so a huge tree answers quickly with `truncated` set.
 */
export function listSkillFiles(
  dir: string,
  maxEntries: number,
  maxDepth: number,
): { files: string[]; truncated: boolean } {
  const files: string[] = [];
  let truncated = false;
  const walk = (abs: string, rel: string, depth: number): void => {
    if (truncated) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (isHidden(e.name)) continue;
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isFile()) {
        if (files.length >= maxEntries) {
          truncated = true;
          return;
        }
        files.push(childRel);
      } else if (e.isDirectory() && depth < maxDepth) {
        walk(path.join(abs, e.name), childRel, depth + 1);
      }
    }
  };
  walk(dir, "", 0);
  return { files, truncated };
}
