/**
 * Line-by-line readers for the JSONL stores (audit log, gaps, transcripts), with memory
 * bounded whatever the file size: a file is read in fixed chunks and only one line
 * is held at a time. A line longer than MAX_RECORD_LINE_BYTES is not buffered at all: its bytes
 * are counted and dropped, and the reader reports it so the caller can warn and go on.
 *
 * Both a synchronous and an asynchronous reader are offered: the writers (rotation reads the
 * gaps file under its lock) and the doctor are synchronous; `audit show` and `session show`
 * iterate asynchronously so they print while they read.
 */
import fs from "node:fs";
import { openStoreFile, openStoreFileSync } from "../core/safe-open.js";

/** Bytes read per chunk. */
export const LINE_CHUNK_BYTES = 256 * 1024;
/**
 * The longest line a reader keeps. Records are far smaller (observations are clipped to a few
 * KB, audit messages likewise); a longer line is damage, or a transcript line holding a huge
 * `file_write`, and is skipped with a warning rather than held in memory.
 */
export const MAX_RECORD_LINE_BYTES = 32 * 1024 * 1024;

export interface RawLine {
  /** 1-based line number in the file. */
  number: number;
  /** The line without its newline; undefined when it was longer than the cap (`bytes` says how long). */
  text: string | undefined;
  bytes: number;
  /** True for a last line with no newline after it: a writer may have been interrupted. */
  unterminated: boolean;
}

/** A line as bytes: `data` is only valid until the reader moves on (it may view a reused buffer). */
export interface ByteLine {
  number: number;
  data: Buffer | undefined;
  bytes: number;
  unterminated: boolean;
}

function decoded(line: ByteLine): RawLine {
  return {
    number: line.number,
    text: line.data?.toString("utf8"),
    bytes: line.bytes,
    unterminated: line.unterminated,
  };
}

/**
 * Called once per line: the line is `data[start, end)` without its newline, or `data` is
 * undefined when the line was longer than the cap. `data` may be a reused buffer: copy what
 * must outlive the call. Returning false stops the reading.
 */
export type LineVisitor = (
  data: Buffer | undefined,
  start: number,
  end: number,
  number: number,
  bytes: number,
  unterminated: boolean,
) => boolean | undefined;

/** Splits chunks into lines; holds at most one partial line, and none beyond the cap. */
class LineSplitter {
  private pieces: Buffer[] = [];
  private held = 0; // bytes of the partial line (counted even while discarding)
  private discarding = false;
  private number = 0;

  constructor(private readonly maxLine: number) {}

  /** Visits the complete lines in `chunk`; false when the visitor stopped. */
  push(chunk: Buffer, visit: LineVisitor): boolean {
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      if (this.complete(chunk, from, nl, false, visit) === false) return false;
      from = nl + 1;
    }
    this.hold(chunk, from, chunk.length);
    return true;
  }

  /** Visits the last line, if the file did not end with a newline. */
  end(visit: LineVisitor): void {
    if (this.held > 0) this.complete(Buffer.alloc(0), 0, 0, true, visit);
  }

  private hold(chunk: Buffer, from: number, to: number): void {
    if (to <= from) return;
    this.held += to - from;
    if (this.held > this.maxLine) {
      this.discarding = true;
      this.pieces = [];
      return;
    }
    if (!this.discarding) this.pieces.push(Buffer.from(chunk.subarray(from, to)));
  }

  private complete(
    chunk: Buffer,
    from: number,
    to: number,
    unterminated: boolean,
    visit: LineVisitor,
  ): boolean | undefined {
    this.number += 1;
    const bytes = this.held + (to - from);
    const over = this.discarding || bytes > this.maxLine;
    const spanning = !over && this.pieces.length > 0;
    if (spanning) this.pieces.push(chunk.subarray(from, to));
    const data = over ? undefined : spanning ? Buffer.concat(this.pieces) : chunk;
    // Most lines fit in their chunk: no new array per line (thousands of transcripts listed).
    if (this.pieces.length > 0) this.pieces = [];
    this.held = 0;
    this.discarding = false;
    return spanning
      ? visit(data, 0, bytes, this.number, bytes, unterminated)
      : visit(data, from, to, this.number, bytes, unterminated);
  }
}

