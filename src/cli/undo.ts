/**
 * `scoot undo [<session-id>] [--force]`, `scoot diff [<session-id>]` and the REPL's `/undo`
 * and `/diff` (docs/sessions.md "Undo"). The session defaults to the latest one started in this
 * directory. Undo reverts the file changes of the session's last run that made any; a file
 * changed since is named and undo stops (exit 1) unless `--force`.
 */

import { undoNote } from "../agent/history.js";
import {
  latestUndoableRun,
  showSessionDiff,
  type UndoDone,
  type UndoGuard,
  type UndoIo,
  undoLastRun,
} from "../agent/undo-report.js";
import type { HomePaths } from "../config/home.js";
import { tokenFilePath } from "../config/secrets.js";
import { shownPath } from "../core/inside.js";
import type { Result } from "../core/types.js";
import { decide } from "../policy/gate.js";
import { parsePolicyMode } from "../policy/modes.js";
import { buildGateSettings } from "../policy/settings.js";
import { guardSession, openHomeAudit } from "../store/guarded-stores.js";
import { claimSession, openSession, validateSessionId } from "../store/session.js";
import { latestSessionOfProject, projectRoot, sessionExists } from "../store/session-meta.js";
import { flagBool, flagString } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";
import { foldLines, screenRows } from "./question-parts.js";
import { relativeTime } from "./relative-time.js";

/** A terminal that does not say its size is taken to be this big. */
const DEFAULT_ROWS = 24;
const DEFAULT_COLUMNS = 80;
/**
 * Rows a folded `/diff` leaves free: the command's line, the note after the diffs (two rows on a
 * narrow terminal), the prompt and the fold line's second row when it wraps.
 */
const DIFF_KEPT_ROWS = 5;

/** A goal named in a hint is cut to this many characters. */
const GOAL_SHOWN_CHARS = 60;

export function useColor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR;
}

/** The session named on the command line, or the latest one started in this directory. */
function chooseSession(
  paths: HomePaths,
  word: string | undefined,
  cwd: string,
  name: "undo" | "diff",
): Result<string> {
  // The hint names what this command takes: a session id, never `--resume`.
  if (word === undefined)
    return latestSessionOfProject(paths.sessions, cwd, `name one: scoot ${name} <session-id>`);
  const valid = validateSessionId(word);
  if (!valid.ok) return valid;
  if (!sessionExists(paths.sessions, word)) {
    return { ok: false, error: `no session "${word}" in ${paths.sessions} (see scoot sessions list --all)` };
  }
  return valid;
}

function cliUndoIo(cli: Cli): UndoIo {
  return { ...cli.io, raw: (t) => process.stdout.write(t), color: useColor(process.stdout, cli.env) };
}

/**
 * The writers of the REPL's `/undo` and `/diff`. On a terminal `/diff` folds each file's diff to
 * the screen as the approval question folds a change: its first and last lines, and one line
 * between naming the command that shows all of it (docs/sessions.md "Undo").
 */
