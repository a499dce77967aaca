/**
 * `scoot sessions list [--all] [--limit N] [--json]` (the listing itself: session-listing.ts) and
 * `scoot session show <id>`: read-only views of the transcripts.
 */
import fs from "node:fs";
import { sessionPath, streamSession, transcriptFiles, validateSessionId } from "../store/session.js";
import { flagBool, flagString } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";
import { formatListing, listingNote, SESSIONS_LIMIT, selectSessions } from "./session-listing.js";

/** `--limit N`: a whole number of at least 1, else a usage error. */
function limitFlag(cli: Cli): { ok: true; value: number } | { ok: false; error: string } {
  const raw = flagString(cli.args, "limit");
  if (raw === undefined) return { ok: true, value: SESSIONS_LIMIT };
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    return { ok: false, error: `--limit needs a whole number of at least 1, got "${raw}"` };
  return { ok: true, value: Number(raw) };
}

export async function runSessionsList(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot sessions list: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const limit = limitFlag(cli);
  if (!limit.ok) {
    cli.io.err(`scoot sessions list: ${limit.error}\n`);
    return EXIT.usage;
  }
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const listing = selectSessions(loaded.value.paths.sessions, {
    cwd: cli.cwd,
    all: flagBool(cli.args, "all"),
    limit: limit.value,
  });
  for (const w of listing.warnings) cli.io.err(`scoot: warning: ${w}\n`);
  if (flagBool(cli.args, "json")) {
    // The same rows as the table, as objects.
    const rows = listing.rows.map((s) => ({
      id: s.id,
      modified: new Date(s.modified).toISOString(),
      messages: s.messages,
      first_user_message: s.firstUser,
      project: s.project ?? null,
    }));
    cli.io.out(`${JSON.stringify(rows)}\n`);
    return EXIT.ok;
  }
  if (listing.rows.length > 0)
    cli.io.out(formatListing(listing, { now: Date.now(), width: cli.io.wrapWidth?.("out") }));
  const note = listingNote(listing);
  if (note) cli.io.err(`${note}\n`);
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
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const file = sessionPath(loaded.value.paths.sessions, id);
  if (!transcriptFiles(file).some((f) => fs.existsSync(f))) {
    cli.io.err(
      `scoot session show: no session "${id}" in ${loaded.value.paths.sessions} (see scoot sessions list --all)\n`,
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
