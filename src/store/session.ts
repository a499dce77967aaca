/**
 * Session transcripts: `state/sessions/<id>.jsonl`, one `{"role","content"}` message per
 * line, appended as it happens. At the size cap the live file is retired as the next part,
 * `<id>.jsonl.1`, `.2`, … (oldest first), before the append; up to SESSION_MAX_PARTS parts are
 * kept and readers (`session show`, `recall`, `sessions list`) read every part, then the live
 * file. Beyond the count the oldest part is removed and readers say so (docs/sessions.md "Sessions and audit").
 *
 * A live run holds `<id>.jsonl.lock` (the audit lock's owner-token protocol, core/lock.ts)
 * for as long as the session is open: a second process on the same id is refused rather
 * than interleaving, and rotation happens only under that lock.
 */
import fs from "node:fs";
import path from "node:path";
import { type HeldLock, tryLock } from "../core/lock.js";
import { onProcessEnd } from "../core/process-end.js";
import { redact } from "../core/redact.js";
import { openStoreFileSync } from "../core/safe-open.js";
import type { Result } from "../core/types.js";
import { fileSize, needsLeadingNewline, numberedSiblings } from "./jsonl.js";
import { type JsonlItem, jsonlItem, readJsonl, readJsonlSync, scanLinesSync } from "./lines.js";
import {
  addStamp,
  asTranscriptEntry,
  type IndexEntry,
  ListingIndex,
  rememberable,
  removeStaleIndexTemps,
  type Stamps,
  transcriptValue,
} from "./session-index.js";

export const SESSION_MAX_BYTES = 8 * 1024 * 1024;
/** Retired parts kept per session: 64 × 8 MiB of one conversation before the oldest goes. */
export const SESSION_MAX_PARTS = 64;
export const SESSION_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

export type Role = "system" | "user" | "assistant";
/** How a call ended, as a field (docs/sessions.md "Sessions and audit"): readers never parse the observation's words. */
export type Outcome = "ran" | "refused" | "denied" | "failed" | "interrupted";
export const OUTCOMES: readonly Outcome[] = ["ran", "refused", "denied", "failed", "interrupted"];

export interface CallOutcome {
  outcome: Outcome;
  /** The `[[tools.rules]]` entry that refused it (`tools.rules[N]`). */
  rule?: string;
  /** A command's exit status. */
  exit_code?: number;
}

export interface Message {
  role: Role;
  content: string;
  /**
   * On a goal's line in the transcript, when the run added to the person's words (a plan run's
   * plan, an answer schema's instruction): the words the person gave. Shown wherever a goal is
   * listed or replayed; never sent to the model (prompt.ts appendTurn keeps role and content only).
   */
  goal?: string;
  /**
   * On an observation's line in the transcript: how its call ended. Never part of the history
   * sent to the model (prompt.ts appendTurn keeps role and content only).
   */
  outcome?: CallOutcome;
}

export function validateSessionId(id: string): Result<string> {
  if (!SESSION_ID_PATTERN.test(id) || id === "." || id === "..") {
    return {
      ok: false,
      error: `invalid session id "${id}": use 1-128 characters from A-Z a-z 0-9 . _ - (and not "." or "..")`,
    };
  }
  return { ok: true, value: id };
}

export function newSessionId(kind: "cli" | "repl"): string {
  return `${kind}-${Date.now()}-${process.pid}`;
}

export function jobSessionId(jobId: string): string {
  return `job-${jobId}`;
}

export function sessionPath(sessionsDir: string, id: string): string {
  return path.join(sessionsDir, `${id}.jsonl`);
}

export interface SessionWriter {
  id: string;
  path: string;
  append(message: Message): void;
}

/** Retired part numbers of a transcript on disk, ascending (`<id>.jsonl.<n>`). */
export function transcriptParts(file: string): number[] {
  return numberedSiblings(file);
}

/** Every file of a transcript in reading order: retired parts oldest first, then the live file. */
export function transcriptFiles(file: string): string[] {
  return [...transcriptParts(file).map((n) => `${file}.${n}`), file];
}

