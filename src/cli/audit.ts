/** `scoot audit show <session-id>`: that session's events from every retained generation, oldest first. */
import { formatEvent, readAuditEvents } from "../store/audit.js";
import { validateSessionId } from "../store/session.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";

export async function runAuditShow(cli: Cli): Promise<number> {
  const [id, extra] = cli.args.words;
  if (!id || extra !== undefined) {
    cli.io.err("usage: scoot audit show <session-id>\n");
    return EXIT.usage;
  }
  const valid = validateSessionId(id);
  if (!valid.ok) {
    cli.io.err(`scoot audit show: ${valid.error}\n`);
    return EXIT.usage;
  }
  const loaded = loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  let read: ReturnType<typeof readAuditEvents>;
  try {
    read = readAuditEvents(loaded.value.paths.audit, id);
  } catch (e) {
    // A symlink or FIFO planted in logs/ (issue 17 item 7): say which file, never hang.
    cli.io.err(`scoot audit show: ${(e as Error).message}\n`);
    return EXIT.failed;
  }
  const { events, warnings } = read;
  for (const w of warnings) cli.io.err(`scoot: warning: ${w}\n`);
  if (events.length === 0) cli.io.err(`no audit events for session "${id}"\n`);
  cli.io.out(events.map((e) => `${formatEvent(e)}\n`).join(""));
  return EXIT.ok;
}
