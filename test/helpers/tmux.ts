/**
 * The built CLI in a real pseudo-terminal: a private tmux server (its own socket, no user
 * configuration) runs one command in a detached session; tests type keys into it and read
 * the screen. Every tmux call is asynchronous, so an in-process scripted server keeps
 * answering while a test waits. tmux is in `.ci/run`'s apt list.
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { CLI, cleanEnv } from "./cli.js";

const run = promisify(execFile);

/** How often the screen is read while waiting for text. */
const POLL_MS = 100;

export function tmuxAvailable(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export interface TmuxSession {
  /** Types text literally (no key names), without Enter. */
  type(text: string): Promise<void>;
  /** Types a line and presses Enter. */
  line(text: string): Promise<void>;
  /** Sends tmux key names (`C-c`, `Enter`). */
  keys(...names: string[]): Promise<void>;
  /** The whole pane, scrollback included, lines joined. */
  screen(): Promise<string>;
  /** Resolves with the screen once `pattern` matches text after `from` characters of it; throws after `ms`. */
  waitFor(pattern: RegExp, ms?: number, from?: number): Promise<string>;
  /** Ends the tmux server (and with it the command). */
  close(): Promise<void>;
}

let counter = 0;

/** Starts `scoot <args>` in a fresh tmux server; the pane stays open after it exits and shows its code. */
export async function startScootInTmux(
  args: string[],
  opts: { home: string; cwd: string; env?: Record<string, string | undefined> },
): Promise<TmuxSession> {
  counter += 1;
  const socket = `scoot-test-${process.pid}-${counter}`;
  const env = cleanEnv({ SCOOT_HOME: opts.home, TERM: "xterm-256color", ...opts.env });
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  // The pane keeps running after scoot exits so its last output and exit code can be read.
  const command = `${quoted}; echo "[scoot exited $?]"; sleep 600`;
  const tmux = (...a: string[]) => run("tmux", ["-L", socket, "-f", "/dev/null", ...a], { env });
  await tmux("new-session", "-d", "-s", "t", "-x", "200", "-y", "50", "-c", opts.cwd, command);
  const session: TmuxSession = {
    async type(text) {
      await tmux("send-keys", "-t", "t", "-l", text);
    },
    async line(text) {
      if (text) await session.type(text);
      await tmux("send-keys", "-t", "t", "Enter");
    },
    async keys(...names) {
      await tmux("send-keys", "-t", "t", ...names);
    },
    async screen() {
      const { stdout } = await tmux("capture-pane", "-p", "-J", "-S", "-5000", "-t", "t");
      return stdout;
    },
    async waitFor(pattern, ms = 15_000, from = 0) {
      const until = Date.now() + ms;
      let last = "";
      while (Date.now() < until) {
        last = await session.screen();
        if (pattern.test(last.slice(from))) return last;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      throw new Error(`the terminal never showed ${pattern} within ${ms} ms; it shows:\n${last}`);
    },
    async close() {
      await tmux("kill-server").catch(() => undefined);
    },
  };
  return session;
}