/** Claims of this process, by lock file: a process may reopen a session it already holds. */
const claims = new Map<string, { lock: HeldLock; count: number }>();

export interface SessionClaim {
  release(): void;
}

/**
 * Claims session `id` for a live run: refused (with a message naming the holder) when
 * another live process holds it. A claim left by a dead process is taken over. `--resume`
 * calls this before it reads a transcript to continue.
 */
export function claimSession(
  sessionsDir: string,
  id: string,
  /** What the refused caller can do instead (a run: another `--session-id`; undo: `/undo` in that REPL). */
  advice = "wait for it to finish or choose another --session-id",
): Result<SessionClaim> {
  const lockFile = `${sessionPath(sessionsDir, id)}.lock`;
  releaseClaimsAtExit();
  const mine = claims.get(lockFile);
  let entry = mine;
  if (!entry) {
    const r = tryLock(lockFile);
    if (!("release" in r)) {
      return {
        ok: false,
        error: `session "${id}" is in use by a live run${r.holder ? ` (pid ${r.holder})` : ""}; ${advice} (if no Scoot process holds it, remove ${lockFile})`,
      };
    }
    entry = { lock: r, count: 0 };
    claims.set(lockFile, entry);
  }
  entry.count += 1;
  let released = false;
  const held = entry;
  return {
    ok: true,
    value: {
      release() {
        if (released) return;
        released = true;
        held.count -= 1;
        if (held.count === 0) {
          claims.delete(lockFile);
          held.lock.release();
        }
      },
    },
  };
}

let claimExitHook = false;
function releaseClaimsAtExit(): void {
  if (claimExitHook) return;
  claimExitHook = true;
  onProcessEnd(() => {
    for (const c of claims.values()) c.lock.release();
    claims.clear();
  });
}

export function openSession(
  sessionsDir: string,
  id: string,
  maxBytes = SESSION_MAX_BYTES,
  maxParts = SESSION_MAX_PARTS,
): SessionWriter {
  const file = sessionPath(sessionsDir, id);
  let checkedTail = false;
  const rotate = () => {
    const parts = transcriptParts(file);
    // link() never overwrites: a number in use (another writer's) is skipped, not clobbered.
    let n = (parts[parts.length - 1] ?? 0) + 1;
    for (;;) {
      try {
        fs.linkSync(file, `${file}.${n}`);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        n += 1;
      }
    }
    fs.unlinkSync(file);
    const kept = transcriptParts(file);
    while (kept.length > maxParts) fs.rmSync(`${file}.${kept.shift()!}`, { force: true });
  };
  return {
    id,
    path: file,
    append(message: Message): void {
      const line = `${JSON.stringify({
        role: message.role,
        content: redact(message.content),
        ...(message.goal !== undefined ? { goal: redact(message.goal) } : {}),
        ...(message.outcome ? { outcome: message.outcome } : {}),
      })}\n`;
      const bytes = Buffer.byteLength(line);
      const size = fileSize(file);
      if (size > 0 && size + bytes > maxBytes) {
        rotate();
        checkedTail = true;
      }
      if (!checkedTail) {
        checkedTail = true;
        // A rotation that died between link and unlink: the live name is already a part.
        if (size > 0 && fs.statSync(file).nlink > 1) {
          fs.unlinkSync(file);
          fs.appendFileSync(file, line, { mode: 0o600 });
          return;
        }
        if (needsLeadingNewline(file)) {
          fs.appendFileSync(file, `\n${line}`, { mode: 0o600 });
          return;
        }
      }
      fs.appendFileSync(file, line, { mode: 0o600 });
    },
  };
}

function isMessage(v: unknown): v is Message {
  const m = v as Message;
  return (
    typeof m === "object" &&
    m !== null &&
    (m.role === "system" || m.role === "user" || m.role === "assistant") &&
    typeof m.content === "string" &&
    (m.goal === undefined || typeof m.goal === "string") &&
    (m.outcome === undefined || isOutcome(m.outcome))
  );
}

