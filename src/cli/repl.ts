/**
 * The REPL: each line is a goal, run in one `repl-<ms>-<pid>` session (goals build on
 * each other). `/exit` or Ctrl-D leaves. Ctrl-C during a goal cancels that goal only;
 * at the prompt it reminds how to leave. Slash commands (README "Resuming a session"):
 * `/help`, `/new`, `/sessions`, `/resume <id>`. The answer streams to stdout as it arrives,
 * the thought to stderr (README "Streaming").
 */
import readline from "node:readline";
import { listSessions } from "../store/session.js";
import { readSessionMeta } from "../store/session-meta.js";
import type { Cli } from "./context.js";
import { EXIT } from "./io.js";
import { loadResumeTarget } from "./resume.js";
import { type CliAgent, openCliAgent } from "./run-common.js";
import { traceSummary } from "./trace.js";

const PROMPT = "scoot> ";
const EXIT_WORDS = new Set(["/exit", "/quit"]);
const COMMAND_LINE = /^\/(help|new|sessions|resume|exit|quit)(\s|$)/;
/** `/sessions` shows the newest this many. */
const SESSIONS_SHOWN = 20;
const PREVIEW_CHARS = 50;

export const REPL_HELP = `Type a goal and press Enter; goals in one session build on each other.
  /help           this help
  /new            start a fresh session
  /sessions       the newest sessions (id, modified, messages, project, first goal)
  /resume <id>    continue session <id> (its history comes back)
  /exit, /quit    leave (or Ctrl-D); Ctrl-C cancels the running goal
`;

function preview(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > PREVIEW_CHARS ? `${one.slice(0, PREVIEW_CHARS - 1)}…` : one;
}

export async function runRepl(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot repl: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const opened = await openCliAgent(cli, "repl", { answers: true, thoughts: true });
  if (!opened.ok) return opened.exitCode;
  let active: CliAgent = opened;
  const trace = opened.trace;
  const interactive = Boolean(process.stdin.isTTY);
  const rl = readline.createInterface({
    input: process.stdin,
    output: interactive ? process.stdout : undefined,
    terminal: interactive,
    prompt: PROMPT,
  });
  const banner = () =>
    `scoot REPL — session ${active.agent.sessionId}, policy ${active.agent.mode}. /help for commands, /exit or Ctrl-D to leave.\n`;
  if (interactive) cli.io.err(banner());
  let current: AbortController | undefined;
  rl.on("SIGINT", () => {
    if (current) {
      cli.io.err("\nscoot: cancelling this goal\n");
      current.abort(new Error("interrupted"));
    } else {
      cli.io.err("\n(type /exit or press Ctrl-D to leave)\n");
      rl.prompt();
    }
  });
  // Without a TTY, readline does not see Ctrl-C: cancel the goal from the process signal.
  const onSigint = () => {
    if (current) current.abort(new Error("interrupted"));
    else rl.close();
  };
  if (!interactive) process.on("SIGINT", onSigint);

  /** Switches to another session; on failure the current one stays. */
  const switchTo = async (resumeId: string | undefined): Promise<void> => {
    let target: Parameters<CliAgent["reopen"]>[0] = {};
    if (resumeId !== undefined) {
      if (resumeId === active.agent.sessionId) {
        cli.io.err(`scoot: already in session ${resumeId}\n`);
        return;
      }
      const loaded = loadResumeTarget(active.sessionsDir, resumeId);
      if (!loaded.ok) {
        cli.io.err(`scoot: ${loaded.error}\n`);
        return;
      }
      target = { resume: loaded.value };
    }
    const next = await active.reopen(target);
    if (!next.ok) {
      cli.io.err(`scoot: ${next.error}\n`);
      return;
    }
    await active.agent.close();
    active = next.value;
    cli.io.err(
      resumeId === undefined
        ? `new session ${active.agent.sessionId}\n`
        : `resumed session ${active.agent.sessionId}\n`,
    );
  };

  const showSessions = () => {
    const { sessions } = listSessions(active.sessionsDir);
    if (sessions.length === 0) {
      cli.io.err("no sessions yet\n");
      return;
    }
    for (const s of sessions.slice(0, SESSIONS_SHOWN)) {
      const mark = s.id === active.agent.sessionId ? "*" : " ";
      const project = readSessionMeta(active.sessionsDir, s.id)?.project_root ?? "-";
      cli.io.out(
        `${mark} ${s.id}\t${new Date(s.modified).toISOString()}\t${s.messages}\t${project}\t${preview(s.firstUser)}\n`,
      );
    }
  };

  /** A slash command; returns false for /exit. */
  const command = async (line: string): Promise<boolean> => {
    const [word, ...rest] = line.split(/\s+/);
    if (EXIT_WORDS.has(word!)) return false;
    if (word === "/help") cli.io.out(REPL_HELP);
    else if (word === "/new" && rest.length === 0) await switchTo(undefined);
    else if (word === "/sessions" && rest.length === 0) showSessions();
    else if (word === "/resume" && rest.length === 1) await switchTo(rest[0]);
    else if (word === "/resume") cli.io.err("usage: /resume <session-id> (see /sessions)\n");
    else cli.io.err(`scoot: ${word} takes no argument (see /help)\n`);
    return true;
  };

  const lines = rl[Symbol.asyncIterator]();
  if (interactive) rl.prompt();
  try {
    for (;;) {
      const next = await lines.next();
      if (next.done) break;
      const goal = next.value.trim();
      if (goal === "") {
        if (interactive) rl.prompt();
        continue;
      }
      // Only the command words are commands: "/tmp has what?" is a goal.
      if (COMMAND_LINE.test(goal)) {
        if (!(await command(goal))) break;
        if (interactive) rl.prompt();
        continue;
      }
      current = new AbortController();
      const result = await active.agent.run(goal, current.signal);
      current = undefined;
      active.finish(result);
      if (trace) cli.io.err(`${traceSummary(result)}\n`);
      if (result.status !== "final")
        cli.io.err(`scoot: ${result.status === "interrupted" ? "goal cancelled" : result.error}\n`);
      if (interactive) rl.prompt();
    }
  } finally {
    if (!interactive) process.off("SIGINT", onSigint);
    rl.close();
    await active.agent.close();
  }
  return EXIT.ok;
}
