/**
 * The one listing of sessions (docs/sessions.md "Listing sessions"), for `scoot sessions list` and
 * the REPL's `/sessions`, and the numbers `/resume <n>` takes: the sessions started in this
 * directory (its project root) by default, or of every project (`--all`, with a project column),
 * newest first, at most `--limit` of them; a header and aligned columns: number, id, modified (as a
 * relative time), messages, first goal.
 */
import { type SessionSummary, scanSessions } from "../store/session.js";
import { projectRoot, sessionProject } from "../store/session-meta.js";
import { relativeTime } from "./relative-time.js";
import { cutToWidth, textWidth } from "./view/width.js";

/** How many sessions a listing shows unless `--limit` says otherwise: a screenful. */
export const SESSIONS_LIMIT = 20;
/** The first goal is cut to this many characters: the rest of the row fits 120 columns. */
export const FIRST_GOAL_CHARS = 60;
/** On a terminal, other columns give way so that the first goal keeps at least this many. */
const MIN_GOAL_COLUMNS = 24;
/** A project path is shortened to no fewer columns than this before columns are dropped. */
const MIN_PROJECT_COLUMNS = 16;
/** However narrow the terminal, the first goal shows this much of itself. */
const MIN_CUT_GOAL_COLUMNS = 10;

export interface ListedSession extends SessionSummary {
  /** 1-based, newest first: what `/resume <n>` takes. */
  number: number;
  /** The project root the session was started in; undefined when it did not record one. */
  project: string | undefined;
}

export interface SessionListing {
  rows: ListedSession[];
  /** Every project's sessions, or only those of `root`. */
  all: boolean;
  /** This directory's project root. */
  root: string;
  /** More sessions of this selection exist than the limit let through. */
  more: boolean;
  limit: number;
  /** Transcripts and sidecars skipped, each with why. */
  warnings: string[];
}

/**
 * The sessions to list. Only what the rows need is read: the transcripts of the rows shown and,
 * with `all`, their sidecars; otherwise the sidecars newest first until the limit is reached
 * (and one more, to know there is more). Unchanged files come from the listing index.
 */
export function selectSessions(
  sessionsDir: string,
  opts: {
    cwd: string;
    all: boolean;
    limit: number;
    /** The listing's clock, for the listing index's racy window only (tests list "later" with it). */
    now?: number;
  },
): SessionListing {
  const scan = scanSessions(sessionsDir, opts.now);
  const skipped: string[] = [];
  const root = projectRoot(opts.cwd);
  const rows: ListedSession[] = [];
  let more = false;
  for (const s of scan.sessions) {
    if (opts.all && rows.length >= opts.limit) {
      more = true;
      break;
    }
    // The sidecar before the transcript: the order of their lines in the index.
    const project = sessionProject(scan, s.id, skipped);
    if (!opts.all && project !== root) continue;
    if (rows.length >= opts.limit) {
      more = true;
      break;
    }
    const summary = scan.summary(s);
    if (summary === undefined) continue;
    rows.push({ ...summary, number: rows.length + 1, project });
  }
  scan.finish();
  return { rows, all: opts.all, root, more, limit: opts.limit, warnings: [...scan.warnings, ...skipped] };
}

/** Printable ASCII takes one column a character: most cells are measured without walking them. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Columns `text` takes (textWidth). */
function columnsOf(text: string): number {
  return PRINTABLE_ASCII.test(text) ? text.length : textWidth(text);
}

/** `text` cut to `columns` (cutToWidth). */
function cut(text: string, columns: number): string {
  if (!PRINTABLE_ASCII.test(text)) return cutToWidth(text, columns);
  return text.length <= columns ? text : `${text.slice(0, Math.max(0, columns - 1))}…`;
}

/** The first goal on one line. */
function oneLine(text: string): string {
  // Most goals are one line already: only one with a run of spaces, another kind of space, or
  // space at either end is rewritten.
  if (text !== "" && !SPACE_TO_FOLD.test(text)) return text;
  return text.replace(/\s+/g, " ").trim() || "-";
}

/** What `oneLine` changes: whitespace other than one plain space between words. */
const SPACE_TO_FOLD = /[^\S ]| {2}|^ | $/;

/** `text` cut to `width` columns from the left, starting with `…` when cut (a path keeps its end). */
function cutLeft(text: string, width: number): string {
  if (columnsOf(text) <= width) return text;
  const chars = [...text];
  let kept = "";
  while (chars.length > 0 && columnsOf(`…${chars.at(-1)}${kept}`) <= width) kept = chars.pop() + kept;
  return `…${kept}`;
}

interface Column {
  head: string;
  cells: string[];
  right?: boolean;
  /** Every cell is printable ASCII, one column a character (ids, times, counts): measured by length. */
  ascii?: boolean;
  /** The widest cell's columns, once measured (cleared when the cells change). */
  widest?: number;
}

