/**
 * The listing index of `state/sessions/` (docs/sessions.md "Sessions and audit", *The listing index*):
 * what `sessions list` shows of each transcript (message count, first goal, the warnings its
 * lines gave) and the project its sidecar names, remembered beside the stamps of the files it
 * was read from, so a listing reads again only the files that changed since the last one.
 *
 * The index is a cache and never the truth: an entry is used only when every file it was read
 * from still has the exact size, mtime, ctime, inode and device it was read at; a file modified
 * too recently for its mtime to tell a later write apart is not remembered at all. An index
 * that is missing, torn, foreign, too large or a symlink is ignored and rebuilt; an entry that
 * no longer holds is dropped. It is written whole to a fresh temporary file and renamed into
 * place, so a reader never sees half of one and two listings at once leave one whole index
 * (the last).
 *
 * The entries are one JSON array, one entry a line, each parsed only when its file is looked
 * up; a file's stat is compared with the numbers of its entry's stamps, with no text built for it.
 */
import fs from "node:fs";
import path from "node:path";
import { removeStaleTemps } from "../core/stale-temps.js";

export const SESSION_INDEX_NAME = "list-index.json";
/** The first line of an index; any other first line is a foreign or older index: rebuilt. */
const HEADER = "scoot-sessions-list-index 3";
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
/**
 * File names the index remembers (what Scoot itself names transcripts and their sidecars):
 * `<id>.jsonl` entries hold a transcript's summary, `<id>.meta.json` entries its project.
 */
const INDEXABLE_NAME = /^[A-Za-z0-9._-]{1,128}\.(?:jsonl|meta\.json)$/;

/** What a stamp takes of a file's stat. */
export type StampedStat = Pick<fs.Stats, "size" | "mtimeMs" | "ctimeMs" | "ino" | "dev">;

/**
 * The files an entry was read from as they were when read, in reading order: for each, the
 * part number (0 for a live file or a sidecar), size, mtime, ctime, inode and device, one after
 * another. An entry is used only when every number is the same.
 */
export type Stamps = number[];
/** Numbers a stamp holds of each file. */
export const STAMP_NUMBERS = 6;

/** Adds one file's stamp to `stamps`. */
export function addStamp(stamps: Stamps, part: number, st: StampedStat): Stamps {
  stamps.push(part, st.size, st.mtimeMs, st.ctimeMs, st.ino, st.dev);
  return stamps;
}

/** The latest mtime or ctime among the stamped files (ms): how recently they changed. */
function changedAt(stamps: Stamps): number {
  let changed = 0;
  for (let i = 0; i < stamps.length; i += STAMP_NUMBERS)
    changed = Math.max(changed, stamps[i + 2]!, stamps[i + 3]!);
  return changed;
}

function sameStamps(held: unknown, stamps: Stamps): boolean {
  if (!Array.isArray(held) || held.length !== stamps.length) return false;
  for (let i = 0; i < stamps.length; i++) if (held[i] !== stamps[i]) return false;
  return true;
}

/** What `sessions list` shows of one transcript, and the warnings its lines gave. */
export interface IndexEntry {
  messages: number;
  firstUser: string;
  warnings: string[];
}

/** A transcript's entry as the index holds it. */
export function transcriptValue(entry: IndexEntry): unknown[] {
  return [entry.messages, entry.firstUser, entry.warnings];
}

/** The transcript entry a remembered value holds, if it is one. */
export function asTranscriptEntry(v: unknown[]): IndexEntry | undefined {
  if (v.length !== 3) return undefined;
  const [messages, firstUser, warnings] = v;
  if (typeof messages !== "number" || !Number.isSafeInteger(messages) || messages < 0) return undefined;
  if (typeof firstUser !== "string" || !Array.isArray(warnings)) return undefined;
  for (const w of warnings) if (typeof w !== "string") return undefined;
  return { messages, firstUser, warnings: warnings as string[] };
}

/** Whether a transcript's entry is small enough to remember (one pasted document is not). */
export function rememberable(entry: IndexEntry): boolean {
  return entry.firstUser.length <= INDEX_MAX_FIRST_USER_CHARS && entry.warnings.length <= INDEX_MAX_WARNINGS;
}

/** The project a sidecar names as the index holds it (null: a sidecar that names none). */
export function asProjectEntry(v: unknown[]): { project: string | undefined } | undefined {
  if (v.length !== 1 || (v[0] !== null && typeof v[0] !== "string")) return undefined;
  return { project: v[0] ?? undefined };
}

export function indexPath(sessionsDir: string): string {
  return path.join(sessionsDir, SESSION_INDEX_NAME);
}

/**
 * The index text as read, from its first entry line on; empty when there is no usable index.
 * It is kept as text, one entry a line, and a line is parsed only when its file is looked up:
 * thousands of parsed entries held for a whole listing made every young-generation collection
 * copy them, more than their parsing cost.
 */
