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
import { PassThrough, type Readable } from "node:stream";
import type { Approver } from "../agent/approval.js";
import type { Ready } from "../agent/call-record.js";
import type { RunResult } from "../agent/loop.js";
import {
  type PlanReviewer,
  type PlanVerdict,
  planBinds,
  plansFirst,
  planThenRun,
} from "../agent/plan-review.js";
import { saveApprovalRule } from "../agent/save-rule.js";
import { showSessionDiff, undoLastRun } from "../agent/undo-report.js";
import { redact } from "../core/redact.js";
import { createStopControl, END_SIGNALS } from "../core/stop.js";
import { terminalText } from "../core/terminal-text.js";
import { loadResumeTarget } from "../store/resume-target.js";
import { projectRoot, sessionExists } from "../store/session-meta.js";
import { formatPlan } from "../tools/plan.js";
import { type Plan, planSha256 } from "../tools/plan-shape.js";
import { keyboardApprover } from "./approve-keyboard.js";
import { flagBool } from "./args.js";
import type { Cli } from "./context.js";
import { EXIT } from "./io.js";
import { someNames } from "./model-check.js";
import { type PlanReview, reviewPlan } from "./plan-review.js";
import { commandList, isCommandLine, type ReplCommand, runCommandLine } from "./repl/commands.js";
import { historyFile, loadHistory, REPL_HISTORY_MAX, saveHistory } from "./repl/history.js";
import { type KeyRouter, keyRouter, type TypedAhead } from "./repl/keys.js";
import { PASTE_OFF, PASTE_ON, PASTED_NEWLINE, pasteFilter, restoreNewlines } from "./repl/paste.js";
import { replPrompt } from "./repl/prompt.js";
import { replayConversation } from "./repl/replay.js";
import { rulesStatus } from "./rules-status.js";
import { type CliAgent, openCliAgent } from "./run-common.js";
import {
  formatListing,
  listingNote,
  SESSIONS_LIMIT,
  selectSessions,
  sessionNumbered,
} from "./session-listing.js";
import { traceSummary } from "./trace.js";
import { replUndoIo, useColor } from "./undo.js";
import { compactCount } from "./view/live.js";
import { charWidth, textWidth } from "./view/width.js";

/** A goal typed ahead is echoed cut to this many characters. */
const TYPED_AHEAD_SHOWN_CHARS = 70;
/** However narrow the terminal, a question's prompt line shows this much of a typed-ahead line. */
const MIN_ECHO_CHARS = 10;
/** A pseudo-terminal that does not say its size is taken to be this big. */
const DEFAULT_ROWS = 24;
const DEFAULT_COLUMNS = 80;
const PREVIEW_CHARS = 50;
/** Model names are short printable words. */
const MODEL_NAME = /^[\x21-\x7e]{1,200}$/;

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
  /** On a terminal: where keys go while a goal runs (docs/keyboard.md "Typing during a run"). */
  keys?: KeyRouter;
  /** Goals typed ahead during a run and queued with Enter; they run next, shown first. */
  queued: string[];
  /** Plan mode (`--plan`, `agent.default_mode = "plan"`, `/plan` alone): every goal is planned first. */
  planMode: boolean;
  /** The line typed during a goal a command ran (`/plan <goal>`), waiting for the next prompt. */
  typedLeft?: string;
  /** The open question's prompt line, above which the typed-ahead line shows. */
  questionPrompt?: string;
  /** The typed-ahead line's row is drawn above the question's prompt line. */
  echoRow?: boolean;
  /** The running goal was stopped with Esc: its queued goals go back into the input. */
  escaped?: boolean;
  /**
   * The signal that ends the REPL (SIGTERM, SIGHUP; docs/reliability.md "Signals"): the running
   * goal is stopped, nothing more starts, and the REPL exits 130.
   */
  leaving?: string;
}

