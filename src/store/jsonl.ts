/** Shared helpers for the append-only JSONL stores. */
import fs from "node:fs";

/**
 * If a previous writer died mid-line, the file does not end in a newline. Starting the
 * next record on a fresh line confines the damage to that one torn line, which readers skip.
 */
export function needsLeadingNewline(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, "r");
    const size = fs.fstatSync(fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    fs.readSync(fd, last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

export interface ParsedLines<T> {
  records: T[];
  /** One message per skipped line, naming file and line number. */
  warnings: string[];
}

/** Parses JSONL text; a torn or unparsable line is skipped with a warning, never fatal. */
export function parseJsonl<T>(text: string, file: string, accept: (v: unknown) => v is T): ParsedLines<T> {
  const records: T[] = [];
  const warnings: string[] = [];
  const lines = text.split("\n");
  const endsClean = text.endsWith("\n") || text.length === 0;
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const isLast = i === lines.length - 1 && !endsClean;
    try {
      const v = JSON.parse(line) as unknown;
      if (accept(v)) {
        records.push(v);
        return;
      }
      warnings.push(`${file}:${i + 1}: skipped a line that is not a valid record`);
    } catch {
      warnings.push(
        isLast
          ? `${file}:${i + 1}: skipped a torn last line (a writer was interrupted)`
          : `${file}:${i + 1}: skipped a line that is not valid JSON`,
      );
    }
  });
  return { records, warnings };
}

export function readTextIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** Bytes read per chunk by the streaming readers: memory stays bounded by this plus one line. */
export const READ_CHUNK_BYTES = 64 * 1024;

export interface RawLine {
  /** The line's bytes without its newline. */
  bytes: Buffer;
  /** 1-based. */
  lineNo: number;
  /** True for the file's last line when the file does not end in a newline (a torn write). */
  unterminated: boolean;
}

/**
 * Streams a file's lines (split on "\n", the final empty piece after a trailing newline
 * dropped) with bounded memory: a chunk at a time, never the whole file. Yields nothing for a
 * missing file.
 */
export function* readLinesSync(file: string, openFd?: number): Generator<RawLine> {
  let fd: number;
  if (openFd !== undefined) fd = openFd;
  else {
    try {
      fd = fs.openSync(file, "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
      throw e;
    }
  }
  try {
    const chunk = Buffer.alloc(READ_CHUNK_BYTES);
    let pending: Buffer[] = [];
    let lineNo = 0;
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl === -1 || nl >= n) break;
        pending.push(Buffer.from(chunk.subarray(start, nl)));
        lineNo += 1;
        yield { bytes: Buffer.concat(pending), lineNo, unterminated: false };
        pending = [];
        start = nl + 1;
      }
      if (start < n) pending.push(Buffer.from(chunk.subarray(start, n)));
    }
    if (pending.length > 0) {
      lineNo += 1;
      yield { bytes: Buffer.concat(pending), lineNo, unterminated: true };
    }
  } finally {
    if (openFd === undefined) fs.closeSync(fd);
  }
}

/**
 * The last line of an open file (the fragment itself when the file does not end in a newline),
 * read backwards a chunk at a time. undefined for an empty file.
 */
export function lastLineOf(fd: number, size: number): { bytes: Buffer; unterminated: boolean } | undefined {
  if (size === 0) return undefined;
  const one = Buffer.alloc(1);
  fs.readSync(fd, one, 0, 1, size - 1);
  const unterminated = one[0] !== 0x0a;
  const end = unterminated ? size : size - 1;
  const parts: Buffer[] = [];
  let pos = end;
  while (pos > 0) {
    const len = Math.min(READ_CHUNK_BYTES, pos);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, pos - len);
    const nl = buf.lastIndexOf(0x0a);
    if (nl !== -1) {
      parts.unshift(buf.subarray(nl + 1));
      return { bytes: Buffer.concat(parts), unterminated };
    }
    parts.unshift(buf);
    pos -= len;
  }
  return { bytes: Buffer.concat(parts), unterminated };
}
