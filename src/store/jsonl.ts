/** Shared helpers for the append-only JSONL stores. */
import fs from "node:fs";
import path from "node:path";
import { openStoreFileSync, readHomeFile } from "../core/safe-open.js";

/**
 * If a previous writer died mid-line, the file does not end in a newline. Starting the
 * next record on a fresh line confines the damage to that one torn line, which readers skip.
 */
export function needsLeadingNewline(file: string): boolean {
  let fd: number | undefined;
  try {
    // Non-blocking and no-follow: a FIFO or symlink in the store's place is not read.
    fd = openStoreFileSync(file);
    if (fd === undefined) return false;
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

/**
 * The text of a store file, or undefined when it does not exist. A symlink, FIFO or other
 * non-regular file throws with a clear message instead of being followed or blocking.
 */
export function readTextIfExists(file: string): string | undefined {
  const r = readHomeFile(file, { noFollow: true });
  if (r.ok) return r.text;
  if (r.missing) return undefined;
  throw new Error(r.error);
}

/** Bytes read per step when lastLineOf walks back from the end. */
const BACKWARD_CHUNK_BYTES = 64 * 1024;

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
    const len = Math.min(BACKWARD_CHUNK_BYTES, pos);
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

/**
 * The numbers N of the siblings `<file>.N` on disk, ascending: the audit log's retired
 * generations and a transcript's retired parts.
 */
export function numberedSiblings(file: string): number[] {
  const prefix = `${path.basename(file)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(file));
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
    .map((n) => Number(n.slice(prefix.length)))
    .sort((a, b) => a - b);
}