export async function runRepl(cli: Cli, firstGoal?: string): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot repl: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const interactive = Boolean(process.stdin.isTTY);
  // The approver asks through the key router made below, once there is one.
  let replRef: Repl | undefined;
  const approver = interactive ? terminalApprover(cli, () => replRef) : undefined;
  const opened = await openCliAgent(cli, "repl", { answers: true, thoughts: true }, approver);
  if (!opened.ok) return opened.exitCode;
  const planMode = plansFirst(opened.config, { plan: flagBool(cli.args, "plan") });
  const repl: Repl = { cli, interactive, active: opened, queued: [], planMode };
  replRef = repl;
  const editor = openLineEditor(cli, repl, historyFile(opened.stateDir));
  const { rl } = editor;
  if (interactive) cli.io.err(banner(repl));
  showResumed(cli, repl.active);
  cancelOnCtrlC(repl, rl);
  const onSignal = (why: string) => {
    if (why !== "SIGINT") return leaveOnSignal(repl, rl, why);
    // Without a TTY, readline does not see Ctrl-C: cancel the goal from the process signal, each time.
    if (repl.current) cancelGoal(repl, "Ctrl-C");
    else rl.close();
  };
  const control = createStopControl({
    signals: interactive ? END_SIGNALS : ["SIGINT", ...END_SIGNALS],
    onFirst: onSignal,
    onAgain: onSignal,
  });
  const commands = replCommands(repl);
  let ended: "exit" | "eof" | "signal" = "exit";
  try {
    if (firstGoal !== undefined) {
      if (interactive) cli.io.err(`${replPrompt(repl.planMode)}${firstGoal}\n`);
      await (repl.planMode ? planGoal : runGoal)(repl, firstGoal, opened.trace);
    }
    ended = await readGoals(repl, rl, commands, opened.trace);
  } finally {
    control.dispose();
    // Ctrl-D leaves the cursor on the prompt line: the exit line gets its own.
    if (interactive && ended === "eof") cli.io.err("\n");
    closeLineEditor(editor, interactive);
    const id = repl.active.agent.sessionId;
    await repl.active.agent.close();
    // After a hang-up there is no terminal left to say it on.
    if (repl.leaving !== "SIGHUP" && sessionExists(repl.active.sessionsDir, id))
      cli.io.err(`resume with: scoot --resume ${id}\n`);
  }
  return repl.leaving ? EXIT.interrupted : EXIT.ok;
}

/**
 * SIGTERM or SIGHUP: the running goal is stopped (its command's process group ends, its run
 * gets its closing record) and the REPL leaves once it has. After a hang-up the terminal is gone:
 * the goal stops without a line about it and nothing is drawn again.
 */
function leaveOnSignal(repl: Repl, rl: readline.Interface, why: string): void {
  if (repl.leaving) return;
  repl.leaving = why;
  const current = repl.current;
  if (current && !current.signal.aborted) {
    if (why === "SIGHUP") {
      // Mutes the rest of the goal's output and ends the spinner; its few writes to the gone
      // terminal are dropped (core/stop.ts).
      repl.active.cancel();
      current.abort(new Error("interrupted"));
    } else cancelGoal(repl, why);
  }
  rl.close();
}

/** The terminal's size now (a pseudo-terminal without one reads as 80×24). */
function terminalSize(): { rows: number; columns: number } {
  return { rows: process.stderr.rows || DEFAULT_ROWS, columns: process.stderr.columns || DEFAULT_COLUMNS };
}

/**
 * Approval questions at the keyboard: single keys through the REPL's key router, the typed-ahead
 * echo hidden while the question is up (it would land on the question's line).
 */
function terminalApprover(cli: Cli, current: () => Repl | undefined): Approver {
  const inner = keyboardApprover({
    key: (signal, kind) => current()?.keys?.nextKey(signal, kind) ?? Promise.resolve(undefined),
    promptShown: (text) => questionPromptShown(current(), text),
    write: (text) => process.stderr.write(text),
    color: useColor(process.stderr, cli.env),
    size: terminalSize,
    offerRule: (call) => ruleOffer(cli, current(), call),
  });
  return {
    async ask(call, signal) {
      // The question writes to the terminal itself: the live view's block steps aside meanwhile.
      const screen = current()?.active.screen;
      screen?.suspend();
      try {
        return await inner.ask(call, signal);
      } finally {
        current()?.keys?.closeQuestion();
        screen?.resume();
      }
    },
  };
}

/**
 * After an "always": the offer to keep it as a rule for this project in the home's config
 * (docs/safety.md "Rules"), from the next session on. Only a call with a scope can be kept.
 */
