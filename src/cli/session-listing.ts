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

/** How many sessions a listing shows unless `--limit` says otherwise: a screenful. */
export const SESSIONS_LIMIT = 20;
/** The first goal is cut to this many characters: the rest of the row fits 120 columns. */
export const FIRST_GOAL_CHARS = 60;

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

function firstGoal(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  if (one === "") return "-";
  return one.length > FIRST_GOAL_CHARS ? `${one.slice(0, FIRST_GOAL_CHARS - 1)}…` : one;
}

/** Columns padded to their widest cell; numbers to the right; the last column is not padded. */
function table(header: string[], rows: string[][], right: ReadonlySet<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === cells.length - 1 ? c : right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!),
      )
      .join("  ")
      .trimEnd();
  return `${[header, ...rows].map(line).join("\n")}\n`;
}

/** The listing as a table; `active` (the REPL's session) is marked with `*` after its number. */
export function formatListing(listing: SessionListing, opts: { now: number; active?: string }): string {
  // The number right-aligned, the mark after it, so the numbers stay in one column.
  const digits = String(listing.rows.length).length;
  const header = [
    `${"#".padStart(digits)} `,
    "id",
    "modified",
    "msgs",
    ...(listing.all ? ["project"] : []),
    "first goal",
  ];
  const rows = listing.rows.map((s) => [
    `${String(s.number).padStart(digits)}${s.id === opts.active ? "*" : " "}`,
    s.id,
    relativeTime(s.modified, opts.now),
    String(s.messages),
    ...(listing.all ? [s.project ?? "-"] : []),
    firstGoal(s.firstUser),
  ]);
  return table(header, rows, new Set([3]));
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
