/** `scoot audit show <session-id>`: that session's events from every retained generation, oldest first. */

import { loadAuditKey } from "../store/audit-chain.js";
import { formatEvent, streamAuditEvents } from "../store/audit-readers.js";
import { describeReport, type VerifyReport, verifyAudit } from "../store/audit-verify.js";
import { auditOptions } from "../store/audit-writer.js";
import { validateSessionId } from "../store/session.js";
import { flagBool, flagString } from "./args.js";
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
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  // Printed as read, whatever the log's size: nothing is held but one line.
  let printed = 0;
  try {
    for await (const item of streamAuditEvents(loaded.value.paths.audit, id)) {
      if (item.warning !== undefined) {
        cli.io.err(`scoot: warning: ${item.warning}\n`);
        continue;
      }
      cli.io.out(`${formatEvent(item.record)}\n`);
      printed += 1;
      if ((await cli.io.drain?.()) === false) return EXIT.ok; // the reader has gone: stop reading
    }
  } catch (e) {
    // A symlink or FIFO planted in logs/: say which file, never hang.
    cli.io.err(`scoot audit show: ${(e as Error).message}\n`);
    return EXIT.failed;
  }
  if (printed === 0) cli.io.err(`no audit events for session "${id}"\n`);
  return EXIT.ok;
}

/**
 * `scoot audit verify [--json] [--head <hash>]`: the hash chain over every retained generation
 * (docs/sessions.md "Sessions and audit"); `--head` is a head recorded earlier, which must still be in the log.
 * Exit 0 intact, 1 on the first break (named by file, line and kind), 2 when the HMAC key
 * file configured in audit.hmac_key_file cannot be used.
 */
export async function runAuditVerify(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(
      `scoot audit verify: unexpected argument "${cli.args.words[0]}" (usage: scoot audit verify [--json] [--head <hash>])\n`,
    );
    return EXIT.usage;
  }
  const head = flagString(cli.args, "head");
  if (head !== undefined && !/^[0-9a-f]{64}$/.test(head)) {
    cli.io.err(
      "scoot audit verify: --head takes a chain hash (64 hex digits), as printed on the head: line of an earlier verify\n",
    );
    return EXIT.usage;
  }
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths } = loaded.value;
  const key = loadAuditKey(auditOptions(config.audit, paths.audit).hmacKeyFile);
  if (!key.ok) {
    cli.io.err(`scoot audit verify: ${key.error}\n`);
    return EXIT.usage;
  }
  let report: VerifyReport;
  try {
    report = verifyAudit(paths.audit, { key: key.value, ...(head !== undefined ? { head } : {}) });
  } catch (e) {
    cli.io.err(`scoot audit verify: cannot read the audit log: ${(e as Error).message}\n`);
    return EXIT.failed;
  }
  if (flagBool(cli.args, "json")) cli.io.out(`${JSON.stringify(report)}\n`);
  else
    cli.io.out(
      describeReport(report)
        .map((l) => `${l}\n`)
        .join(""),
    );
  return report.ok ? EXIT.ok : EXIT.failed;
}