function ruleOffer(
  cli: Cli,
  repl: Repl | undefined,
  call: Ready,
): { question: string; save(): string } | undefined {
  if (!repl || call.scope === undefined) return undefined;
  const project = projectRoot(cli.cwd);
  const rule = { tool: call.action, match: call.scope, decision: "allow" as const, project };
  return {
    question: `  keep it as a rule for this project (${terminalText(redact(call.action))} ${terminalText(redact(JSON.stringify(call.scope)))}, from the next session)?`,
    save() {
      const saved = saveApprovalRule(repl.active.paths.configDir, rule);
      if (!saved.ok) return `  scoot: ${terminalText(redact(saved.error))}`;
      return `  saved as ${saved.value.name} in ${saved.value.file}`;
    },
  };
}

/**
 * A question's prompt line was drawn: the typed-ahead line shows on a row of its own just above
 * it while the question is open (docs/keyboard.md "Questions answered on purpose").
 */
function questionPromptShown(repl: Repl | undefined, text: string): void {
  if (!repl) return;
  repl.questionPrompt = text;
  repl.echoRow = false;
  const ahead = repl.keys?.typedAhead;
  if (ahead && ahead.line !== "") questionLineEcho(repl, ahead);
}

/** What the row above an open question says while a line is typed ahead. */
const OPEN_LINE_HINT = "(Enter queues it · Ctrl-U clears it)";

/**
 * While a question is open, what is typed ahead shows on the row above its prompt line: the
 * line's end (where the cursor is) and what to do with it; a goal queued meanwhile is printed
 * above that. The prompt line stays last, the cursor at its end.
 */
function questionLineEcho(repl: Repl, state: TypedAhead, note?: string): void {
  const prompt = repl.questionPrompt ?? "";
  const { columns } = terminalSize();
  // Back to the start of the prompt line; up to the echo row when one is shown.
  let out = `\r\u001b[2K${repl.echoRow ? "\u001b[1A\r\u001b[2K" : ""}`;
  if (note) out += `  ${note}\n`;
  repl.echoRow = state.line !== "";
  if (repl.echoRow) out += `${echoRow(state.line, `  ${OPEN_LINE_HINT}`, columns)}\n`;
  process.stderr.write(`${out}${prompt}`);
}

/** A typed-ahead line's row, `  › <its end>▏<after>`, within the terminal's width. */
function echoRow(line: string, after: string, columns: number): string {
  const room = Math.max(MIN_ECHO_CHARS, columns - 1 - textWidth(`  › ▏${after}`));
  return `  › ${lineEnd(line, room)}▏${after}`;
}

/** The end of a line typed ahead, cut from the front to `room` columns (the cursor's end stays in view). */
function lineEnd(line: string, room: number): string {
  const chars = [...terminalText(redact(line))];
  if (textWidth(chars.join("")) <= room) return chars.join("");
  let kept = "";
  let width = 1;
  for (let i = chars.length - 1; i >= 0; i--) {
    const w = charWidth(chars[i]!);
    if (width + w > room) break;
    kept = chars[i] + kept;
    width += w;
  }
  return `…${kept}`;
}

/** The echo of what was typed during the run, under the live view. */
function typedAheadLines(state: TypedAhead, note?: string): string[] | undefined {
  const lines = state.queued.map((g) => `  (queued) ${preview(g, TYPED_AHEAD_SHOWN_CHARS)}`);
  // The line's end, where the cursor is, stays in view however long it grows.
  if (state.line !== "") lines.push(echoRow(state.line, " (Enter queues it)", terminalSize().columns));
  if (note) lines.push(`  ${note}`);
  return lines.length > 0 ? lines : undefined;
}

interface LineEditor {
  rl: readline.Interface;
  /** The bracketed-paste filter stdin passes through on a terminal. */
  filter?: ReturnType<typeof pasteFilter>;
}

/**
 * The line editor: on a terminal, input passes the bracketed-paste filter and then the key
 * router, which hands it to readline only at the prompt; the history persists.
 */
