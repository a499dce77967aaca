/** `scoot sessions list` and `scoot session show <id>`: read-only views of the transcripts. */
import fs from "node:fs";
import {
  listSessions,
  sessionPath,
  streamSession,
  transcriptFiles,
  validateSessionId,
} from "../store/session.js";
import { readSessionMeta } from "../store/session-meta.js";
import { flagBool } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";

const PREVIEW_CHARS = 60;

function preview(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > PREVIEW_CHARS ? `${one.slice(0, PREVIEW_CHARS - 1)}…` : one;
}

export async function runSessionsList(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot sessions list: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const loaded = loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const dir = loaded.value.paths.sessions;
  const { sessions, warnings, metaIds } = listSessions(dir);
  // The project a session was started in (docs/sessions.md "Resuming a session"); older sessions
  // have none, and the directory listing already said so: thousands of failed opens cost more
  // than the listing itself.
  const skipped: string[] = [];
  const projects = new Map(
    sessions.map((s) => [
      s.id,
      metaIds.has(s.id) ? readSessionMeta(dir, s.id, skipped)?.project_root : undefined,
    ]),
  );
  const project = (id: string) => projects.get(id);
  for (const w of [...warnings, ...skipped]) cli.io.err(`scoot: warning: ${w}\n`);
  if (flagBool(cli.args, "json")) {
    const rows = sessions.map((s) => ({
      id: s.id,
      modified: new Date(s.modified).toISOString(),
      messages: s.messages,
      first_user_message: s.firstUser,
      project: project(s.id) ?? null,
    }));
    cli.io.out(`${JSON.stringify(rows)}\n`);
    return EXIT.ok;
  }
  if (sessions.length === 0) {
    cli.io.err("no sessions yet\n");
    return EXIT.ok;
  }
  for (const s of sessions) {
    cli.io.out(
      `${s.id}\t${new Date(s.modified).toISOString()}\t${s.messages}\t${preview(s.firstUser)}\t${project(s.id) ?? "-"}\n`,
    );
  }
  return EXIT.ok;
}

export async function runSessionShow(cli: Cli): Promise<number> {
  const [id, extra] = cli.args.words;
  if (!id || extra !== undefined) {
    cli.io.err("usage: scoot session show <id>\n");
    return EXIT.usage;
  }
  const valid = validateSessionId(id);
  if (!valid.ok) {
    cli.io.err(`scoot session show: ${valid.error}\n`);
    return EXIT.usage;
  }
  const loaded = loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const file = sessionPath(loaded.value.paths.sessions, id);
  if (!transcriptFiles(file).some((f) => fs.existsSync(f))) {
    cli.io.err(
      `scoot session show: no session "${id}" in ${loaded.value.paths.sessions} (see scoot sessions list)\n`,
    );
    return EXIT.failed;
  }
  // Printed as read: a long transcript starts showing at once and is never held whole.
  try {
    for await (const item of streamSession(file)) {
      if (item.warning !== undefined) {
        cli.io.err(`scoot: warning: ${item.warning}\n`);
        continue;
      }
      cli.io.out(`${JSON.stringify({ role: item.record.role, content: item.record.content })}\n`);
      if ((await cli.io.drain?.()) === false) return EXIT.ok; // the reader has gone: stop reading
    }
  } catch (e) {
    // A symlink or FIFO planted in state/sessions/.
    cli.io.err(`scoot session show: ${(e as Error).message}\n`);
    return EXIT.failed;
  }
  return EXIT.ok;
}
