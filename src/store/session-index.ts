/**
 * The listing index of `state/sessions/` (docs/sessions.md "Sessions and audit", *The listing index*):
 * what `sessions list` shows of each transcript (message count, first user message, the
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

export const SESSION_INDEX_NAME = "list-index.json";
/** The first line of an index; any other first line is a foreign or older index: rebuilt. */
const HEADER = "scoot-sessions-list-index 1";
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
 * Replaces the index with `lines`, in order: each a new line, or where a line of `index` that
 * still holds starts. A failure (a read-only or full disk) leaves the old index or none: the
 * listing it came from is already complete, and the next one reads again.
 */
export function saveSessionIndex(
  sessionsDir: string,
  index: SessionIndex,
  lines: readonly (string | number)[],
): void {
  const parts = [HEADER];
  for (const l of lines) parts.push(typeof l === "string" ? l : lineAt(index, l));
  const text = `${parts.join("\n")}\n`;
  if (Buffer.byteLength(text) > SESSION_INDEX_MAX_BYTES) return;
  const target = indexPath(sessionsDir);
  const temp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    // "wx": a name already taken (or a planted symlink) is never written through.
    fs.writeFileSync(temp, text, { mode: 0o600, flag: "wx" });
    fs.renameSync(temp, target);
  } catch {
    fs.rmSync(temp, { force: true });
  }
}
