/** Shared helpers for the append-only JSONL stores. */
import fs from "node:fs";
import { readHomeFile } from "./safe-open.js";

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

/**
 * The text of a store file, or undefined when it does not exist. A symlink, FIFO or other
 * non-regular file throws with a clear message instead of being followed or blocking
 * (issue 17 item 7).
 */
export function readTextIfExists(file: string): string | undefined {
  const r = readHomeFile(file, { noFollow: true });
  if (r.ok) return r.text;
  if (r.missing) return undefined;
  throw new Error(r.error);
}
