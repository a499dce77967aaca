import { AcpSessions } from "../acp/sessions.js";
import { consoleToStderr } from "../core/console-guard.js";
import { endProcess } from "../core/process-end.js";
import { scootVersion } from "../core/version.js";
import { auditOptions, createAuditLog } from "../store/audit-writer.js";
import { guardAuditLog } from "../store/guarded-stores.js";
import { flagBool } from "./args.js";
import type { Cli } from "./context.js";
import { EXIT } from "./io.js";
import { loadAgentCommand } from "./run-common.js";

export async function runAcp(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot acp: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const unattended = flagBool(cli.args, "unattended");
  // The editor's person answers approval questions; under --unattended nobody does.
  const loaded = loadAgentCommand(cli, "acp", { canAsk: !unattended });
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths, mode, retries, approval } = loaded;
  const log = (line: string) => cli.io.err(`scoot: ${line}\n`);
  // stdout is the protocol: a stray console.log from any dependency would corrupt it.
  consoleToStderr();
  const sessions = new AcpSessions({
    config,
    paths,
    env: cli.env,
    mode,
    retries,
    unattended,
    approval,
    audit: guardAuditLog(createAuditLog(auditOptions(config.audit, paths.audit)), paths.audit),
    log,
  });
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${sig}: stopping (running prompts are cancelled)`);
    void sessions.closeAll().then(() => endProcess(EXIT.interrupted));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const { serveAcp } = await import("../acp/server.js");
  try {
    await serveAcp({ sessions, version: scootVersion(), input: process.stdin, output: process.stdout, log });
  } finally {
    await sessions.closeAll();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  return interrupted ? EXIT.interrupted : EXIT.ok;
}
