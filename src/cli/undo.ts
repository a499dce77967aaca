/**
 * `scoot undo [<session-id>] [--force]`, `scoot diff [<session-id>]` and the REPL's `/undo`
 * and `/diff` (docs/sessions.md "Undo"). The session defaults to the latest one started in this
 * directory. Undo reverts the file changes of the session's last run that made any; a file
 * changed since is named and undo stops (exit 1) unless `--force`.
 */

import { showSessionDiff, type UndoIo, undoLastRun } from "../agent/undo-report.js";
import type { HomePaths } from "../config/home.js";
import type { Result } from "../core/types.js";
import { claimSession, validateSessionId } from "../store/session.js";
import { latestSessionOfProject, sessionExists } from "../store/session-meta.js";
import { flagBool } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";

export function useColor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR;
}

/** The session named on the command line, or the latest one started in this directory. */
function chooseSession(paths: HomePaths, word: string | undefined, cwd: string): Result<string> {
  if (word === undefined) {
    const latest = latestSessionOfProject(paths.sessions, cwd);
    if (!latest.ok) return { ok: false, error: latest.error.replace("no session to continue", "no session") };
    return latest;
  }
  const valid = validateSessionId(word);
  if (!valid.ok) return valid;
  if (!sessionExists(paths.sessions, word)) {
    return { ok: false, error: `no session "${word}" in ${paths.sessions} (see scoot sessions list)` };
  }
  return valid;
}

function cliUndoIo(cli: Cli): UndoIo {
  return { ...cli.io, raw: (t) => process.stdout.write(t), color: useColor(process.stdout, cli.env) };
}

function sessionArg(cli: Cli, name: string): { ok: true; word: string | undefined } | { ok: false } {
  if (cli.args.words.length > 1) {
    cli.io.err(
      `scoot ${name}: unexpected argument "${cli.args.words[1]}" (usage: scoot ${name} [<session-id>])\n`,
    );
    return { ok: false };
  }
  return { ok: true, word: cli.args.words[0] };
}

/** The home and the session `scoot undo` / `scoot diff` work on, or the exit code of why not. */
function sessionForCommand(
  cli: Cli,
  name: "undo" | "diff",
): { ok: true; paths: HomePaths; id: string } | { ok: false; exitCode: number } {
  const arg = sessionArg(cli, name);
  if (!arg.ok) return { ok: false, exitCode: EXIT.usage };
  const loaded = loadForCommand(cli);
  if (!loaded.ok) return { ok: false, exitCode: loaded.exitCode };
  const { paths } = loaded.value;
  const id = chooseSession(paths, arg.word, cli.cwd);
  if (!id.ok) {
    cli.io.err(`scoot ${name}: ${id.error}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  return { ok: true, paths, id: id.value };
}

export async function runUndo(cli: Cli): Promise<number> {
  const chosen = sessionForCommand(cli, "undo");
  if (!chosen.ok) return chosen.exitCode;
  const { paths, id } = chosen;
  // A live run of the session may be changing the same files: undo waits for it to end.
  const claim = claimSession(paths.sessions, id);
  if (!claim.ok) {
    cli.io.err(`scoot undo: ${claim.error}\n  (in that REPL, /undo reverts its last goal)\n`);
    return EXIT.failed;
  }
  try {
    const undone = undoLastRun(cliUndoIo(cli), paths, id, cli.cwd, {
      force: flagBool(cli.args, "force"),
      what: "scoot undo",
    });
    return undone ? EXIT.ok : EXIT.failed;
  } finally {
    claim.value.release();
  }
}

export async function runDiff(cli: Cli): Promise<number> {
  const chosen = sessionForCommand(cli, "diff");
  if (!chosen.ok) return chosen.exitCode;
  await showSessionDiff(cliUndoIo(cli), chosen.paths, chosen.id, cli.cwd);
  return EXIT.ok;
}
