/**
 * The REPL (docs/keyboard.md "The REPL"): each line is a goal, run in one `repl-<ms>-<pid>` session
 * (goals build on each other). `/exit` or Ctrl-D leaves and names the command that resumes
 * the session. Ctrl-C during a goal cancels that goal only; at the prompt it discards the
 * half-typed line. Slash commands (the table below) never reach the model. On a terminal the
 * history persists across launches and a pasted multi-line block is one goal. The answer
 * streams to stdout as it arrives, the thought to stderr (docs/context.md "Streaming"). On a terminal,
 * calls with an effect wait for the person's approval (docs/safety.md "Approval"); `/undo` and `/diff`
 * work on the file checkpoints (docs/sessions.md "Undo").
 */
import readline from "node:readline";
import type { Readable } from "node:stream";
import { showSessionDiff, type UndoIo, undoLastRun } from "../agent/undo-report.js";
import { createStopControl } from "../core/stop.js";
import { loadResumeTarget } from "../store/resume-target.js";
import { sessionExists } from "../store/session-meta.js";
import { keyboardApprover } from "./approve-keyboard.js";
import type { Cli } from "./context.js";
import { EXIT } from "./io.js";
import { someNames } from "./model-check.js";
import { commandList, isCommandLine, type ReplCommand, runCommandLine } from "./repl/commands.js";
import { historyFile, loadHistory, REPL_HISTORY_MAX, saveHistory } from "./repl/history.js";
import { lastExchange } from "./repl/last-exchange.js";
import { PASTE_OFF, PASTE_ON, pasteFilter, restoreNewlines } from "./repl/paste.js";
import { type CliAgent, openCliAgent } from "./run-common.js";
import {
  formatListing,
  listingNote,
  SESSIONS_LIMIT,
  selectSessions,
  sessionNumbered,
} from "./session-listing.js";
import { traceSummary } from "./trace.js";
import { useColor } from "./undo.js";
import { compactCount } from "./view/live.js";

const PROMPT = "scoot> ";
const PREVIEW_CHARS = 50;
/** The resumed goal and answer shown before the prompt are cut to this many characters. */
const RESUMED_SHOWN_CHARS = 400;
/** Model names are short printable words. */
const MODEL_NAME = /^[\x21-\x7e]{1,200}$/;

/** One answer line from the person; undefined when the input closes or the signal fires. */
function askLine(rl: readline.Interface, prompt: string, signal: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    const done = (v: string | undefined) => {
      rl.off("close", onClose);
      signal.removeEventListener("abort", onAbort);
      resolve(v);
    };
    const onClose = () => done(undefined);
    const onAbort = () => done(undefined);
    rl.once("close", onClose);
    signal.addEventListener("abort", onAbort, { once: true });
    rl.question(prompt, { signal }, (answer) => done(answer));
  });
}

function preview(text: string, max = PREVIEW_CHARS): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** What the REPL's steps share. `active` is the session goals go to; /new and /resume switch it. */
interface Repl {
  cli: Cli;
  interactive: boolean;
  active: CliAgent;
  /** The running goal's controller; undefined at the prompt. */
  current?: AbortController;
}

export async function runRepl(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot repl: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const interactive = Boolean(process.stdin.isTTY);
  // The approver asks through the readline interface made below, once there is one.
  let rlRef: readline.Interface | undefined;
  const approver = interactive ? terminalApprover(cli, () => rlRef) : undefined;
  const opened = await openCliAgent(cli, "repl", { answers: true, thoughts: true }, approver);
  if (!opened.ok) return opened.exitCode;
  const repl: Repl = { cli, interactive, active: opened };
  const editor = openLineEditor(cli, interactive, historyFile(opened.stateDir));
  const { rl } = editor;
  rlRef = rl;
  if (interactive) cli.io.err(banner(repl.active));
  showResumed(cli, repl.active);
  cancelOnCtrlC(repl, rl);
  // Without a TTY, readline does not see Ctrl-C: cancel the goal from the process signal, each time.
  const onSigint = () => {
    if (repl.current) repl.current.abort(new Error("interrupted"));
    else rl.close();
  };
  const control = createStopControl({
    signals: interactive ? [] : ["SIGINT"],
    onFirst: onSigint,
    onAgain: onSigint,
  });
  const commands = replCommands(repl);
  try {
    await readGoals(repl, rl, commands, opened.trace);
  } finally {
    control.dispose();
    closeLineEditor(editor, interactive);
    const id = repl.active.agent.sessionId;
    await repl.active.agent.close();
    if (sessionExists(repl.active.sessionsDir, id)) cli.io.err(`resume with: scoot --resume ${id}\n`);
  }
  return EXIT.ok;
}

