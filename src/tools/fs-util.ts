/**
 * Small filesystem helpers shared by the file tools: where a path points, how an fs error
 * reads to the model, and whether bytes look like text.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** How many leading bytes decide "binary" (the same window git and grep use, roughly). */
export const BINARY_SNIFF_BYTES = 8 * 1024;

/**
 * Resolves a tool path against the project root. A leading `~` means the user's home, as in a
 * shell; `$VAR` stays literal (the gate refuses those forms where it matters).
 */
export function resolvePath(cwd: string, p: string): string {
  if (p === "~") return os.homedir();
  if (p.startsWith("~/")) return path.join(os.homedir(), p.slice(2));
  return path.resolve(cwd, p);
}

/** One readable phrase for a Node fs error, e.g. "no such file or directory". */
export function fsErrorText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return "no such file or directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "is a directory";
    case "ENOTDIR":
      return "a parent of the path is not a directory";
    case "EROFS":
      return "read-only file system";
    case "ENOSPC":
      return "no space left on device";
    case "ENAMETOOLONG":
      return "file name too long";
    case "ELOOP":
      return "too many levels of symbolic links";
    case "EEXIST":
      return "already exists";
    default:
      return e instanceof Error ? e.message : String(e);
  }
}

/**
 * True when the bytes look binary: a NUL byte, or a sequence that is not valid UTF-8. A multi-byte
 * character cut off at the end of the sample is fine (the sample is usually a prefix).
 */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.includes(0)) return true;
  try {
    // `stream: true` tolerates an incomplete final sequence; fatal throws on an invalid one.
    new TextDecoder("utf-8", { fatal: true }).decode(sample, { stream: true });
    return false;
  } catch {
    return true;
  }
}

/** Reads up to `n` bytes from the start of an open file. */
export function readPrefix(fd: number, n: number): Buffer {
  const buf = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    const r = fs.readSync(fd, buf, got, n - got, got);
    if (r === 0) break;
    got += r;
  }
  return buf.subarray(0, got);
}

/** `stat` without throwing: the stats, or the error phrase. */
export function statPath(
  abs: string,
): { ok: true; value: fs.Stats } | { ok: false; error: string; code?: string } {
  try {
    return { ok: true, value: fs.statSync(abs) };
  } catch (e) {
    return { ok: false, error: fsErrorText(e), code: (e as NodeJS.ErrnoException).code };
  }
}

/** "1.5 MiB"-style size for messages. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}