export function loadSessionIndex(sessionsDir: string): string {
  let text: string;
  let fd: number | undefined;
  try {
    // No-follow and non-blocking: a symlink or FIFO planted under the index's name is not read.
    fd = fs.openSync(
      indexPath(sessionsDir),
      fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW,
    );
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > SESSION_INDEX_MAX_BYTES) return "";
    text = fs.readFileSync(fd, "utf8");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  // A foreign header, or an index cut short (by a writer that did not rename, or a copy): not
  // trusted at all. The entries follow the header and an opening bracket, one a line.
  if (!text.startsWith(OPENING) || !text.endsWith(CLOSING)) return "";
  return text.slice(OPENING.length, -CLOSING.length + 1);
}

/** How an index begins (its header, then the array of entries opened on a line of its own). */
const OPENING = `${HEADER}\n[\n`;
/** How an index ends: the array closed on a line of its own. */
const CLOSING = "\n]\n";

/**
 * Entry lines looked at past the cursor before the index is searched: a listing of this
 * directory's sessions reads the sidecar entries of other projects' sessions and skips their
 * transcripts' entries, one apart; a few more cover files not remembered in between.
 */
const LOOKAHEAD_LINES = 8;
/**
 * Searches of the whole index (for a file not near the cursor: a new transcript, one never
 * remembered, an index in another order) before a table of every line is built instead.
 */
const SEARCHES_BEFORE_TABLE = 16;
const COMMA = 44;

/** How the line of file `name` begins, after the comma that separates it from the line before. */
function lineKey(name: string): string {
  return `[${JSON.stringify(name)},`;
}

/**
 * Bytes of index lines gathered before one write to the temporary file. Small on purpose:
 * measured on a first listing of 5,000 transcripts, gathering 64 KiB at a time kept the peak
 * RSS 9 MB higher than gathering 4 KiB (the held lines pushed the heap's young generation to
 * grow), for ~150 more write calls in all.
 */
const WRITE_CHUNK_BYTES = 4 * 1024;

/**
 * The index of one listing: what it remembers, what the listing read anew, and the next index
 * written when the listing is done. The index is written in listing order (newest first, each
 * transcript's sidecar before it) and read in nearly the same order, so the line wanted is
 * nearly always at the cursor or a few after it. A listing looks up only the files of what it
 * shows (and the sidecars it needs to choose them); every other line of the loaded index is
 * carried over as it was, still to be checked when a listing uses it, unless its file is gone.
 */
export class ListingIndex {
  /** The entry lines, each ending with a newline (the first has no leading comma, the others one). */
  private readonly text: string;
  /** How many entry lines the text holds. */
  private readonly lines: number;
  /** Where the line after the last one found starts. */
  private cursor = 0;
  private searches = 0;
  private byName: Map<string, number> | undefined;
  /** Files read anew, and their new entries. */
  private readonly updates = new Map<string, unknown[]>();

  constructor(
    private readonly sessionsDir: string,
    /** The listing's clock, for the racy window. */
    private readonly now: number,
  ) {
    this.text = loadSessionIndex(sessionsDir);
    let lines = 0;
    for (let at = this.text.indexOf("\n"); at !== -1; at = this.text.indexOf("\n", at + 1)) lines += 1;
    this.lines = lines;
  }

  /** Whether the line starting at `at` is the line of the file whose key is `key`. */
  private isLine(at: number, key: string): boolean {
    const { text } = this;
    return text.startsWith(key, text.charCodeAt(at) === COMMA ? at + 1 : at);
  }

  /** Where the line starts whose entry opens at `open` (after the line's comma), if one does. */
  private lineStart(open: number): number | undefined {
    const { text } = this;
    if (open === 0 || text.charCodeAt(open - 1) === 10) return open;
    const comma = open - 1;
    if (text.charCodeAt(comma) === COMMA && (comma === 0 || text.charCodeAt(comma - 1) === 10)) return comma;
    return undefined;
  }

  /** Where the line of file `name` starts in the loaded index, if it has one. */
  private find(name: string): number | undefined {
    const { text } = this;
    if (text === "") return undefined;
    if (this.byName !== undefined) return this.byName.get(name);
    const key = lineKey(name);
    let at = this.cursor;
    for (let n = 0; n <= LOOKAHEAD_LINES && at < text.length; n++) {
      const end = text.indexOf("\n", at);
      if (this.isLine(at, key)) {
        this.cursor = end + 1;
        return at;
      }
      at = end + 1;
    }
    if (this.searches < SEARCHES_BEFORE_TABLE) {
      this.searches += 1;
      for (let found = text.indexOf(key); found !== -1; found = text.indexOf(key, found + 1)) {
        const start = this.lineStart(found);
        if (start === undefined) continue; // the same text inside a value is no line
        this.cursor = text.indexOf("\n", found) + 1;
        return start;
      }
      return undefined;
    }
    this.byName = new Map();
    for (let at = 0; at < text.length; at = text.indexOf("\n", at) + 1) {
      const open = text.charCodeAt(at) === COMMA ? at + 1 : at;
      // Names Scoot remembers need no escapes: the name ends at the next quote.
      if (!text.startsWith('["', open)) continue;
      const close = text.indexOf('"', open + 2);
      if (close === -1) break;
      const n = text.slice(open + 2, close);
      if (!this.byName.has(n)) this.byName.set(n, at);
    }
    return this.byName.get(name);
  }