/** Approval questions at the keyboard, asked through the REPL's own line editor once it exists. */
function terminalApprover(cli: Cli, rl: () => readline.Interface | undefined) {
  return keyboardApprover({
    question: (prompt, signal) => {
      const editor = rl();
      return editor ? askLine(editor, prompt, signal) : Promise.resolve(undefined);
    },
    write: (text) => process.stderr.write(text),
    color: useColor(process.stderr, cli.env),
  });
}

interface LineEditor {
  rl: readline.Interface;
  /** The bracketed-paste filter stdin passes through on a terminal. */
  filter?: ReturnType<typeof pasteFilter>;
}

/** The line editor: on a terminal, input passes the bracketed-paste filter and the history persists. */
function openLineEditor(cli: Cli, interactive: boolean, history: string): LineEditor {
  const warn = (w: string) => cli.io.err(`scoot: warning: ${w}\n`);
  let input: Readable = process.stdin;
  const filter = interactive ? pasteFilter() : undefined;
  if (filter) {
    process.stdin.pipe(filter);
    input = filter;
    process.stdin.setRawMode(true);
    process.stdout.write(PASTE_ON);
  }
  const rl = readline.createInterface({
    input,
    output: interactive ? process.stdout : undefined,
    terminal: interactive,
    prompt: PROMPT,
    ...(interactive
      ? { history: loadHistory(history, warn), historySize: REPL_HISTORY_MAX, removeHistoryDuplicates: true }
      : {}),
  });
  if (interactive)
    rl.on("history", (entries: string[]) => {
      const problem = saveHistory(history, entries);
      if (problem) warn(problem);
    });
  return { rl, ...(filter ? { filter } : {}) };
}

/** Closes the line editor and gives the terminal back as it was. */
function closeLineEditor(editor: LineEditor, interactive: boolean): void {
  editor.rl.close();
  if (!interactive) return;
  process.stdout.write(PASTE_OFF);
  if (editor.filter) process.stdin.unpipe(editor.filter);
  process.stdin.setRawMode(false);
  process.stdin.pause();
}

function banner(active: CliAgent): string {
  return `scoot REPL — session ${active.agent.sessionId}, policy ${active.agent.mode}, model ${active.agent.model()}. /help for commands, /exit or Ctrl-D to leave.\n`;
}

/** The last goal and answer of a resumed session, cut short, before the prompt. */
function showResumed(cli: Cli, agent: CliAgent): void {
  const last = agent.resumed ? lastExchange(agent.resumed) : undefined;
  if (!last) return;
  cli.io.err(`last goal: ${preview(last.goal, RESUMED_SHOWN_CHARS)}\n`);
  cli.io.err(`answer: ${last.answer === undefined ? "(none)" : preview(last.answer, RESUMED_SHOWN_CHARS)}\n`);
}

/** Ctrl-C on a terminal: cancels the running goal, or discards the half-typed line. */
function cancelOnCtrlC(repl: Repl, rl: readline.Interface): void {
  rl.on("SIGINT", () => {
    if (repl.current) {
      repl.cli.io.err("\nscoot: cancelling this goal\n");
      repl.current.abort(new Error("interrupted"));
      return;
    }
    // The half-typed line is discarded, not kept under the cursor for the next goal.
    const editor = rl as unknown as { line: string; cursor: number };
    const had = editor.line.length > 0;
    editor.line = "";
    editor.cursor = 0;
    repl.cli.io.err(had ? "^C\n" : "\n(type /exit or press Ctrl-D to leave)\n");
    rl.prompt();
  });
}

