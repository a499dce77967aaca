/**
 * `scoot serve`: NDJSON requests on stdin, responses on stdout (see src/serve). Runs use the
 * configured policy, or `--policy` / `--unattended` given to `serve`. Warnings and `--trace`
 * go to stderr; stdout carries responses only. Exits 0 when stdin ends; SIGINT, SIGTERM or SIGHUP
 * aborts the request in hand, answers it, and exits 130 (docs/reliability.md "Signals").
 */
import os from "node:os";
import { consoleToStderr } from "../core/console-guard.js";
import { createStopControl } from "../core/stop.js";
import { refuseProjectRoot } from "../policy/project-root.js";
import { createMethods } from "../serve/methods.js";
import { serveLines } from "../serve/server.js";
import { flagBool } from "./args.js";
import type { Cli } from "./context.js";
import { EXIT } from "./io.js";
import { loadAgentCommand } from "./run-common.js";
import { traceLine } from "./trace.js";

export async function runServe(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot serve: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  // stdout carries responses only: a library's console.log must not land in the stream.
  consoleToStderr();
  const loaded = await loadAgentCommand(cli, "serve");
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths, mode, retries } = loaded;
  // Refused before the first request, not on each one (docs/safety.md "Dangerous project roots").
  const refused = refuseProjectRoot(cli.cwd, {
    mode,
    scootHome: paths.root,
    configDir: paths.configDir,
    userHome: os.homedir(),
  });
  if (refused) {
    cli.io.err(`scoot serve: ${refused}\n`);
    return EXIT.usage;
  }
  const log = (line: string) => cli.io.err(`scoot: ${line}\n`);
  const trace = flagBool(cli.args, "trace");
  const methods = createMethods({
    config,
    paths,
    cwd: cli.cwd,
    env: cli.env,
    mode,
    retries,
    unattended: flagBool(cli.args, "unattended"),
    log,
    runDone: cli.goalRan,
    onEvent: trace
      ? (e) => {
          const line = traceLine(e);
          if (line) cli.io.err(`${line}\n`);
        }
      : undefined,
  });
  const control = createStopControl({
    onFirst: (sig) => log(`${sig}: stopping (the request in hand is aborted and answered)`),
    error: () => new Error("interrupted"),
  });
  try {
    await serveLines({
      input: process.stdin,
      // Responses are redacted field by field before encoding (so the line stays valid JSON);
      // the second pass in io.out then finds nothing left to replace.
      write: (line) => cli.io.out(line),
      methods,
      signal: control.stop,
      log,
    });
  } finally {
    control.dispose();
  }
  return control.stop.aborted ? EXIT.interrupted : EXIT.ok;
}