function openLineEditor(cli: Cli, repl: Repl, history: string): LineEditor {
  const { interactive } = repl;
  const warn = (w: string) => cli.io.err(`scoot: warning: ${w}\n`);
  let input: Readable = process.stdin;
  const filter = interactive ? pasteFilter() : undefined;
  if (filter) {
    process.stdin.pipe(filter);
    const lineInput = new PassThrough();
    repl.keys = keyRouter({
      lineEditor: lineInput,
      onCancel: (key) => cancelGoal(repl, key),
      onTypedAhead: (state, note) =>
        repl.keys?.asking
          ? questionLineEcho(repl, state, note)
          : repl.active.screen.footer(
              typedAheadLines(state, note?.startsWith("(queued)") ? undefined : note),
            ),
    });
    const keys = repl.keys;
    filter.on("data", (chunk: Buffer | string) => keys.feed(chunk.toString()));
    input = lineInput;
    process.stdin.setRawMode(true);
    process.stdout.write(PASTE_ON);
  }
  const rl = readline.createInterface({
    input,
    output: interactive ? process.stdout : undefined,
    terminal: interactive,
    prompt: replPrompt(repl.planMode),
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

function banner(repl: Repl): string {
  const active = repl.active;
  const { agent } = active;
  const approval =
    active.approval === "ask"
      ? "approval ask (one key: y/a/n for each effect)"
      : "approval never (nothing waits)";
  return [
    `scoot REPL · session ${agent.sessionId} · model ${agent.model()}`,
    `policy ${agent.mode} · ${approval}${repl.planMode ? " · plan mode: each goal is planned first (/plan toggles)" : ""}`,
    `instructions: ${active.instructions ?? "none"}`,
    "/help for commands · Esc or Ctrl-C cancels a goal · /exit or Ctrl-D leaves",
    "",
  ].join("\n");
}

/** The newest goals and answers of a resumed session, before the prompt. */
function showResumed(cli: Cli, agent: CliAgent): void {
  if (agent.resumed) cli.io.err(replayConversation(agent.resumed, cli.io.wrapWidth?.("err")));
}

/**
 * Cancels the running goal (Ctrl-C, Esc; docs/keyboard.md "Cancelling"): nothing more of it is
 * printed, the spinner goes, and one line says what was stopped.
 */
function cancelGoal(repl: Repl, key: string): void {
  const current = repl.current;
  if (!current || current.signal.aborted) return;
  const what = repl.active.cancel();
  if (key === "Esc") repl.escaped = true;
  repl.active.screen.footer(undefined);
  // A question's prompt line is still open: the cancel line goes below it.
  repl.active.screen.err(`${repl.keys?.asking ? "\n" : ""}scoot: cancelled (${key}): stopped ${what}\n`);
  current.abort(new Error("interrupted"));
}

/** Ctrl-C at the prompt discards the half-typed line (during a goal the key router takes it). */
function cancelOnCtrlC(repl: Repl, rl: readline.Interface): void {
  rl.on("SIGINT", () => {
    if (repl.current) return cancelGoal(repl, "Ctrl-C");
    // The half-typed line is discarded, not kept under the cursor for the next goal.
    const editor = rl as unknown as { line: string; cursor: number };
    const had = editor.line.length > 0;
    editor.line = "";
    editor.cursor = 0;
    repl.cli.io.err(had ? "^C\n" : "\n(type /exit or press Ctrl-D to leave)\n");
    rl.prompt();
  });
}

/**
 * Each line until /exit or the end of input: a slash command, or a goal for the active session.
 * Goals queued during a run go first, each shown on a prompt line of its own before it runs.
 */
async function readGoals(
  repl: Repl,
  rl: readline.Interface,
  commands: ReplCommand[],
  trace: boolean | undefined,
): Promise<"exit" | "eof" | "signal"> {
  const { cli, interactive } = repl;
  const lines = rl[Symbol.asyncIterator]();
  /** Back at the prompt: keys held since the last line was sent are the line editor's again. */
  const prompt = () => {
    repl.keys?.release();
    rl.prompt();
  };
  // A signal ends the REPL (leaveOnSignal): no prompt, no queued goal after it.
  if (repl.leaving) return "signal";
  if (interactive) prompt();
  for (;;) {
    if (repl.leaving) return "signal";
    const queued = repl.queued.shift();
    if (queued !== undefined) cli.io.err(`${replPrompt(repl.planMode)}${queued}   (queued)\n`);
    const next = queued !== undefined ? { done: false, value: queued } : await lines.next();
    if (repl.leaving) return "signal";
    if (next.done) return "eof";
    const goal = restoreNewlines(next.value).trim();
    if (goal === "") {
      if (interactive) prompt();
      continue;
    }
    if (isCommandLine(goal)) {
      const outcome = await runCommandLine(goal, commands, cli.io);
      if (outcome === "exit") return "exit";
      if (repl.leaving) return "signal";
      rl.setPrompt(replPrompt(repl.planMode));
      const typed = repl.typedLeft;
      repl.typedLeft = undefined;
      if (interactive && repl.queued.length === 0) {
        prompt();
        if (typed) rl.write(typed);
      }
      continue;
    }
    const typed = await (repl.planMode ? planGoal : runGoal)(repl, goal, trace);
    if (repl.leaving) return "signal";
    if (interactive && repl.queued.length === 0) {
      prompt();
      // A line typed during the run but not sent waits on the prompt, to be edited or sent.
      if (typed) rl.write(typed);
    }
  }
}

/**
 * One goal in the active session; Ctrl-C or Esc cancels it through `repl.current`. Returns
 * the line typed during the run and not yet sent; goals queued with Enter join `repl.queued`.
 */
function runGoal(repl: Repl, goal: string, trace: boolean | undefined): Promise<string | undefined> {
  return duringGoal(repl, async (signal) => {
    showResult(repl, await repl.active.agent.run(goal, signal), trace);
  });
}

/**
 * The keys and the typed-ahead echo while `body` runs one goal (a planned goal: its planning
 * run, the review and the run of the plan); returns the line typed ahead and not yet sent.
 */
async function duringGoal(
  repl: Repl,
  body: (signal: AbortSignal) => Promise<void>,
): Promise<string | undefined> {
  repl.current = new AbortController();
  repl.keys?.startRun();
  let ahead: TypedAhead | undefined;
  try {
    await body(repl.current.signal);
  } finally {
    repl.current = undefined;
    ahead = repl.keys?.endRun();
    repl.active.screen.footer(undefined);
  }
  if (repl.escaped) {
    // Esc stops the goal and what was queued behind it: the queued goals come back into the
    // input, with the line being typed, to be edited or sent (docs/keyboard.md "Cancelling").
    repl.escaped = false;
    const back = [...(ahead?.queued ?? []), ...(ahead?.line ? [ahead.line] : [])];
    return back.length > 0 ? back.join(PASTED_NEWLINE) : undefined;
  }
  if (ahead) repl.queued.push(...ahead.queued);
  return ahead?.line || undefined;
}

/** A run's end: its usage line, and a failure's line before it (a cancel already said what it stopped). */
function showResult(repl: Repl, result: RunResult, trace: boolean | undefined): void {
  const failed = result.status !== "final" && result.status !== "interrupted" && result.status !== "plan";
  repl.active.finish(result, failed ? `scoot: ${result.error}\n` : undefined);
  if (trace) repl.cli.io.err(`${traceSummary(result)}\n`);
}

/**
 * A goal planned first (docs/keyboard.md "Plan mode"): a planning run in readonly, then the
 * plan is shown and one key decides — `y` runs it (the plan beside the goal, the checklist in
 * the live view), `n` drops it, `e` sends the person's feedback for a new plan, shown again.
 * Without a terminal nobody can approve it: the plan is printed and nothing runs.
 */
function planGoal(repl: Repl, goal: string, trace: boolean | undefined): Promise<string | undefined> {
  return duringGoal(repl, async (signal) => {
    const { agent } = repl.active;
    // Without a terminal nobody can approve a plan: it is printed, and nothing runs.
    const reviewer: PlanReviewer =
      repl.interactive && repl.keys
        ? { review: async (plan, sig) => fromKeyboard(await askPlan(repl, plan, sig)) }
        : {
            review: async (plan) => {
              repl.active.screen.out(formatPlan(plan));
              repl.cli.io.err("scoot: the plan is not run: no terminal to approve it on\n");
              return { kind: "drop", why: "nobody can approve it here (no terminal)" };
            },
          };
    const ended = await planThenRun({
      goal,
      via: "repl",
      binds: planBinds(repl.active.config),
      reviewer,
      signal,
      run: (request, how) => agent.run(request, signal, how),
      planReviewed: (plan, outcome) => agent.planReviewed(plan, "repl", outcome),
      onResult: (r) => showResult(repl, r, trace),
    });
    if (ended.kind === "unrecorded")
      repl.cli.io.err(`scoot: ${ended.error}; nothing more of this goal runs\n`);
  });
}

/** The keyboard's answer as a plan verdict. */
function fromKeyboard(review: PlanReview): PlanVerdict {
  if (review.kind === "drop") return { kind: "drop", why: "the user dropped it" };
  return review;
}

async function askPlan(repl: Repl, plan: Plan, signal: AbortSignal): Promise<PlanReview> {
  const { screen } = repl.active;
  screen.suspend();
  try {
    return await reviewPlan(
      {
        key: (sig, kind) => repl.keys?.nextKey(sig, kind) ?? Promise.resolve(undefined),
        promptShown: (text) => questionPromptShown(repl, text),
        write: (text) => process.stderr.write(text),
        color: useColor(process.stderr, repl.cli.env),
        size: terminalSize,
      },
      plan,
      planSha256(plan),
      signal,
    );
  } finally {
    repl.keys?.closeQuestion();
    screen.resume();
  }
}

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
    cli.io.out(
      formatListing(listing, {
        now: Date.now(),
        active: active.agent.sessionId,
        width: cli.io.wrapWidth?.("out"),
      }),
    );
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
      `plan      ${repl.planMode ? "on: each goal is planned first" : "off"} · binding ${repl.active.config.agent.plan_binding}`,
      `rules     ${rulesStatus(repl.active.config.tools.rules, repl.active.paths.configDir, repl.cli.env, repl.cli.cwd).join("\n          ") || "none"}`,
      `context   ${context}, ${agent.historyBytes()} bytes kept`,
      `instructions  ${agent.instructions()}`,
      `tokens    ${u.total_tokens} (${u.prompt_tokens} in, ${u.completion_tokens} out) over ${stats.goals} goal${stats.goals === 1 ? "" : "s"}`,
      "",
    ].join("\n"),
  );
}