/** Each line until /exit or the end of input: a slash command, or a goal for the active session. */
async function readGoals(
  repl: Repl,
  rl: readline.Interface,
  commands: ReplCommand[],
  trace: boolean | undefined,
): Promise<void> {
  const { cli, interactive } = repl;
  const lines = rl[Symbol.asyncIterator]();
  if (interactive) rl.prompt();
  for (;;) {
    const next = await lines.next();
    if (next.done) break;
    const goal = restoreNewlines(next.value).trim();
    if (goal === "") {
      if (interactive) rl.prompt();
      continue;
    }
    if (isCommandLine(goal)) {
      const outcome = await runCommandLine(goal, commands, cli.io);
      if (outcome === "exit") break;
      if (interactive) rl.prompt();
      continue;
    }
    await runGoal(repl, goal, trace);
    if (interactive) rl.prompt();
  }
}

/** One goal in the active session; Ctrl-C cancels it through `repl.current`. */
async function runGoal(repl: Repl, goal: string, trace: boolean | undefined): Promise<void> {
  const { cli } = repl;
  repl.current = new AbortController();
  const result = await repl.active.agent.run(goal, repl.current.signal);
  repl.current = undefined;
  repl.active.finish(result);
  if (trace) cli.io.err(`${traceSummary(result)}\n`);
  if (result.status !== "final")
    cli.io.err(`scoot: ${result.status === "interrupted" ? "goal cancelled" : result.error}\n`);
}

/** Switches to another session (a new one when `resumeId` is undefined); on failure the current one stays. */
async function switchTo(repl: Repl, resumeId: string | undefined): Promise<void> {
  const { cli } = repl;
  let target: Parameters<CliAgent["reopen"]>[0] = {};
  if (resumeId !== undefined) {
    // A number is a row of /sessions (this directory's listing); anything else is an id.
    if (/^\d+$/.test(resumeId)) {
      const numbered = sessionNumbered(repl.active.sessionsDir, cli.cwd, Number(resumeId));
      if (!numbered.ok) {
        cli.io.err(`scoot: ${numbered.error}\n`);
        return;
      }
      resumeId = numbered.value;
    }
    if (resumeId === repl.active.agent.sessionId) {
      cli.io.err(`scoot: already in session ${resumeId}\n`);
      return;
    }
    const loaded = loadResumeTarget(repl.active.sessionsDir, resumeId);
    if (!loaded.ok) {
      cli.io.err(`scoot: ${loaded.error}\n`);
      return;
    }
    target = { resume: loaded.value };
  }
  const next = await repl.active.reopen(target);
  if (!next.ok) {
    cli.io.err(`scoot: ${next.error}\n`);
    return;
  }
  await repl.active.agent.close();
  repl.active = next.value;
  cli.io.err(
    resumeId === undefined
      ? `new session ${repl.active.agent.sessionId}\n`
      : `resumed session ${repl.active.agent.sessionId}\n`,
  );
  showResumed(cli, repl.active);
}

/** `/sessions`: this directory's listing, as `scoot sessions list` shows it, the active session marked. */
function showSessions(repl: Repl): void {
  const { cli, active } = repl;
  const listing = selectSessions(active.sessionsDir, { cwd: cli.cwd, all: false, limit: SESSIONS_LIMIT });
  for (const w of listing.warnings) cli.io.err(`scoot: warning: ${w}\n`);
  if (listing.rows.length > 0)
    cli.io.out(formatListing(listing, { now: Date.now(), active: active.agent.sessionId }));
  const note = listingNote(listing);
  if (note) cli.io.err(`${note}\n`);
}

/** `/status`: model, mode, approval, context use and tokens of the active session. */
function showStatus(repl: Repl): void {
  const { agent, stats } = repl.active;
  const window = agent.contextWindow();
  const used = stats.contextTokens;
  const context = window
    ? `${compactCount(used)} of ${compactCount(window)} tokens (${Math.round((100 * used) / window)}%)`
    : `${compactCount(used)} tokens (window not known yet)`;
  const u = stats.usage;
  repl.cli.io.out(
    [
      `session   ${agent.sessionId}`,
      `model     ${agent.model()}`,
      `mode      ${agent.mode}`,
      `approval  ${repl.active.approval}`,
      `context   ${context}, ${agent.historyBytes()} bytes kept`,
      `tokens    ${u.total_tokens} (${u.prompt_tokens} in, ${u.completion_tokens} out) over ${stats.goals} goal${stats.goals === 1 ? "" : "s"}`,
      "",
    ].join("\n"),
  );
}

