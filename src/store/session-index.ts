/**
 * The listing index of `state/sessions/` (docs/sessions.md "Sessions and audit", *The listing index*):
 * what `sessions list` shows of each transcript (message count, first goal, the
 * warnings its lines gave), remembered beside the stamps of the files it was read from, so a
 * listing reads again only the transcripts that changed since the last one.
 *
 * The index is a cache and never the truth: an entry is used only when every file of the
 * transcript still has the exact size, mtime, ctime, inode and device it was read at; a file
 * modified too recently for its mtime to tell a later write apart is not remembered at all.
 * An index that is missing, torn, foreign, too large or a symlink is ignored and rebuilt. It
 * is written whole to a fresh temporary file and renamed into place, so a reader never sees
 * half of one and two listings at once leave one whole index (the last).
 */
import fs from "node:fs";
import path from "node:path";
import { removeStaleTemps } from "../core/stale-temps.js";

export const SESSION_INDEX_NAME = "list-index.json";
/** The first line of an index; any other first line is a foreign or older index: rebuilt. */
const HEADER = "scoot-sessions-list-index 2";
/** An index larger than this is not read (and a larger one is not written): it is rebuilt. */
export const SESSION_INDEX_MAX_BYTES = 32 * 1024 * 1024;
/**
 * A first user message longer than this is not remembered: its transcript is read at each
 * listing, so one pasted document cannot make the index (read whole at every listing) large.
 */
export const INDEX_MAX_FIRST_USER_CHARS = 4096;
/** Warnings remembered per transcript; a transcript with more is read at each listing. */
const INDEX_MAX_WARNINGS = 16;
/**
 * A file changed this recently is read, not remembered: a write in the same mtime tick as
 * the listing's read could otherwise leave an entry whose stamp still matches (git's "racily
 * clean" entries). Two seconds also covers filesystems with 2-second mtimes.
 */
export const INDEX_RACY_WINDOW_MS = 2000;
/** Transcript names the index can hold on one line (what Scoot itself names transcripts). */
const INDEXABLE_NAME = /^[A-Za-z0-9._-]{1,128}\.jsonl$/;

/**
 * The files of one transcript as they were when read, in reading order: for each, the part
 * number (0 for the live file), size, mtime, ctime, inode and device; compared as text, so an
 * entry is used only when every number is the same.
 */
export interface TranscriptStamps {
  text: string;
  /** The latest mtime or ctime among the files (ms): how recently the transcript changed. */
  changed: number;
}

/** What a stamp takes of a file's stat. */
export type StampedStat = Pick<fs.Stats, "size" | "mtimeMs" | "ctimeMs" | "ino" | "dev">;

export function stampFiles(files: readonly { part: number; st: StampedStat }[]): TranscriptStamps {
  let text = "";
  let changed = 0;
  for (const { part, st } of files) {
    text += `${text === "" ? "" : ","}${part}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}:${st.dev}`;
    changed = Math.max(changed, st.mtimeMs, st.ctimeMs);
  }
  return { text, changed };
}

/** What `sessions list` shows of one transcript, and the warnings its lines gave. */
export interface IndexEntry {
  messages: number;
  firstUser: string;
  warnings: string[];
}

/**
 * The index as read: its text, and a cursor. The index is written in listing order (newest
 * first) and read in the same order, so the next transcript's line is nearly always the one
 * at the cursor: found without building a table or a string per line (a listing of thousands
 * then allocates little beyond what it prints). Only when the order changed is a table of
 * every line's start built, once. Lines are decoded only when their stamps match, so a
 * damaged line costs only its own transcript a read.
 */
export interface SessionIndex {
  text: string;
  /** Where the line after the last one found at the cursor starts. */
  cursor: number;
  /** How many entry lines the index holds (deleted transcripts leave it smaller next time). */
  lines: number;
  byName?: Map<string, number>;
}

export function indexPath(sessionsDir: string): string {
  return path.join(sessionsDir, SESSION_INDEX_NAME);
}

