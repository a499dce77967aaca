import { AcpSessions } from "../acp/sessions.js";
import { consoleToStderr } from "../core/console-guard.js";
import { endProcess } from "../core/process-end.js";
import { createStopControl } from "../core/stop.js";
import { scootVersion } from "../core/version.js";
import { openHomeAudit } from "../store/guarded-stores.js";
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
  const loaded = await loadAgentCommand(cli, "acp", { canAsk: !unattended });
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
    audit: openHomeAudit(config, paths, "at first write"),
    log,
  });
  const control = createStopControl({
    onFirst: (sig) => {
      log(`${sig}: stopping (running prompts are cancelled)`);
      void sessions.closeAll().then(() => endProcess(EXIT.interrupted));
    },
  });
  const { serveAcp } = await import("../acp/server.js");
  try {
    await serveAcp({
      sessions,
      version: scootVersion(),
      input: process.stdin,
      output: process.stdout,
      log,
      promptRan: cli.goalRan,
    });
  } finally {
    await sessions.closeAll();
    control.dispose();
  }
  return control.stop.aborted ? EXIT.interrupted : EXIT.ok;
}