/** The slash commands; each acts on the session active when it runs. */
function replCommands(repl: Repl): ReplCommand[] {
  const { cli } = repl;
  const undoIo: UndoIo = {
    ...cli.io,
    raw: (t) => process.stdout.write(t),
    color: useColor(process.stdout, cli.env),
  };
  const commands: ReplCommand[] = [
    { name: "/help", usage: "/help", help: "this help", argument: "none", run: (c) => c.out(help()) },
    {
      name: "/status",
      usage: "/status",
      help: "model, mode, approval, context use, tokens",
      argument: "none",
      run: () => showStatus(repl),
    },
    {
      name: "/model",
      usage: "/model <name>",
      help: "send the next goals to model <name>",
      argument: "optional",
      async run(c) {
        if (c.arg === "") return c.out(`model ${repl.active.agent.model()} (usage: /model <name>)\n`);
        if (!MODEL_NAME.test(c.arg))
          return c.err(`scoot: "${c.arg}" is not a model name (one printable word)\n`);
        // Checked against the server's list; a server without one cannot say, and is believed.
        const checked = await repl.active.checkModel(c.arg);
        if (checked.known === false)
          return c.err(
            `scoot: the server does not list a model "${c.arg}"; still ${repl.active.agent.model()}. It lists: ${someNames(checked.listed)}\n`,
          );
        if (checked.known === "unchecked")
          c.err(
            `scoot: warning: could not check "${c.arg}" against the server's model list: ${checked.why}\n`,
          );
        repl.active.agent.setModel(c.arg);
        c.err(`model ${c.arg} for the next goals\n`);
      },
    },
    {
      name: "/clear",
      usage: "/clear",
      help: "start a new context in the same session file",
      argument: "none",
      run(c) {
        repl.active.agent.clear();
        repl.active.stats.contextTokens = 0;
        c.err(`context cleared; session ${repl.active.agent.sessionId} goes on in the same file\n`);
      },
    },
    {
      name: "/compact",
      usage: "/compact",
      help: "summarise the conversation so far to free context",
      argument: "none",
      run(c) {
        const r = repl.active.agent.compact();
        if (!r.ok) return c.err(`scoot: cannot compact: ${r.error}\n`);
        if (!r.value) return c.err("nothing to compact yet\n");
        c.err(
          `compacted ${r.value.removed} messages: ${r.value.beforeBytes} → ${r.value.afterBytes} bytes\n`,
        );
      },
    },
    {
      name: "/new",
      usage: "/new",
      help: "start a fresh session",
      argument: "none",
      run: () => switchTo(repl, undefined),
    },
    {
      name: "/sessions",
      usage: "/sessions",
      help: "this directory's sessions, newest first (number, id, modified, messages, first goal)",
      argument: "none",
      run: () => showSessions(repl),
    },
    {
      name: "/resume",
      usage: "/resume <n|id>",
      help: "continue session number n of /sessions, or session <id> (its history comes back)",
      argument: "required",
      run: (c) => switchTo(repl, c.arg),
    },
    {
      name: "/undo",
      usage: "/undo [--force]",
      help: "revert the file changes of the last goal that made any (not bash's)",
      argument: "optional",
      run(c) {
        if (c.arg !== "" && c.arg !== "--force") return c.err("usage: /undo [--force]\n");
        undoLastRun(undoIo, repl.active.paths, repl.active.agent.sessionId, cli.cwd, {
          force: c.arg === "--force",
          what: "/undo",
          guard: repl.active.agent.undoGuard(),
        });
      },
    },
    {
      name: "/diff",
      usage: "/diff",
      help: "the file changes of this session",
      argument: "none",
      run: () => showSessionDiff(undoIo, repl.active.paths, repl.active.agent.sessionId, cli.cwd),
    },
    { name: "/exit", usage: "/exit", help: "leave (or Ctrl-D)", argument: "none", run: () => "exit" },
    { name: "/quit", usage: "/quit", help: "leave", argument: "none", run: () => "exit" },
  ];
  const help = () =>
    `Type a goal and press Enter; goals in one session build on each other. Ctrl-C cancels the running goal\nor discards the line being typed; a pasted block of lines is one goal.\n${commandList(commands)}`;
  return commands;
}