/** The remembered lines; empty when there is no usable index. */
export function loadSessionIndex(sessionsDir: string): SessionIndex {
  const empty: SessionIndex = { text: "", cursor: 0, lines: 0 };
  let text: string;
  let fd: number | undefined;
  try {
    // No-follow and non-blocking: a symlink or FIFO planted under the index's name is not read.
    fd = fs.openSync(
      indexPath(sessionsDir),
      fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW,
    );
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > SESSION_INDEX_MAX_BYTES) return empty;
    text = fs.readFileSync(fd, "utf8");
  } catch {
    return empty;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  // The last line ends with a newline: an index cut short (by a writer that did not rename,
  // or a copy) is not trusted at all.
  if (!text.startsWith(`${HEADER}\n`) || !text.endsWith("\n")) return empty;
  let lines = 0;
  for (let at = text.indexOf("\n", HEADER.length + 1); at !== -1; at = text.indexOf("\n", at + 1)) lines += 1;
  return { text, cursor: HEADER.length + 1, lines };
}

const TAB = 9;

/** Where the line of transcript `name` starts in the index, if it has one. */
export function findLine(index: SessionIndex, name: string): number | undefined {
  const { text, cursor } = index;
  if (
    cursor < text.length &&
    text.startsWith(name, cursor) &&
    text.charCodeAt(cursor + name.length) === TAB
  ) {
    index.cursor = text.indexOf("\n", cursor) + 1;
    return cursor;
  }
  if (index.byName === undefined) {
    index.byName = new Map();
    for (let at = HEADER.length + 1; at < text.length; at = text.indexOf("\n", at) + 1) {
      const tab = text.indexOf("\t", at);
      if (tab !== -1 && tab < text.indexOf("\n", at)) index.byName.set(text.slice(at, tab), at);
    }
  }
  return index.text === "" ? undefined : index.byName.get(name);
}

/** The whole line starting at `start`, without its newline. */
export function lineAt(index: SessionIndex, start: number): string {
  return index.text.slice(start, index.text.indexOf("\n", start));
}

/** The entry of the line at `start` (transcript `name`) when it was read from files with exactly these stamps. */
export function lookupEntry(
  index: SessionIndex,
  start: number,
  name: string,
  stamps: TranscriptStamps,
): IndexEntry | undefined {
  const { text } = index;
  const at = start + name.length + 1;
  if (!text.startsWith(stamps.text, at) || text.charCodeAt(at + stamps.text.length) !== TAB) return undefined;
  try {
    const from = at + stamps.text.length + 1;
    const v = JSON.parse(text.slice(from, text.indexOf("\n", from))) as unknown;
    return isEntry(v) ? { messages: v[0], firstUser: v[1], warnings: v[2] } : undefined;
  } catch {
    return undefined;
  }
}

function isEntry(v: unknown): v is [number, string, string[]] {
  if (!Array.isArray(v) || v.length !== 3) return false;
  const [messages, firstUser, warnings] = v as unknown[];
  if (!Number.isSafeInteger(messages) || (messages as number) < 0 || typeof firstUser !== "string")
    return false;
  return Array.isArray(warnings) && warnings.every((w) => typeof w === "string");
}

/**
 * The index line for `entry`, or undefined when it is not to be remembered: a name that does
 * not fit on one line, a long first message, many warnings, or files changed within the racy
 * window before `now`.
 */
export function entryLine(
  name: string,
  stamps: TranscriptStamps,
  entry: IndexEntry,
  now: number,
): string | undefined {
  if (!INDEXABLE_NAME.test(name)) return undefined;
  if (entry.firstUser.length > INDEX_MAX_FIRST_USER_CHARS || entry.warnings.length > INDEX_MAX_WARNINGS)
    return undefined;
  if (now - stamps.changed < INDEX_RACY_WINDOW_MS) return undefined;
  // JSON.stringify escapes newlines and tabs inside strings: the entry stays on its line.
  return `${name}\t${stamps.text}\t${JSON.stringify([entry.messages, entry.firstUser, entry.warnings])}`;
}