/** A user line as the person is shown it: their own goal where one is recorded, else the line's text. */
export function shownText(m: Message): string {
  return m.goal ?? m.content;
}

/**
 * How the user lines the agent writes begin, none of them the person's goal (docs/sessions.md
 * "What the model is told"): a call's observation, the loop's correction of an invalid step,
 * a compaction's summary, and Scoot's notes. The agent writes them (src/agent/prompt.ts,
 * compact.ts, history.ts); test/store/person-goals.test.ts holds each writer to this list.
 */
const NOT_A_GOAL = [
  "Observation from ",
  "Your last reply was not a valid step",
  "[Compacted history]",
  "[scoot: ",
] as const;
/** The untrusted-data marker an observation's body opens with. */
const OBSERVATION_MARK = "<<<UNTRUSTED_OBSERVATION";
/** Where a note Scoot added to the person's words begins (a plan's feedback, an older plan run's plan). */
const ADDED_NOTE = `\n\n${NOT_A_GOAL[3]}`;

/** True for a user line that holds the person's goal: not an observation, correction, summary or note. */
export function isPersonGoal(m: Message): boolean {
  if (m.role !== "user") return false;
  if (m.goal !== undefined) return true;
  const text = m.content;
  return !NOT_A_GOAL.some((p) => text.startsWith(p)) && !text.includes(OBSERVATION_MARK);
}

/** A goal's line as the person gave it: `shownText` without a note Scoot added after their words. */
export function goalText(m: Message): string {
  const text = shownText(m);
  const note = text.indexOf(ADDED_NOTE);
  return note < 0 ? text : text.slice(0, note);
}

function isOutcome(v: unknown): v is CallOutcome {
  const o = v as CallOutcome;
  return (
    typeof o === "object" &&
    o !== null &&
    OUTCOMES.includes(o.outcome) &&
    (o.rule === undefined || typeof o.rule === "string") &&
    (o.exit_code === undefined || Number.isInteger(o.exit_code))
  );
}

/** Reads a transcript line by line, every retired part first. Bad lines are skipped with warnings. */
export function readSession(file: string): { messages: Message[]; warnings: string[] } {
  const messages: Message[] = [];
  const warnings: string[] = [];
  const parts = transcriptParts(file);
  if (parts.length > 0 && parts[0]! > 1)
    warnings.push(
      `${file}: parts 1..${parts[0]! - 1} were removed (more than ${SESSION_MAX_PARTS} parts); the transcript starts at part ${parts[0]}`,
    );
  for (const f of transcriptFiles(file)) {
    for (const item of readJsonlSync(f, isMessage)) {
      if (item.warning !== undefined) warnings.push(item.warning);
      else messages.push(item.record);
    }
  }
  return { messages, warnings };
}

/** readSession as it reads: each message or warning as soon as its line is read. */
export async function* streamSession(file: string): AsyncGenerator<JsonlItem<Message>> {
  for (const f of transcriptFiles(file)) yield* readJsonl(f, isMessage);
}

/** The sidecar session-meta.ts writes beside a transcript: `<id>.meta.json`. */
export const SESSION_META_SUFFIX = ".meta.json";

export interface SessionSummary {
  id: string;
  modified: number;
  messages: number;
  /** The session's first goal as the person gave it (`goalText`); empty when it has none. */
  firstUser: string;
}

const ROLE_PREFIXES = ["system", "user", "assistant"].map((r) => Buffer.from(`{"role":"${r}","content":"`));

function startsWith(data: Buffer, start: number, end: number, prefix: Buffer): boolean {
  if (end - start < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[start + i] !== prefix[i]) return false;
  return true;
}

/**
 * True when `data[start, end)` is a message exactly as openSession writes it:
 * `{"role":…,"content":"…"}` with the content string closed (an unescaped quote before the
 * final brace). Such a line is counted without being decoded or parsed; any other line goes
 * through the full parser, which names it in a warning if it is bad.
 */
