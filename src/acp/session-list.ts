/**
 * `session/list` (docs/editors.md "Editors (ACP)"): the stored sessions an editor can load, newest
 * first — every transcript, and ACP sessions created but never prompted (they have only
 * their settings). Each names its project root (from its metadata or settings); sessions
 * whose root is unknown, and scheduled jobs' sessions, are not listed. Paged by a cursor
 * that is the offset of the next page.
 */
import fs from "node:fs";
import path from "node:path";
import type { ListSessionsResponse, SessionInfo } from "@agentclientprotocol/sdk";
import { listSessions } from "../store/session.js";
import { projectRoot, readSessionMeta } from "../store/session-meta.js";
import { readSessionSettings } from "../store/session-settings.js";

/** Sessions per page. */
export const LIST_PAGE_SIZE = 100;
/** A title longer than this is cut. */
const TITLE_MAX_CHARS = 120;
const SETTINGS_SUFFIX = ".settings.json";

interface Found {
  id: string;
  modified: number;
  title: string;
}

/** Sessions that exist only as settings (created, never prompted). */
function settingsOnly(sessionsDir: string, known: ReadonlySet<string>): Found[] {
  let names: string[];
  try {
    names = fs.readdirSync(sessionsDir);
  } catch {
    return [];
  }
  const out: Found[] = [];
  for (const n of names) {
    if (!n.endsWith(SETTINGS_SUFFIX)) continue;
    const id = n.slice(0, -SETTINGS_SUFFIX.length);
    if (known.has(id)) continue;
    try {
      out.push({ id, modified: fs.lstatSync(path.join(sessionsDir, n)).mtimeMs, title: "" });
    } catch {
      // removed since readdir
    }
  }
  return out;
}

export function listStoredSessions(
  sessionsDir: string,
  cwd: string | undefined,
  cursor: string | undefined,
): ListSessionsResponse {
  const start = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isInteger(start) || start < 0)
    throw new Error(`invalid cursor ${JSON.stringify(cursor)}: pass the nextCursor of the previous page`);
  const { sessions } = listSessions(sessionsDir);
  const found: Found[] = sessions.map((s) => ({ id: s.id, modified: s.modified, title: s.firstUser }));
  found.push(...settingsOnly(sessionsDir, new Set(found.map((f) => f.id))));
  found.sort((a, b) => b.modified - a.modified || a.id.localeCompare(b.id));
  const wanted = cwd === undefined ? undefined : projectRoot(cwd);
  const infos: SessionInfo[] = [];
  for (const f of found) {
    if (f.id.startsWith("job-")) continue;
    const root =
      readSessionMeta(sessionsDir, f.id)?.project_root ??
      readSessionSettings(sessionsDir, f.id)?.project_root;
    if (root === undefined || (wanted !== undefined && projectRoot(root) !== wanted)) continue;
    const title = f.title.replace(/\s+/g, " ").trim();
    infos.push({
      sessionId: f.id,
      cwd: root,
      ...(title
        ? { title: title.length > TITLE_MAX_CHARS ? `${title.slice(0, TITLE_MAX_CHARS)}…` : title }
        : {}),
      updatedAt: new Date(f.modified).toISOString(),
    });
  }
  const page = infos.slice(start, start + LIST_PAGE_SIZE);
  const next = start + LIST_PAGE_SIZE < infos.length ? String(start + LIST_PAGE_SIZE) : undefined;
  return { sessions: page, ...(next !== undefined ? { nextCursor: next } : {}) };
}