/**
 * Removes the temporary indexes of listings that died before renaming theirs (a killed
 * `sessions list`), given the names in the sessions directory. One whose process still runs
 * is being written and is left alone.
 */
export function removeStaleIndexTemps(sessionsDir: string, names: readonly string[]): void {
  // The index's own temps (`list-index.json.<pid>.<random>.tmp`) and any other dead writer's.
  removeStaleTemps(sessionsDir, names);
}

/**
 * Bytes of index lines gathered before one write to the temporary file. Small on purpose:
 * measured on a first listing of 5,000 transcripts, gathering 64 KiB at a time kept the peak
 * RSS 9 MB higher than gathering 4 KiB (the held lines pushed the heap's young generation to
 * grow), for ~150 more write calls in all.
 */
const WRITE_CHUNK_BYTES = 4 * 1024;

/**
 * The next index, built in listing order while the listing runs: each line is either a new one
 * or one of the loaded index that still holds. New lines go to a fresh temporary file as they
 * come, a chunk at a time, rather than all waiting in memory for the end: on a first listing of
 * thousands of transcripts every line is new, and holding them all grew the heap's young
 * generation (and the peak RSS) by more than the lines themselves. `finish` renames the file
 * into place; a failure (a read-only or full disk, a name already taken) leaves the old index
 * or none, since the listing it came from is already complete and the next one reads again.
 */
export class SessionIndexWriter {
  /** Old lines kept before the first new line (their starts): written only if a new line comes. */
  private readonly keptStarts: number[] = [];
  private lineCount = 0;
  private changed = false;
  private fd: number | undefined;
  private temp: string | undefined;
  private pending: string[] = [];
  private pendingBytes = 0;
  private written = 0;
  private failed = false;

  constructor(
    private readonly sessionsDir: string,
    private readonly index: SessionIndex,
  ) {}

  /** A line of the loaded index (starting at `start`) that still holds. */
  keep(start: number): void {
    this.lineCount += 1;
    if (this.fd === undefined && !this.changed) this.keptStarts.push(start);
    else this.put(lineAt(this.index, start));
  }

  /** A line read anew. */
  add(line: string): void {
    this.lineCount += 1;
    if (!this.changed) this.begin();
    this.put(line);
  }

  /** Puts the new index in place when it differs from the loaded one. */
  finish(): void {
    if (!this.changed) {
      // Only removals (or nothing): the old lines that still hold, written at once.
      if (this.lineCount === this.index.lines) return;
      this.begin();
    }
    this.flush();
    const { fd, temp } = this;
    if (fd === undefined || temp === undefined) return;
    this.fd = undefined;
    try {
      fs.closeSync(fd);
      if (this.failed) throw new Error("not written whole");
      fs.renameSync(temp, indexPath(this.sessionsDir));
    } catch {
      fs.rmSync(temp, { force: true });
    }
  }

  private begin(): void {
    this.changed = true;
    const target = indexPath(this.sessionsDir);
    this.temp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      // "wx": a name already taken (or a planted symlink) is never written through.
      this.fd = fs.openSync(this.temp, "wx", 0o600);
    } catch {
      this.failed = true;
      this.temp = undefined;
      return;
    }
    this.put(HEADER);
    for (const start of this.keptStarts) this.put(lineAt(this.index, start));
    this.keptStarts.length = 0;
  }

  private put(line: string): void {
    if (this.failed) return;
    this.pending.push(line);
    this.pendingBytes += line.length + 1;
    if (this.pendingBytes >= WRITE_CHUNK_BYTES) this.flush();
  }

  private flush(): void {
    if (this.failed || this.fd === undefined || this.pending.length === 0) return;
    const chunk = `${this.pending.join("\n")}\n`;
    this.pending = [];
    this.pendingBytes = 0;
    this.written += Buffer.byteLength(chunk);
    // An index over the read limit would only be ignored by the next listing: not written.
    if (this.written > SESSION_INDEX_MAX_BYTES) {
      this.failed = true;
      return;
    }
    try {
      fs.writeSync(this.fd, chunk);
    } catch {
      this.failed = true;
    }
  }
}