/**
 * Visits every line of `file` in bounded memory, allocating nothing per line that fits in
 * one chunk (`sessions list` over thousands of transcripts). Returns false when the
 * file does not exist.
 */
export function scanLinesSync(file: string, visit: LineVisitor, maxLine = MAX_RECORD_LINE_BYTES): boolean {
  const fd = openStoreFileSync(file);
  if (fd === undefined) return false;
  // One buffer serves every scan (this is synchronous): listing thousands of transcripts then
  // allocates nothing per file. A visitor that scans another file meanwhile gets its own.
  const shared = !scanBufferBusy;
  const buf = shared ? scanBuffer : Buffer.allocUnsafe(LINE_CHUNK_BYTES);
  scanBufferBusy = true;
  try {
    const split = new LineSplitter(maxLine);
    for (;;) {
      const got = fs.readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      if (!split.push(buf.subarray(0, got), visit)) return true;
    }
    split.end(visit);
    return true;
  } finally {
    if (shared) scanBufferBusy = false;
    fs.closeSync(fd);
  }
}

const scanBuffer = Buffer.allocUnsafe(LINE_CHUNK_BYTES);
let scanBufferBusy = false;

/** Collects the lines of one chunk as ByteLines (for the generator readers). */
function collector(into: ByteLine[]): LineVisitor {
  return (data, start, end, number, bytes, unterminated) => {
    into.push({ number, data: data?.subarray(start, end), bytes, unterminated });
    return true;
  };
}

/**
 * The read buffer for a file of `size` bytes: small files (most transcripts) get a small one,
 * so listing thousands of them does not churn through a full chunk each. A file that grows
 * while read is still read whole, in more reads.
 */
function chunkFor(size: number): number {
  return Math.max(4096, Math.min(LINE_CHUNK_BYTES, size + 1));
}

/** Reads `file` line by line. Returns nothing when the file does not exist. */
export function* readLinesSync(file: string, maxLine = MAX_RECORD_LINE_BYTES): Generator<RawLine> {
  for (const line of readByteLinesSync(file, maxLine)) yield decoded(line);
}

/** Reads `file` line by line as bytes, for callers that can skip decoding. */
export function* readByteLinesSync(
  file: string,
  maxLine = MAX_RECORD_LINE_BYTES,
  openFd?: number,
): Generator<ByteLine> {
  // `openFd`: a descriptor the caller opened earlier and keeps (audit verify pins the live file
  // before its walk); it is read from its current offset and not closed here.
  const fd = openFd ?? openStoreFileSync(file);
  if (fd === undefined) return;
  try {
    const buf = Buffer.allocUnsafe(chunkFor(fs.fstatSync(fd).size));
    const split = new LineSplitter(maxLine);
    const lines: ByteLine[] = [];
    const visit = collector(lines);
    for (;;) {
      const got = fs.readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      split.push(buf.subarray(0, got), visit);
      yield* lines.splice(0);
    }
    split.end(visit);
    yield* lines.splice(0);
  } finally {
    if (openFd === undefined) fs.closeSync(fd);
  }
}

/**
 * Reads `file` line by line without blocking the event loop. Returns nothing when it does not
 * exist. A line for which `skip(bytes)` is true is passed over without being decoded.
 */
export async function* readLines(
  file: string,
  maxLine = MAX_RECORD_LINE_BYTES,
  skip?: (line: Buffer) => boolean,
): AsyncGenerator<RawLine> {
  const fh = await openStoreFile(file);
  if (fh === undefined) return;
  try {
    const buf = Buffer.allocUnsafe(chunkFor((await fh.stat()).size));
    const split = new LineSplitter(maxLine);
    const lines: ByteLine[] = [];
    const visit = collector(lines);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      split.push(buf.subarray(0, bytesRead), visit);
      for (const line of lines.splice(0)) if (!(skip && line.data && skip(line.data))) yield decoded(line);
    }
    split.end(visit);
    for (const line of lines.splice(0)) if (!(skip && line.data && skip(line.data))) yield decoded(line);
  } finally {
    await fh.close();
  }
}