  /** The entry of the line starting at `at`, parsed; undefined when it is not an entry. */
  private entryAt(at: number): unknown[] | undefined {
    const { text } = this;
    try {
      const v = JSON.parse(
        text.slice(text.charCodeAt(at) === COMMA ? at + 1 : at, text.indexOf("\n", at)),
      ) as unknown;
      return Array.isArray(v) && v.length === 3 && Array.isArray(v[1]) && Array.isArray(v[2]) ? v : undefined;
    } catch {
      return undefined;
    }
  }

  /** The value remembered for file `name` when it is still exactly as read (these stamps). */
  recall(name: string, stamps: Stamps): unknown[] | undefined {
    const at = this.find(name);
    if (at === undefined) return undefined;
    const entry = this.entryAt(at);
    // An entry that no longer holds stays until what is read anew replaces it: one changed too
    // recently to remember (a session in use) does not make every listing rewrite the index.
    if (entry === undefined || entry[0] !== name || !sameStamps(entry[1], stamps)) return undefined;
    return entry[2] as unknown[];
  }

  /**
   * What was read anew of file `name`: remembered unless it cannot be (a name Scoot does not
   * make, or files changed within the racy window before the listing began).
   */
  remember(name: string, stamps: Stamps, value: unknown[]): void {
    if (INDEXABLE_NAME.test(name) && this.now - changedAt(stamps) >= INDEX_RACY_WINDOW_MS)
      this.updates.set(name, [name, stamps, value]);
  }

  /**
   * Puts the next index in place when it differs from the loaded one. `names` are the `count`
   * files of the directory that may have an entry, in listing order: a loaded line of any other
   * file is dropped. A failure (a read-only or full disk, a name already taken) leaves the old
   * index or none, since the listing it came from is already complete and the next one reads
   * again.
   */
  finish(names: Iterable<string>, count: number): void {
    const { text } = this;
    // Nothing read anew, and no more lines than files that may have one: nothing to write
    // without a walk. A line of a removed file left here (others took its place) is still
    // checked before use, and dropped by the next write.
    if (this.updates.size === 0 && this.lines <= count) return;
    this.cursor = 0;
    // Each entry of the next index: a new one, or a loaded line's start.
    const next: (unknown[] | number)[] = [];
    let kept = 0;
    let added = 0;
    for (const name of names) {
      const update = this.updates.get(name);
      if (update !== undefined) {
        next.push(update);
        added += 1;
        continue;
      }
      const at = this.find(name);
      // A damaged line is not carried over.
      if (at === undefined || this.entryAt(at) === undefined) continue;
      next.push(at);
      kept += 1;
    }
    if (added === 0 && kept === this.lines) return;
    new IndexFile(this.sessionsDir).write(
      next.map((e) => {
        if (typeof e !== "number") return JSON.stringify(e);
        return text.slice(text.charCodeAt(e) === COMMA ? e + 1 : e, text.indexOf("\n", e));
      }),
    );
  }
}

/**
 * Removes the temporary indexes of listings that died before renaming theirs (a killed
 * `sessions list`), given the names in the sessions directory. One whose process still runs
 * is being written and is left alone.
 */
export function removeStaleIndexTemps(sessionsDir: string, names: readonly string[]): void {
  // The index's own temps (`list-index.json.<pid>.<random>.tmp`) and any other dead writer's;
  // every temporary name Scoot makes has `.tmp` in it, so only those are looked at.
  const temps = names.filter((n) => n.includes(".tmp"));
  if (temps.length > 0) removeStaleTemps(sessionsDir, temps);
}

/**
 * One write of the index: the entries go to a fresh temporary file a chunk at a time, one a
 * line, rather than being joined whole first, and the file is renamed into place when every
 * entry is written.
 */
class IndexFile {
  private fd: number | undefined;
  private pending: string[] = [];
  private pendingBytes = 0;
  private written = 0;
  private failed = false;

  constructor(private readonly sessionsDir: string) {}

  /** Writes the entries, each already JSON on one line. */
  write(entries: readonly string[]): void {
    const target = indexPath(this.sessionsDir);
    const temp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      // "wx": a name already taken (or a planted symlink) is never written through.
      this.fd = fs.openSync(temp, "wx", 0o600);
    } catch {
      return;
    }
    try {
      this.put(`${HEADER}\n[`);
      // JSON.stringify escapes newlines inside strings: each entry stays on its line.
      for (let i = 0; i < entries.length; i++) this.put(`${i === 0 ? "" : ","}${entries[i]}`);
      this.put("]");
      this.flush();
      const fd = this.fd;
      this.fd = undefined;
      fs.closeSync(fd);
      if (this.failed) throw new Error("not written whole");
      fs.renameSync(temp, target);
    } catch {
      if (this.fd !== undefined) fs.closeSync(this.fd);
      fs.rmSync(temp, { force: true });
    }
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