export function replUndoIo(cli: Cli): UndoIo {
  const io = cliUndoIo(cli);
  if (!cli.io.processStreams || !process.stdout.isTTY) return io;
  return {
    ...io,
    fold(lines, sessionId) {
      const rows = process.stdout.rows || DEFAULT_ROWS;
      const columns = process.stdout.columns || DEFAULT_COLUMNS;
      const how = `all of them: scoot diff ${sessionId}`;
      return foldLines(screenRows(lines, columns), rows - DIFF_KEPT_ROWS, how).shown;
    },
  };
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
async function sessionForCommand(
  cli: Cli,
  name: "undo" | "diff",
): Promise<{ ok: true; paths: HomePaths; id: string } | { ok: false; exitCode: number }> {
  const arg = sessionArg(cli, name);
  if (!arg.ok) return { ok: false, exitCode: EXIT.usage };
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return { ok: false, exitCode: loaded.exitCode };
  const { paths } = loaded.value;
  const id = chooseSession(paths, arg.word, cli.cwd, name);
  if (!id.ok) {
    cli.io.err(`scoot ${name}: ${id.error}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  return { ok: true, paths, id: id.value };
}

/**
 * When the session has nothing to undo (its runs changed no file): the latest run of this project
 * that did, and the command that undoes it.
 */
function otherUndoableRun(cli: Cli, paths: HomePaths, id: string): string[] {
  const run = latestUndoableRun(paths.state, projectRoot(cli.cwd), id);
  if (!run) return [];
  const goal = run.goal ? ` (goal: ${run.goal.replace(/\s+/g, " ").slice(0, GOAL_SHOWN_CHARS)})` : "";
  return [
    `the latest run here that changed files: run ${run.runId} of session ${run.sessionId}${goal}, ${relativeTime(run.at, Date.now())}`,
    `undo it with: scoot undo ${run.sessionId}`,
  ];
}

/** The gate in the configured mode (or --policy) and the audit log, for `scoot undo`. */
async function cliUndoGuard(cli: Cli, paths: HomePaths, sessionId: string): Promise<Result<UndoGuard>> {
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return { ok: false, error: "the configuration cannot be loaded" };
  const { config } = loaded.value;
  const word = flagString(cli.args, "policy");
  const mode = word === undefined ? config.tools.policy : parsePolicyMode(word);
  if (!mode)
    return { ok: false, error: `unknown policy mode "${word}" (use readonly, guarded or unrestricted)` };
  const root = projectRoot(cli.cwd);
  const settings = buildGateSettings(config, root, {
    mode,
    tokenFile: tokenFilePath(config, paths.configDir),
    scootHome: paths.root,
    configDir: paths.configDir,
  });
  const opened = openHomeAudit(config, paths);
  if (!opened.ok) return { ok: false, error: `cannot open the audit log: ${opened.error}` };
  const audit = opened.value;
  return {
    ok: true,
    value: {
      judge(file) {
        // Judged as the model's own write would be: relative to the root it ran in.
        const asked = shownPath(file, root);
        const d = decide({ capability: "write", writePaths: [asked] }, settings);
        if (!d.allow) return d.reason;
        // The gate resolves links: a target other than the recorded file leads elsewhere.
        return d.target.write[0] === file ? undefined : `it now leads to ${d.target.write[0]}`;
      },
      record(msg) {
        audit.emit(sessionId, "undo", msg);
      },
    },
  };
}

/**
 * The session's transcript gets the note a live session would give the model after `/undo`
 * (src/agent/history.ts), so `--resume` / `--continue` tells the model which files went back.
 * Written under the session's claim, which `runUndo` holds.
 */
function noteInTranscript(cli: Cli, paths: HomePaths, id: string, undone: UndoDone): void {
  const note = undoNote(undone);
  if (note === undefined) return;
  try {
    guardSession(openSession(paths.sessions, id)).append({ role: "user", content: note });
  } catch (e) {
    cli.io.err(
      `scoot undo: warning: the files were undone, but the session transcript could not be told (${(e as Error).message}); a resumed session will not know\n`,
    );
  }
}

export async function runUndo(cli: Cli): Promise<number> {
  const chosen = await sessionForCommand(cli, "undo");
  if (!chosen.ok) return chosen.exitCode;
  const { paths, id } = chosen;
  // A live run of the session may be changing the same files: undo waits for it to end.
  const claim = claimSession(
    paths.sessions,
    id,
    "wait for it to finish, or type /undo in that REPL (it reverts its last goal)",
  );
  if (!claim.ok) {
    cli.io.err(`scoot undo: ${claim.error}\n`);
    return EXIT.failed;
  }
  try {
    const guard = await cliUndoGuard(cli, paths, id);
    if (!guard.ok) {
      cli.io.err(`scoot undo: ${guard.error}\n`);
      return EXIT.usage;
    }
    const undone = undoLastRun(cliUndoIo(cli), paths, id, cli.cwd, {
      force: flagBool(cli.args, "force"),
      what: "scoot undo",
      guard: guard.value,
      instead: () => otherUndoableRun(cli, paths, id),
    });
    noteInTranscript(cli, paths, id, undone);
    return undone.ok ? EXIT.ok : EXIT.failed;
  } finally {
    claim.value.release();
  }
}

export async function runDiff(cli: Cli): Promise<number> {
  const chosen = await sessionForCommand(cli, "diff");
  if (!chosen.ok) return chosen.exitCode;
  await showSessionDiff(cliUndoIo(cli), chosen.paths, chosen.id, cli.cwd);
  return EXIT.ok;
}
