/**
 * `scoot undo [<session-id>] [--force]`, `scoot diff [<session-id>]` and the REPL's `/undo`
 * and `/diff` (README "Undo"). The session defaults to the latest one started in this
 * directory. Undo reverts the file changes of the session's last run that made any; a file
 * changed since is named and undo stops (exit 1) unless `--force`.
 */
import type { HomePaths } from "../config/home.js";
import type { Result } from "../core/types.js";
import { readCheckpoints } from "../store/checkpoints.js";
import { claimSession, validateSessionId } from "../store/session.js";
import { latestSessionOfProject, projectRoot, sessionExists } from "../store/session-meta.js";
import {
  applyUndo,
  BASH_NOT_COVERED,
  changedSince,
  planUndo,
  sessionChanges,
  unrestorable,
} from "../store/undo.js";
import { flagBool } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT, type Io } from "./io.js";

/** Where undo and diff write: the ordinary (sanitised) writers plus a raw one for coloured diffs. */
export interface UndoIo extends Io {
  /** Text already made terminal-safe (a rendered diff). */
  raw(text: string): void;
  color: boolean;
}

export function useColor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR;
}

/** A path relative to the project when inside it (checkpoints hold resolved paths). */
function shown(file: string, cwd: string): string {
  for (const root of [cwd, projectRoot(cwd)])
    if (file.startsWith(`${root}/`)) return file.slice(root.length + 1);
  return file;
}

/** Reverts the last run of `sessionId` that changed files; the exit code. */
export function undoLastRun(
  io: UndoIo,
  paths: HomePaths,
  sessionId: string,
  cwd: string,
  opts: { force: boolean; what: string },
): number {
  const { entries, problems } = readCheckpoints(paths.state, sessionId);
  for (const p of problems) io.err(`scoot: warning: ${p}\n`);
  const plan = planUndo(entries);
  if (!plan) {
    io.err(
      `${opts.what}: session ${sessionId} has no file changes to undo (no file_write or file_edit checkpoints)\n`,
    );
    io.err(`${BASH_NOT_COVERED}\n`);
    return EXIT.failed;
  }
  const changed = changedSince(plan);
  const tooLarge = unrestorable(plan);
  if (!opts.force && (changed.length > 0 || tooLarge.length > 0)) {
    if (changed.length > 0) {
      io.err(
        `${opts.what}: nothing was undone: ${changed.length === 1 ? "this file has" : "these files have"} changed since Scoot changed ${changed.length === 1 ? "it" : "them"}:\n`,
      );
      for (const f of changed) io.err(`  ${shown(f, cwd)}\n`);
    }
    if (tooLarge.length > 0) {
      io.err(`${opts.what}: nothing was undone: the earlier content of these files was too large to keep:\n`);
      for (const f of tooLarge) io.err(`  ${shown(f, cwd)}\n`);
    }
    io.err(
      `  fix: look at the changes (scoot diff ${sessionId}), then undo with --force to overwrite them (/undo --force in the REPL)\n`,
    );
    return EXIT.failed;
  }
  const out = applyUndo(paths.state, sessionId, plan);
  io.out(`undid run ${plan.runId} of session ${sessionId}${plan.goal ? ` (goal: ${plan.goal})` : ""}\n`);
  for (const f of out.restored) io.out(`  restored ${shown(f, cwd)}\n`);
  for (const f of out.removed) io.out(`  removed  ${shown(f, cwd)} (it did not exist before)\n`);
  for (const f of out.skipped)
    io.out(`  skipped  ${shown(f, cwd)} (its earlier content was too large to keep)\n`);
  for (const f of out.failed) io.err(`${opts.what}: could not restore ${shown(f.path, cwd)}: ${f.error}\n`);
  io.err(`${BASH_NOT_COVERED}\n`);
  return out.failed.length > 0 ? EXIT.failed : EXIT.ok;
}

/** Shows every file the session's kept changes touched, as a diff against what is on disk now. */
export async function showSessionDiff(
  io: UndoIo,
  paths: HomePaths,
  sessionId: string,
  cwd: string,
): Promise<number> {
  const { entries, problems } = readCheckpoints(paths.state, sessionId);
  for (const p of problems) io.err(`scoot: warning: ${p}\n`);
  const changes = sessionChanges(entries);
  if (changes.length === 0) {
    io.err(`session ${sessionId} has no file changes (no file_write or file_edit checkpoints)\n`);
    io.err("note: changes made by bash commands are not recorded and cannot be shown\n");
    return EXIT.ok;
  }
  const { renderUnifiedDiff } = await import("./view/diff.js");
  for (const c of changes) {
    const name = shown(c.path, cwd);
    if (c.changedSince)
      io.err(`note: ${name} has changed since Scoot last changed it; the diff shows it as it is now\n`);
    if (c.omitted) {
      io.out(`${name}: changed (its earlier content was too large to keep; no diff)\n`);
      continue;
    }
    io.raw(renderUnifiedDiff(name, c.before, c.now, { color: io.color }));
  }
  io.err("note: changes made by bash commands are not recorded and not shown\n");
  return EXIT.ok;
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
    return undoLastRun(cliUndoIo(cli), paths, id, cli.cwd, {
      force: flagBool(cli.args, "force"),
      what: "scoot undo",
    });
  } finally {
    claim.value.release();
  }
}

export async function runDiff(cli: Cli): Promise<number> {
  const chosen = sessionForCommand(cli, "diff");
  if (!chosen.ok) return chosen.exitCode;
  return showSessionDiff(cliUndoIo(cli), chosen.paths, chosen.id, cli.cwd);
}