function columnWidth(c: Column): number {
  if (c.widest !== undefined) return c.widest;
  let widest = columnsOf(c.head);
  for (const cell of c.cells) widest = Math.max(widest, c.ascii ? cell.length : columnsOf(cell));
  c.widest = widest;
  return widest;
}

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
function table(columns: Column[]): string {
  const last = columns.length - 1;
  // The last column is not padded: its cells (the first goals, the longest) are not measured.
  const widths = columns.map((c, i) => (i === last ? 0 : columnWidth(c)));
  // Padding of every length a cell can need, made once rather than once a cell.
  const spaces = Array.from({ length: Math.max(0, ...widths) + 1 }, (_, n) => " ".repeat(n));
  const line = (cell: (c: Column) => string) => {
    let text = "";
    for (let i = 0; i < last; i++) {
      const c = columns[i]!;
      const cellText = cell(c);
      const pad = spaces[Math.max(0, widths[i]! - (c.ascii ? cellText.length : columnsOf(cellText)))]!;
      text += c.right ? `${pad}${cellText}  ` : `${cellText}${pad}  `;
    }
    const end = last < 0 ? "" : cell(columns[last]!);
    // A row ends with its last cell's text, never with padding (an empty last cell leaves none).
    return end === "" || /\s$/.test(end) ? (text + end).trimEnd() : text + end;
  };
  let out = `${line((c) => c.head)}\n`;
  const count = columns[0]?.cells.length ?? 0;
  for (let r = 0; r < count; r++) out += `${line((c) => c.cells[r]!)}\n`;
  return out;
}

/**
 * The columns before the first goal, made to leave it at least MIN_GOAL_COLUMNS of `width`
 * (docs/keyboard.md "Lines on a terminal"): the project is shortened from the left first, then
 * the message count, the modified time and the project are dropped, in that order, so a row
 * never wraps. The number and the id always stay: they are what `--resume` and `/resume` take.
 */
function fitColumns(columns: Column[], width: number): Column[] {
  let kept = columns;
  const room = () => width - kept.reduce((sum, c) => sum + columnWidth(c) + 2, 0);
  const project = kept.find((c) => c.head === "project");
  const paths = project?.cells ?? [];
  // The project as long as it can be and still leave the first goal its columns.
  const shorten = () => {
    if (!project) return;
    project.cells = paths;
    project.widest = undefined;
    const short = MIN_GOAL_COLUMNS - room();
    if (short <= 0) return;
    const target = Math.max(MIN_PROJECT_COLUMNS, columnWidth(project) - short);
    project.cells = paths.map((p) => cutLeft(p, target));
    project.widest = undefined;
  };
  shorten();
  for (const head of ["msgs", "modified", "project"]) {
    if (room() >= MIN_GOAL_COLUMNS) break;
    kept = kept.filter((c) => c.head !== head);
    shorten();
  }
  return kept;
}

/**
 * The listing as a table; `active` (the REPL's session) is marked with `*` after its number.
 * With `width` (a terminal's) the rows fit it: the first goal is cut shorter and, when even
 * that is not enough, other columns are shortened or dropped.
 */
export function formatListing(
  listing: SessionListing,
  opts: { now: number; active?: string; width?: number | undefined },
): string {
  // The number right-aligned, the mark after it, so the numbers stay in one column.
  const digits = String(listing.rows.length).length;
  const rows = listing.rows;
  let columns: Column[] = [
    {
      head: `${"#".padStart(digits)} `,
      cells: rows.map((s) => `${String(s.number).padStart(digits)}${s.id === opts.active ? "*" : " "}`),
      ascii: true,
    },
    // Times and counts are printable ASCII, as are the ids Scoot makes (a file copied in may not be).
    { head: "id", cells: rows.map((s) => s.id), ascii: rows.every((s) => PRINTABLE_ASCII.test(s.id)) },
    { head: "modified", cells: rows.map((s) => relativeTime(s.modified, opts.now)), ascii: true },
    { head: "msgs", cells: rows.map((s) => String(s.messages)), right: true, ascii: true },
    ...(listing.all ? [{ head: "project", cells: rows.map((s) => s.project ?? "-") }] : []),
  ];
  let goalWidth = FIRST_GOAL_CHARS;
  if (opts.width !== undefined) {
    columns = fitColumns(columns, opts.width);
    const room = opts.width - columns.reduce((sum, c) => sum + columnWidth(c) + 2, 0);
    goalWidth = Math.min(FIRST_GOAL_CHARS, Math.max(MIN_CUT_GOAL_COLUMNS, room));
  }
  const goal = { head: "first goal", cells: rows.map((s) => cut(oneLine(s.firstUser), goalWidth)) };
  return table([...columns, goal]);
}

/** What a listing says besides its rows: none here, or more than the limit (for stderr). */
export function listingNote(listing: SessionListing): string | undefined {
  const everywhere = listing.all ? "" : " (--all: every project)";
  if (listing.rows.length === 0)
    return listing.all
      ? "no sessions yet"
      : `no sessions started in ${listing.root} yet; scoot sessions list --all shows every project`;
  if (listing.more)
    return `older sessions not shown: scoot sessions list --limit ${listing.limit * 2}${everywhere}`;
  return undefined;
}

/**
 * The session numbered `n` in this directory's listing (the one `/sessions` shows), or why
 * there is none.
 */
export function sessionNumbered(
  sessionsDir: string,
  cwd: string,
  n: number,
): { ok: true; value: string } | { ok: false; error: string } {
  if (n < 1)
    return { ok: false, error: `no session numbered ${n}: the listing counts from 1 (see /sessions)` };
  const listing = selectSessions(sessionsDir, { cwd, all: false, limit: n });
  const row = listing.rows[n - 1];
  if (row) return { ok: true, value: row.id };
  const shown = listing.rows.length;
  return {
    ok: false,
    error:
      shown === 0
        ? `no session numbered ${n}: none was started in ${listing.root} (see /sessions)`
        : `no session numbered ${n}: this directory has ${shown} (see /sessions)`,
  };
}
