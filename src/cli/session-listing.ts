/**
 * The one listing of sessions (docs/sessions.md "Listing sessions"), for `scoot sessions list` and
 * the REPL's `/sessions`, and the numbers `/resume <n>` takes: the sessions started in this
 * directory (its project root) by default, or of every project (`--all`, with a project column),
 * newest first, at most `--limit` of them; a header and aligned columns: number, id, modified (as a
 * relative time), messages, first goal.
 */
import { listSessions, type SessionSummary } from "../store/session.js";
import { projectRoot, readSessionMeta } from "../store/session-meta.js";
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
 * The sessions to list. Only the sidecars needed are opened: with `all`, those of the rows
 * shown; otherwise newest first until the limit is reached (and one more, to know there is more).
 */
export function selectSessions(
  sessionsDir: string,
  opts: { cwd: string; all: boolean; limit: number },
): SessionListing {
  const { sessions, warnings, metaIds } = listSessions(sessionsDir);
  const skipped: string[] = [];
  // Older sessions have no sidecar, and the directory listing already said so.
  const projectOf = (id: string) =>
    metaIds.has(id) ? readSessionMeta(sessionsDir, id, skipped)?.project_root : undefined;
  const root = projectRoot(opts.cwd);
  const rows: ListedSession[] = [];
  let more = false;
  for (const s of sessions) {
    const project = opts.all ? undefined : projectOf(s.id);
    if (!opts.all && project !== root) continue;
    if (rows.length >= opts.limit) {
      more = true;
      break;
    }
    rows.push({ ...s, number: rows.length + 1, project: opts.all ? projectOf(s.id) : project });
  }
  return { rows, all: opts.all, root, more, limit: opts.limit, warnings: [...warnings, ...skipped] };
}

/** The first goal on one line. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim() || "-";
}

function padEnd(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - textWidth(text)));
}

function padStart(text: string, width: number): string {
  return " ".repeat(Math.max(0, width - textWidth(text))) + text;
}

/** `text` cut to `width` columns from the left, starting with `…` when cut (a path keeps its end). */
function cutLeft(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  const chars = [...text];
  let kept = "";
  while (chars.length > 0 && textWidth(`…${chars.at(-1)}${kept}`) <= width) kept = chars.pop() + kept;
  return `…${kept}`;
}

interface Column {
  head: string;
  cells: string[];
  right?: boolean;
}

function columnWidth(c: Column): number {
  return Math.max(textWidth(c.head), ...c.cells.map(textWidth));
}

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
function table(columns: Column[]): string {
  const widths = columns.map(columnWidth);
  const line = (cell: (c: Column) => string) =>
    columns
      .map((c, i) => {
        const text = cell(c);
        if (i === columns.length - 1) return text;
        return c.right ? padStart(text, widths[i]!) : padEnd(text, widths[i]!);
      })
      .join("  ")
      .trimEnd();
  const rows = columns[0]?.cells.map((_, r) => line((c) => c.cells[r]!)) ?? [];
  return `${[line((c) => c.head), ...rows].join("\n")}\n`;
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
    const short = MIN_GOAL_COLUMNS - room();
    if (short <= 0) return;
    const target = Math.max(MIN_PROJECT_COLUMNS, columnWidth(project) - short);
    project.cells = paths.map((p) => cutLeft(p, target));
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
    },
    { head: "id", cells: rows.map((s) => s.id) },
    { head: "modified", cells: rows.map((s) => relativeTime(s.modified, opts.now)) },
    { head: "msgs", cells: rows.map((s) => String(s.messages)), right: true },
    ...(listing.all ? [{ head: "project", cells: rows.map((s) => s.project ?? "-") }] : []),
  ];
  let goalWidth = FIRST_GOAL_CHARS;
  if (opts.width !== undefined) {
    columns = fitColumns(columns, opts.width);
    const room = opts.width - columns.reduce((sum, c) => sum + columnWidth(c) + 2, 0);
    goalWidth = Math.min(FIRST_GOAL_CHARS, Math.max(MIN_CUT_GOAL_COLUMNS, room));
  }
  const goal = { head: "first goal", cells: rows.map((s) => cutToWidth(oneLine(s.firstUser), goalWidth)) };
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
