/**
 * Opening files in the Scoot home without trusting them (docs/safety.md "Hostile
 * inputs"). The home is written by Scoot, but anything may have been put there: a FIFO (a
 * blocking open or read hangs the command), a symlink to `/dev/zero` (an endless read), a
 * symlink from `logs/audit.jsonl` to a file elsewhere (appends written through it), a
 * dangling link in `state/sessions/`. Every read here:
 *
 * - opens with O_NONBLOCK, so a FIFO never blocks, and checks the *opened* descriptor: only
 *   a regular file is read (no check-then-open race on the type);
 * - refuses a final-component symlink with O_NOFOLLOW where asked (logs and stores; the
 *   configuration may be a symlink, as dotfile managers make it, but must end at a regular
 *   file);
 * - reads at most `maxBytes` (one byte more is tried, so a file growing during the read is
 *   caught too).
 */
import fs from "node:fs";

/** `config.toml` / `config.json` larger than this are refused. */
export const CONFIG_MAX_BYTES = 1024 * 1024;

export type SafeRead = { ok: true; text: string } | { ok: false; missing: boolean; error: string };

function kindOf(st: fs.Stats): string {
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isSocket()) return "a socket";
  if (st.isDirectory()) return "a directory";
  if (st.isSymbolicLink()) return "a symlink";
  return "not a regular file";
}

export function readHomeFile(file: string, opts: { maxBytes?: number; noFollow: boolean }): SafeRead {
  const flags =
    fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | (opts.noFollow ? fs.constants.O_NOFOLLOW : 0);
  let fd: number;
  try {
    fd = fs.openSync(file, flags);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      // A dangling symlink is not "missing": say what it is.
      try {
        if (fs.lstatSync(file).isSymbolicLink()) {
          return { ok: false, missing: false, error: `${file} is a symlink to nothing; remove it` };
        }
      } catch {
        // really missing
      }
      return { ok: false, missing: true, error: `${file} does not exist` };
    }
    if (code === "ELOOP") {
      return {
        ok: false,
        missing: false,
        error: `${file} is a symlink; Scoot does not follow it here (remove it)`,
      };
    }
    return { ok: false, missing: false, error: `cannot open ${file}: ${(e as Error).message}` };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) {
      return { ok: false, missing: false, error: `${file} is ${kindOf(st)}, not a regular file; refused` };
    }
    const max = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    if (st.size > max) {
      return { ok: false, missing: false, error: `${file} is ${st.size} bytes; the limit is ${max} bytes` };
    }
    const limit = Number.isFinite(max) ? max + 1 : st.size + 1;
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // Sized by what the stat said is left (one byte more, to see the end), not by the limit:
      // reading thousands of small files (session sidecars) then allocates a few bytes each,
      // not the limit each. A file that grows meanwhile is still read whole, in more reads.
      const left = st.size + 1 - total;
      const buf = Buffer.alloc(Math.min(Math.max(limit - total, 1), left > 0 ? left : 4096, 1024 * 1024));
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (Number.isFinite(max) && total > max) {
        return { ok: false, missing: false, error: `${file} is over the limit of ${max} bytes` };
      }
    }
    return { ok: true, text: Buffer.concat(chunks, total).toString("utf8") };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Why `file` must not be appended to, or undefined. A missing file is fine (it is created);
 * a symlink or anything but a regular file is refused, so the logs and stores never write
 * through a link planted in the home.
 */
export function appendTargetProblem(file: string): string | undefined {
  let st: fs.Stats | undefined;
  try {
    // Checked before every append: a missing file (the gap record, mostly) is no exception.
    st = fs.lstatSync(file, { throwIfNoEntry: false });
  } catch (e) {
    return `cannot inspect ${file}: ${(e as Error).message}`;
  }
  if (st === undefined) return undefined;
  if (st.isSymbolicLink()) return `${file} is a symlink; Scoot does not write through it (remove it)`;
  if (!st.isFile()) return `${file} is ${kindOf(st)}, not a regular file; refused`;
  return undefined;
}

/** Flags for every store read: never block on a FIFO, never follow a final-component symlink. */
const STORE_READ_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW;

/** The error for a store file that is there but may not be read, or undefined when it may. */
function storeOpenProblem(file: string, e: unknown): Error {
  if ((e as NodeJS.ErrnoException).code === "ELOOP") {
    return new Error(`${file} is a symlink; Scoot does not follow it here (remove it)`);
  }
  return e as Error;
}

function notRegular(file: string, st: fs.Stats): Error | undefined {
  return st.isFile() ? undefined : new Error(`${file} is ${kindOf(st)}, not a regular file; refused`);
}

/**
 * Opens a store file (audit log, gaps, transcript) for a line reader: a descriptor of a
 * regular file, undefined when the file does not exist, and a clear error for a symlink,
 * FIFO, device or directory planted in its place.
 */
export function openStoreFileSync(file: string): number | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, STORE_READ_FLAGS);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw storeOpenProblem(file, e);
  }
  const problem = notRegular(file, fs.fstatSync(fd));
  if (problem) {
    fs.closeSync(fd);
    throw problem;
  }
  return fd;
}

/** openStoreFileSync for the asynchronous readers. */
export async function openStoreFile(file: string): Promise<fs.promises.FileHandle | undefined> {
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, STORE_READ_FLAGS);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw storeOpenProblem(file, e);
  }
  const problem = notRegular(file, await fh.stat());
  if (problem) {
    await fh.close();
    throw problem;
  }
  return fh;
}
