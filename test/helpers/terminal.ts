/**
 * A real pseudo-terminal for end-to-end tests: the built CLI runs inside a detached tmux
 * session on a private server socket, keys are sent with `send-keys`, and the screen is read
 * back with `capture-pane` — what a person at the keyboard would see.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { CLI, cleanEnv } from "./cli.js";

export const hasTmux = spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0;

const WIDTH = 120;
const HEIGHT = 40;
/** Lines of scroll-back read with the visible screen. */
const HISTORY_LINES = 2000;
const POLL_MS = 50;

let counter = 0;

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface Terminal {
  /** Keys as tmux names them (`Enter`, `C-c`) or literal text with `{ literal: true }`. */
  keys(keys: string[], opts?: { literal?: boolean }): void;
  /** Text pasted the way a terminal pastes (bracketed, when the program asked for it). */
  paste(text: string): void;
  /** The screen and its scroll-back, as plain text. */
  screen(): string;
  /** The screen with its colour escapes (`capture-pane -e`). */
  screenWithEscapes(): string;
  waitFor(what: string | RegExp, timeoutMs?: number): Promise<string>;
  close(): void;
}

/** Starts `node dist/scoot.mjs <args>` in a fresh 120×40 terminal. */
export function openTerminal(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined> },
): Terminal {
  counter += 1;
  const socket = `scoot-test-${process.pid}-${counter}`;
  const tmux = (...a: string[]) => execFileSync("tmux", ["-L", socket, ...a], { encoding: "utf8" });
  const cmd = [process.execPath, CLI, ...args].map(quote).join(" ");
  // The shell stays after the CLI exits so its last screen (and exit code) can be read.
  const shell = `${cmd}; echo "[exit $?]"; sleep 600`;
  execFileSync(
    "tmux",
    [
      "-L",
      socket,
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-s",
      "t",
      "-x",
      String(WIDTH),
      "-y",
      String(HEIGHT),
      shell,
    ],
    { cwd: opts.cwd, env: cleanEnv({ TERM: "xterm-256color", ...opts.env }) },
  );
  const capture = (escapes: boolean) =>
    tmux("capture-pane", "-p", "-J", ...(escapes ? ["-e"] : []), "-S", `-${HISTORY_LINES}`, "-t", "t");
  return {
    keys(keys, o) {
      tmux("send-keys", "-t", "t", ...(o?.literal ? ["-l"] : []), ...keys);
    },
    paste(text) {
      tmux("set-buffer", "--", text);
      tmux("paste-buffer", "-p", "-d", "-t", "t");
    },
    screen: () => capture(false),
    screenWithEscapes: () => capture(true),
    async waitFor(what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = capture(false);
        if (typeof what === "string" ? text.includes(what) : what.test(text)) return text;
        if (Date.now() > deadline) throw new Error(`terminal never showed ${String(what)}; screen:\n${text}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
    close() {
      spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    },
  };
}