function isWriterRecord(data: Buffer, start: number, end: number): boolean {
  return writerRole(data, start, end) !== -1;
}

/** The index in ROLE_PREFIXES of a writer record's role; -1 for any other line. */
function writerRole(data: Buffer, start: number, end: number): number {
  const e = contentEnd(data, start, end) + 2;
  if (e - start < 2 || data[e - 1] !== 0x7d || data[e - 2] !== 0x22) return -1;
  let backslashes = 0;
  for (let i = e - 3; i >= start && data[i] === 0x5c; i--) backslashes += 1;
  if (backslashes % 2 !== 0) return -1;
  for (let r = 0; r < ROLE_PREFIXES.length; r++) {
    const p = ROLE_PREFIXES[r]!;
    if (e - 2 - start >= p.length && startsWith(data, start, e, p)) return r;
  }
  return -1;
}

/** Where a writer record's content string ends (its closing quote), "\r\n" line ends allowed. */
function contentEnd(data: Buffer, start: number, end: number): number {
  return (end > start && data[end - 1] === 13 ? end - 1 : end) - 2;
}

/** ROLE_PREFIXES' index of "user". */
const USER_ROLE = 1;

/**
 * True when `data[from, to)` is the body of a JSON string: no raw quote or control
 * character, and only the escapes JSON has. A writer record with such a body is exactly a
 * line JSON.parse reads as a message, so it can be counted without building the string.
 */
function isJsonStringBody(data: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = data[i]!;
    if (b === 0x22 || b < 0x20) return false;
    if (b !== 0x5c) continue;
    const x = data[++i];
    if (i >= to) return false;
    if (x === 0x75) {
      if (i + 4 >= to) return false;
      for (let k = 1; k <= 4; k++) if (!isHexDigit(data[i + k]!)) return false;
      i += 4;
    } else if (
      !(
        x === 0x22 ||
        x === 0x5c ||
        x === 0x2f ||
        x === 0x62 ||
        x === 0x66 ||
        x === 0x6e ||
        x === 0x72 ||
        x === 0x74
      )
    )
      return false;
  }
  return true;
}

function isHexDigit(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
}

/**
 * The first goal and the message count of one transcript, read line by line: user lines are
 * parsed until one is the person's goal (`isPersonGoal`); the other lines before it (the system
 * prompt) are checked as bytes, which tells a valid one from a bad one as the parser would, and
 * later ones are only counted (`sessions list` reads what it prints and keeps nothing of the file). `parts` are
 * the files to read, the rotated part first.
 */
function summariseTranscript(parts: string[], warnings: string[]): { messages: number; firstUser: string } {
  let messages = 0;
  let firstUser: string | undefined;
  for (const f of parts) {
    scanLinesSync(f, (data, start, end, number, bytes, unterminated) => {
      if (firstUser !== undefined && data !== undefined && isWriterRecord(data, start, end)) {
        messages += 1;
        return true;
      }
      if (firstUser === undefined && data !== undefined) {
        const role = writerRole(data, start, end);
        if (
          role !== -1 &&
          role !== USER_ROLE &&
          isJsonStringBody(data, start + ROLE_PREFIXES[role]!.length, contentEnd(data, start, end))
        ) {
          messages += 1;
          return true;
        }
      }
      const text = data?.toString("utf8", start, end);
      const item = jsonlItem({ number, text, bytes, unterminated }, f, isMessage);
      if (item === undefined) return true;
      if (item.warning !== undefined) {
        warnings.push(item.warning);
        return true;
      }
      messages += 1;
      if (firstUser === undefined && isPersonGoal(item.record)) firstUser = goalText(item.record);
      return true;
    });
  }
  return { messages, firstUser: firstUser ?? "" };
}

/** One transcript a scan found: when it was last modified; what it holds is read on demand. */
export interface FoundSession {
  id: string;
  /** Its file name in the sessions directory (`<id>.jsonl`). */
  name: string;
  modified: number;
  /** Where its stat waits in the scan's typed array. */
  slot: number;
}