/** The slash commands; each acts on the session active when it runs. */
function replCommands(repl: Repl): ReplCommand[] {
  const { cli } = repl;
  const undoIo = replUndoIo(cli);
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
        const undone = undoLastRun(undoIo, repl.active.paths, repl.active.agent.sessionId, cli.cwd, {
          force: c.arg === "--force",
          what: "/undo",
          guard: repl.active.agent.undoGuard(),
        });
        // The next goal's request names the files put back (docs/sessions.md "What the model is told").
        const told = repl.active.agent.noteUndo(undone);
        if (!told.ok) c.err(`scoot: warning: ${told.error}\n`);
      },
    },
    {
      name: "/diff",
      usage: "/diff",
      help: "the file changes of this session",
      argument: "none",
      run: () => showSessionDiff(undoIo, repl.active.paths, repl.active.agent.sessionId, cli.cwd),
    },
    {
      name: "/plan",
      usage: "/plan [goal]",
      help: "plan <goal> first (y runs it, n drops it, e asks for a new one); alone: plan mode on/off",
      argument: "optional",
      async run(c) {
        if (c.arg === "") {
          repl.planMode = !repl.planMode;
          return c.err(
            repl.planMode
              ? "plan mode on: each goal is planned in read-only first, and runs only once you approve the plan\n"
              : "plan mode off: goals run at once\n",
          );
        }
        repl.typedLeft = await planGoal(repl, c.arg, repl.active.trace);
      },
    },
    { name: "/exit", usage: "/exit", help: "leave (or Ctrl-D)", argument: "none", run: () => "exit" },
    { name: "/quit", usage: "/quit", help: "leave", argument: "none", run: () => "exit" },
  ];
  const help = () =>
    `Type a goal and press Enter; goals in one session build on each other. Ctrl-C cancels the running goal\nor discards the line being typed; a pasted block of lines is one goal.\n${commandList(commands)}`;
  return commands;
}