/** One JSONL line's outcome: a record, a warning (the line was skipped), or nothing (blank). */
export type JsonlItem<T> = { record: T; warning?: undefined } | { record?: undefined; warning: string };

/**
 * Turns a raw line into a record or a warning naming file and line, as parseJsonl does for
 * whole texts: a torn, unparsable, foreign or over-long line is skipped, never fatal.
 */
export function jsonlItem<T>(
  line: RawLine,
  file: string,
  accept: (v: unknown) => v is T,
): JsonlItem<T> | undefined {
  const where = `${file}:${line.number}`;
  if (line.text === undefined) {
    return {
      warning: `${where}: skipped a line of ${line.bytes} bytes, longer than the ${MAX_RECORD_LINE_BYTES / (1024 * 1024)} MiB a record may have`,
    };
  }
  if (line.text.trim() === "") return undefined;
  try {
    const v = JSON.parse(line.text) as unknown;
    if (accept(v)) return { record: v };
    return { warning: `${where}: skipped a line that is not a valid record` };
  } catch {
    return {
      warning: line.unterminated
        ? `${where}: skipped a torn last line (a writer was interrupted)`
        : `${where}: skipped a line that is not valid JSON`,
    };
  }
}

/** Every record of a JSONL file, read line by line; bad lines become warnings. */
export function* readJsonlSync<T>(file: string, accept: (v: unknown) => v is T): Generator<JsonlItem<T>> {
  for (const line of readLinesSync(file)) {
    const item = jsonlItem(line, file, accept);
    if (item) yield item;
  }
}

/** The asynchronous twin of readJsonlSync; lines `skip` picks are passed over unparsed. */
export async function* readJsonl<T>(
  file: string,
  accept: (v: unknown) => v is T,
  skip?: (line: Buffer) => boolean,
): AsyncGenerator<JsonlItem<T>> {
  for await (const line of readLines(file, MAX_RECORD_LINE_BYTES, skip)) {
    const item = jsonlItem(line, file, accept);
    if (item) yield item;
  }
}

/** True when a line's first and last non-blank bytes are `{` and `}`: it looks like a whole JSON object. */
export function looksLikeObject(line: Buffer): boolean {
  let a = 0;
  let b = line.length - 1;
  while (a <= b && (line[a] === 0x20 || line[a] === 0x09 || line[a] === 0x0d)) a++;
  while (b >= a && (line[b] === 0x20 || line[b] === 0x09 || line[b] === 0x0d)) b--;
  return a < b && line[a] === 0x7b && line[b] === 0x7d;
}

/**
 * Reads `file` line by line as bytes from byte `start` on (the audit exporter resumes at its
 * cursor without reading what it already shipped). Line numbers count from `start`; `start`
 * must be the first byte of a line. `openFd`: a descriptor the caller holds (read with explicit
 * positions, not closed here). Returns nothing when the file does not exist.
 */
export function* readByteLinesFromSync(
  file: string,
  start: number,
  maxLine = MAX_RECORD_LINE_BYTES,
  openFd?: number,
): Generator<ByteLine> {
  const fd = openFd ?? openStoreFileSync(file);
  if (fd === undefined) return;
  try {
    const buf = Buffer.allocUnsafe(chunkFor(Math.max(0, fs.fstatSync(fd).size - start)));
    const split = new LineSplitter(maxLine);
    const lines: ByteLine[] = [];
    const visit = collector(lines);
    for (let pos = start; ; ) {
      const got = fs.readSync(fd, buf, 0, buf.length, pos);
      if (got === 0) break;
      pos += got;
      split.push(buf.subarray(0, got), visit);
      yield* lines.splice(0);
    }
    split.end(visit);
    yield* lines.splice(0);
  } finally {
    if (openFd === undefined) fs.closeSync(fd);
  }
}
