/**
 * Session metadata (docs/sessions.md "Resuming a session"): a sidecar `<id>.meta.json` beside the
 * transcript records the project root the session was started in, so `--continue` can find
 * the latest session of this project and `sessions list` can show it. The transcript itself
 * stays one `{"role","content"}` message per line.
 */
import fs from "node:fs";
import path from "node:path";
import { readHomeFile } from "../core/safe-open.js";
import type { Result } from "../core/types.js";
import { SESSION_META_SUFFIX, type SessionScan, scanSessions, sessionPath } from "./session.js";
import { addStamp, asProjectEntry } from "./session-index.js";

/** A sidecar larger than this is not ours: it is skipped. */
export const MAX_META_BYTES = 64 * 1024;

export interface SessionMeta {
  project_root: string;
  created: string;
}

export function metaPath(sessionsDir: string, id: string): string {
  return path.join(sessionsDir, `${id}${SESSION_META_SUFFIX}`);
}

/** The canonical form of a project directory (symlinks resolved) so two spellings match. */
export function projectRoot(cwd: string): string {
  try {
    return fs.realpathSync(cwd);
  } catch {
    return path.resolve(cwd);
  }
}

/** Writes the sidecar when the session has none yet (the first run of a session decides). */
export function recordSessionMeta(sessionsDir: string, id: string, cwd: string): void {
  const file = metaPath(sessionsDir, id);
  if (fs.existsSync(file)) return;
  const meta: SessionMeta = { project_root: projectRoot(cwd), created: new Date().toISOString() };
  try {
    fs.writeFileSync(file, `${JSON.stringify(meta)}\n`, { mode: 0o600, flag: "wx" });
  } catch (e) {
    // Another process wrote it first: theirs stands.
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
}

/**
 * The sidecar, or undefined. A sidecar that is there but is not a regular file of ours (a FIFO,
 * a symlink — to /dev/zero or anywhere else —, a device, too large) is opened without blocking
 * or following and skipped; `skipped` is told which and why, so the caller can say so.
 */
export function readSessionMeta(
  sessionsDir: string,
  id: string,
  skipped?: string[],
): SessionMeta | undefined {
  const file = metaPath(sessionsDir, id);
  const read = readHomeFile(file, { maxBytes: MAX_META_BYTES, noFollow: true });
  if (!read.ok) {
    // The common missing sidecar (older sessions) is not worth a word.
    if (!read.missing) skipped?.push(`skipped ${file}: ${read.error}`);
    return undefined;
  }
  try {
    const v = JSON.parse(read.text) as Partial<SessionMeta>;
    if (typeof v.project_root !== "string") return undefined;
    return { project_root: v.project_root, created: typeof v.created === "string" ? v.created : "" };
  } catch {
    skipped?.push(`skipped ${file}: not valid JSON (remove it; the session keeps working)`);
    return undefined;
  }
}

export function sessionExists(sessionsDir: string, id: string): boolean {
  const file = sessionPath(sessionsDir, id);
  return fs.existsSync(file) || fs.existsSync(`${file}.1`);
}

/**
 * The project root the sidecar of session `id` names, as `readSessionMeta` reads it, for a
 * listing: a session whose directory listing had no sidecar needs no open, and a sidecar
 * unchanged since a listing read it is taken from the listing index (session-index.ts).
 */
export function sessionProject(scan: SessionScan, id: string, skipped?: string[]): string | undefined {
  if (!scan.metaIds.has(id)) return undefined;
  const name = `${id}${SESSION_META_SUFFIX}`;
  const st = fs.lstatSync(scan.path(name), { throwIfNoEntry: false });
  if (st === undefined) return undefined; // removed since readdir
  // Only a regular file is remembered: anything else is opened (and refused) at each listing.
  const stamps = st.isFile() ? addStamp([], 0, st) : undefined;
  if (stamps !== undefined) {
    const remembered = scan.index.recall(name, stamps);
    const entry = remembered === undefined ? undefined : asProjectEntry(remembered);
    if (entry !== undefined) return entry.project;
  }
  const own: string[] = [];
  const project = readSessionMeta(scan.dir, id, own)?.project_root;
  for (const w of own) skipped?.push(w);
  // A sidecar that gave a warning is read (and warns) again at each listing.
  if (stamps !== undefined && own.length === 0) scan.index.remember(name, stamps, [project ?? null]);
  return project;
}

/**
 * The most recently modified session started in this project directory. Scheduled jobs'
 * sessions (`job-*`) are not conversations a person continues, so they are skipped, as is a
 * transcript that cannot be read. When there is none the error says so and ends with
 * `instead`, the caller's own way to name a session (`use --resume <id>`, `name one: scoot
 * undo <session-id>`): each command offers what it takes.
 */
export function latestSessionOfProject(sessionsDir: string, cwd: string, instead: string): Result<string> {
  const root = projectRoot(cwd);
  const scan = scanSessions(sessionsDir);
  const skipped: string[] = [];
  let found: string | undefined;
  for (const s of scan.sessions) {
    if (s.id.startsWith("job-")) continue;
    if (sessionProject(scan, s.id, skipped) === root && scan.readable(s)) {
      found = s.id;
      break;
    }
  }
  scan.finish();
  if (found !== undefined) return { ok: true, value: found };
  const also = skipped.length > 0 ? `; ${skipped.join("; ")}` : "";
  return {
    ok: false,
    error: `no session in ${root}: none was started in this directory (see scoot sessions list --all, or ${instead})${also}`,
  };
}
