/**
 * The built CLI in a real pseudo-terminal: a private tmux server (its own socket, no user
 * configuration) runs one command in a detached session; tests type keys into it and read the
 * screen back with `capture-pane` — what a person at the keyboard would see. Every tmux call
 * is asynchronous, so a scripted server in this process keeps answering while a test waits.
 * tmux is in `.ci/run`'s apt list.
 */
import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { CLI, cleanEnv, needsBuiltCli } from "./cli.js";

const run = promisify(execFile);

export const hasTmux = spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0;

const DEFAULT_WIDTH = 120;
const DEFAULT_HEIGHT = 40;
/** Lines of scroll-back read with the visible screen. */
const HISTORY_LINES = 5000;
/** How often the screen is read while waiting for text. */
const POLL_MS = 50;
/** How long `waitFor` waits by default; only a guard against a hung test. */
const DEFAULT_WAIT_MS = 20_000;

let counter = 0;

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface Terminal {
  /** Types text literally (no key names), without Enter. */
  type(text: string): Promise<void>;
  /** Types a line and presses Enter. */
  line(text: string): Promise<void>;
  /** Sends tmux key names (`C-c`, `Enter`, `Up`); other words are typed as they are. */
  keys(...names: string[]): Promise<void>;
  /** Text pasted the way a terminal pastes (bracketed, when the program asked for it). */
  paste(text: string): Promise<void>;
  /** The screen and its scroll-back, as plain text (wrapped lines joined). */
  screen(): Promise<string>;
  /** The same with its colour escapes (`capture-pane -e`). */
  screenWithEscapes(): Promise<string>;
  /**
   * The screen and its scroll-back as the terminal's rows, a line the terminal wrapped left on
   * the rows it took (trailing spaces dropped): what test/helpers/word-split.ts scans.
   */
  rows(): Promise<string[]>;
  /**
   * Resolves with the screen once `what` shows in it after its first `from` characters;
   * throws after `timeoutMs`.
   */
  waitFor(what: string | RegExp, timeoutMs?: number, from?: number): Promise<string>;
  /** Gives the terminal a new size, as a person resizing the window (the program gets SIGWINCH). */
  resize(width: number, height: number): Promise<void>;
  /** Ends the tmux server (and with it the command). */
  close(): Promise<void>;
}

export interface TerminalOptions {
  cwd: string;
  /** Becomes SCOOT_HOME. */
  home?: string;
  env?: Record<string, string | undefined>;
  width?: number;
  height?: number;
  /** A Node script to run instead of the built CLI (the args follow it): a fixture driving one part. */
  script?: string;
}

/**
 * Starts `node dist/scoot.cjs <args>` (or `node <script> <args>`) in a fresh terminal. The pane
 * stays open after the CLI exits and shows `[exit <code>]`, so its last screen and exit code can
 * be read.
 */
export async function openTerminal(args: string[], opts: TerminalOptions): Promise<Terminal> {
  needsBuiltCli();
  counter += 1;
  const socket = `scoot-test-${process.pid}-${counter}`;
  const env = cleanEnv({
    TERM: "xterm-256color",
    ...(opts.home ? { SCOOT_HOME: opts.home } : {}),
    ...opts.env,
  });
  const tmux = async (...a: string[]) =>
    (await run("tmux", ["-L", socket, "-f", "/dev/null", ...a], { env, cwd: opts.cwd })).stdout;
  const cmd = [process.execPath, opts.script ?? CLI, ...args].map(quote).join(" ");
  const shell = `${cmd}; echo "[exit $?]"; sleep 600`;
  await tmux(
    "new-session",
    "-d",
    "-s",
    "t",
    "-x",
    String(opts.width ?? DEFAULT_WIDTH),
    "-y",
    String(opts.height ?? DEFAULT_HEIGHT),
    "-c",
    opts.cwd,
    shell,
  );
  const capture = (escapes: boolean) =>
    tmux("capture-pane", "-p", "-J", ...(escapes ? ["-e"] : []), "-S", `-${HISTORY_LINES}`, "-t", "t");
  const term: Terminal = {
    async type(text) {
      await tmux("send-keys", "-t", "t", "-l", text);
    },
    async line(text) {
      if (text) await term.type(text);
      await tmux("send-keys", "-t", "t", "Enter");
    },
    async keys(...names) {
      await tmux("send-keys", "-t", "t", ...names);
    },
    async paste(text) {
      await tmux("set-buffer", "--", text);
      await tmux("paste-buffer", "-p", "-d", "-t", "t");
    },
    screen: () => capture(false),
    screenWithEscapes: () => capture(true),
    async rows() {
      const text = await tmux("capture-pane", "-p", "-S", `-${HISTORY_LINES}`, "-t", "t");
      return text.replace(/\n$/, "").split("\n");
    },
    async waitFor(what, timeoutMs = DEFAULT_WAIT_MS, from = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = await capture(false);
        const seen = text.slice(from);
        if (typeof what === "string" ? seen.includes(what) : what.test(seen)) return text;
        if (Date.now() > deadline)
          throw new Error(
            `the terminal never showed ${String(what)} within ${timeoutMs} ms; it shows:\n${text}`,
          );
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
    async resize(width, height) {
      await tmux("resize-window", "-t", "t", "-x", String(width), "-y", String(height));
    },
    async close() {
      await run("tmux", ["-L", socket, "kill-server"]).catch(() => undefined);
    },
  };
  return term;
}