/** How many numbers of a live file's stat a scan keeps for its stamp. */
const STAMPED = 5;

/**
 * The transcripts of a sessions directory, newest first by modification time, found by one
 * readdir and one lstat each before any file is opened, so a caller that shows only the newest
 * (or stops at the first of its project) reads only those. What a transcript holds (`summary`)
 * and what its sidecar names (session-meta.ts `sessionProject`) come from the listing index
 * (session-index.ts) when their files are unchanged since they were read, else from the files;
 * `finish` writes the index back when what it should hold changed.
 */
export class SessionScan {
  /** Newest first; ties by id. */
  readonly sessions: FoundSession[] = [];
  /** Files skipped, each with why, then the warnings of the transcripts summarised, in order. */
  readonly warnings: string[] = [];
  /** Sessions whose `<id>.meta.json` was in the directory: the others need no open to learn they have none. */
  readonly metaIds = new Set<string>();
  readonly index: ListingIndex;
  /** Retired part numbers by transcript name, found in the directory listing (a readdir per session would cost more). */
  private readonly retired = new Map<string, number[]>();
  /**
   * What the index stamps of each live file, in one typed array (STAMPED numbers a file) until
   * the file's turn: thousands of Stats or stamp objects alive across the sort made the
   * listing's heap grow by more than everything it prints.
   */
  private readonly stamped: Float64Array;
  private readonly prefix: string;

  constructor(
    readonly dir: string,
    /** The listing's clock, for the index's racy window only (tests list "later" with it). */
    now = Date.now(),
  ) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      names = [];
    }
    removeStaleIndexTemps(dir, names);
    this.prefix = path.join(dir, "x").slice(0, -1);
    this.stamped = new Float64Array(names.length * STAMPED);
    for (const name of names) {
      if (name.endsWith(".jsonl")) this.found(name);
      else if (name.endsWith(SESSION_META_SUFFIX))
        this.metaIds.add(name.slice(0, -SESSION_META_SUFFIX.length));
      else this.part(name);
    }
    this.sessions.sort((a, b) => b.modified - a.modified || a.id.localeCompare(b.id));
    this.index = new ListingIndex(dir, now);
  }

  /** The path of `name` in the directory (joined once per listing, not once per file). */
  path(name: string): string {
    return `${this.prefix}${name}`;
  }

  private found(name: string): void {
    // A planted symlink or FIFO is skipped with a warning, never followed.
    const st = fs.lstatSync(this.path(name), { throwIfNoEntry: false });
    if (st === undefined) return; // removed since readdir
    if (!st.isFile()) {
      this.warnings.push(
        `skipped ${name}: ${st.isSymbolicLink() ? "a symlink" : st.isFIFO() ? "a FIFO" : "not a regular file"}; Scoot does not follow it`,
      );
      return;
    }
    const slot = this.sessions.length * STAMPED;
    const { stamped } = this;
    stamped[slot] = st.size;
    stamped[slot + 1] = st.mtimeMs;
    stamped[slot + 2] = st.ctimeMs;
    stamped[slot + 3] = st.ino;
    stamped[slot + 4] = st.dev;
    this.sessions.push({ id: name.slice(0, -".jsonl".length), name, modified: st.mtimeMs, slot });
  }

  /** A retired part (`<id>.jsonl.<n>`), remembered with its transcript. */
  private part(name: string): void {
    const dot = name.lastIndexOf(".");
    const base = name.slice(0, dot);
    if (!base.endsWith(".jsonl") || !/^\d+$/.test(name.slice(dot + 1))) return;
    const list = this.retired.get(base);
    if (list === undefined) this.retired.set(base, [Number(name.slice(dot + 1))]);
    else list.push(Number(name.slice(dot + 1)));
  }

  /**
   * What the transcript holds (message count, first goal; its lines' warnings join `warnings`),
   * or undefined when it cannot be read (said in `warnings`).
   */
  summary(s: FoundSession): SessionSummary | undefined {
    const file = this.path(s.name);
    try {
      const stamps = this.stamps(s, file);
      const remembered = this.index.recall(s.name, stamps);
      let entry: IndexEntry | undefined =
        remembered === undefined ? undefined : asTranscriptEntry(remembered);
      if (entry === undefined) {
        const warnings: string[] = [];
        const parts = [...this.partNumbers(s).map((n) => `${file}.${n}`), file];
        const { messages, firstUser } = summariseTranscript(parts, warnings);
        entry = { messages, firstUser, warnings };
        if (rememberable(entry)) this.index.remember(s.name, stamps, transcriptValue(entry));
      }
      for (const w of entry.warnings) this.warnings.push(w);
      return { id: s.id, modified: s.modified, messages: entry.messages, firstUser: entry.firstUser };
    } catch (e) {
      this.warnings.push(`skipped ${s.name}: ${(e as Error).message}`);
      return undefined;
    }
  }

  private partNumbers(s: FoundSession): number[] {
    return (this.retired.get(s.name) ?? []).sort((a, b) => a - b);
  }

  /**
   * The stamps of a transcript's files: retired parts (one removed since readdir is left out),
   * then the live file, as the scan found it.
   */
  private stamps(s: FoundSession, file: string): Stamps {
    const stamps: Stamps = [];
    if (this.retired.has(s.name))
      for (const n of this.partNumbers(s)) {
        const st = fs.lstatSync(`${file}.${n}`, { throwIfNoEntry: false });
        if (st !== undefined) addStamp(stamps, n, st); // else removed since readdir
      }
    const k = s.slot;
    const { stamped } = this;
    stamps.push(0, stamped[k]!, stamped[k + 1]!, stamped[k + 2]!, stamped[k + 3]!, stamped[k + 4]!);
    return stamps;
  }

  /**
   * Whether the transcript's live file opens as a store file (a caller about to read it whole
   * asks this rather than for its summary, which could read it twice).
   */
  readable(s: FoundSession): boolean {
    try {
      const fd = openStoreFileSync(this.path(s.name));
      if (fd === undefined) return false;
      fs.closeSync(fd);
      return true;
    } catch {
      return false;
    }
  }

  /** Writes the listing index back when what it should hold changed. */
  finish(): void {
    this.index.finish(this.indexNames(), this.sessions.length + this.metaIds.size);
  }

  /** The files the index may hold lines of, in listing order: each sidecar before its transcript. */
  private *indexNames(): Generator<string> {
    for (const s of this.sessions) {
      if (this.metaIds.has(s.id)) yield `${s.id}${SESSION_META_SUFFIX}`;
      yield s.name;
    }
  }
}

/** Scans the sessions directory (SessionScan); nothing is opened until asked for. */
export function scanSessions(sessionsDir: string, now = Date.now()): SessionScan {
  return new SessionScan(sessionsDir, now);
}

/**
 * Every transcript, newest first by modification time, with what it holds; `.1` rotated parts
 * are read with their live file. A transcript whose files are unchanged since the last listing
 * is taken from the listing index (session-index.ts) without being opened; the index is
 * rewritten only when what it should hold changed.
 */
export function listSessions(
  sessionsDir: string,
  /** The listing's clock, for the index's racy window only (tests list "later" with it). */
  now = Date.now(),
): {
  sessions: SessionSummary[];
  warnings: string[];
  /** Sessions whose `<id>.meta.json` was in the directory: the others need no open to learn they have none. */
  metaIds: ReadonlySet<string>;
} {
  const scan = scanSessions(sessionsDir, now);
  const sessions: SessionSummary[] = [];
  for (const s of scan.sessions) {
    const summary = scan.summary(s);
    if (summary !== undefined) sessions.push(summary);
  }
  scan.finish();
  return { sessions, warnings: scan.warnings, metaIds: scan.metaIds };
}
