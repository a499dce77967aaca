/**
 * Keys on a terminal while the REPL is not at its prompt (docs/keyboard.md "Typing during a run").
 *
 * The terminal's input passes through one router. At the prompt it goes to the line editor
 * (readline) untouched. While a goal runs, nothing reaches the line editor: Ctrl-C and Esc
 * cancel the goal, an open approval question takes the next single key, and everything else
 * is typed ahead — echoed under the live view, and on Enter queued as the next goal. Keys
 * typed before a question appears therefore never answer it, and nothing typed during a run
 * is ever run without being shown.
 */
import type { Writable } from "node:stream";
import { PASTED_NEWLINE } from "./paste.js";

export const CTRL_C = "\x03";
export const ESC = "\x1b";
const CTRL_D = "\x04";
const CTRL_U = "\x15";
const BACKSPACES = new Set(["\x7f", "\b"]);
const ENTERS = new Set(["\r", "\n"]);
/** Goals that can wait in the queue; one more is refused with a note. */
export const QUEUED_GOALS_MAX = 8;
/** Characters a typed-ahead line may hold (a pasted book is not a goal typed ahead). */
export const TYPED_AHEAD_MAX_CHARS = 4000;

/**
 * The keys in one chunk of terminal input: escape sequences (arrows, function keys) stay
 * whole, every other character is a key of its own.
 */
export function splitKeys(chunk: string): string[] {
  const keys: string[] = [];
  let i = 0;
  while (i < chunk.length) {
    if (chunk[i] === ESC && i + 1 < chunk.length) {
      const csi = /^\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)/s.exec(chunk.slice(i));
      const seq = csi?.[0] ?? ESC;
      keys.push(seq);
      i += seq.length;
      continue;
    }
    const code = chunk.codePointAt(i)!;
    const ch = String.fromCodePoint(code);
    keys.push(ch);
    i += ch.length;
  }
  return keys;
}

/** A key that types a character (not a control or an escape sequence). */
function printable(key: string): boolean {
  if (key === PASTED_NEWLINE) return true;
  return key.length > 0 && !key.startsWith(ESC) && !/^[\u0000-\u001f\u007f-\u009f]$/.test(key);
}

export interface TypedAhead {
  /** Goals queued with Enter during the run, oldest first. */
  queued: string[];
  /** The line being typed (not yet Enter). */
  line: string;
}

export interface KeyRouterOptions {
  /** Where keys go at the prompt: the line editor's input. */
  lineEditor: Writable;
  /** Ctrl-C or Esc while a goal runs; `key` names which. */
  onCancel(key: "Ctrl-C" | "Esc"): void;
  /** The typed-ahead state changed: redraw its echo. */
  onTypedAhead(state: TypedAhead, note?: string): void;
}

export interface KeyRouter {
  /** Feed one chunk of terminal input (after the bracketed-paste filter). */
  feed(chunk: string): void;
  /** A goal starts: keys stop going to the line editor. */
  startRun(): void;
  /** The goal ended: keys go to the line editor again. Returns what was typed ahead. */
  endRun(): TypedAhead;
  /**
   * The next single key, for a question asked during a run; undefined when `signal` fires.
   * The first call opens the question: from then on every key is the question's (typed fast,
   * a reason arrives as one chunk) until `closeQuestion`. Keys from before it stay typed ahead.
   */
  nextKey(signal: AbortSignal): Promise<string | undefined>;
  /** The question is answered: keys are typed ahead again; unread keys of the question are dropped. */
  closeQuestion(): void;
  /** Whether a question is open (its prompt line waits, the cursor at its end). */
  readonly asking: boolean;
}

export function keyRouter(opts: KeyRouterOptions): KeyRouter {
  let running = false;
  let state: TypedAhead = { queued: [], line: "" };
  let waiter: ((key: string) => void) | undefined;
  /** Set while a question is open: its keys not yet read. */
  let questionKeys: string[] | undefined;

  const typed = (key: string) => {
    if (ENTERS.has(key)) {
      const goal = state.line.trim();
      state.line = "";
      if (goal === "") return opts.onTypedAhead(state);
      if (state.queued.length >= QUEUED_GOALS_MAX) {
        return opts.onTypedAhead(
          state,
          `not queued: ${QUEUED_GOALS_MAX} goals are already waiting (it was discarded)`,
        );
      }
      state.queued.push(goal);
      return opts.onTypedAhead(state);
    }
    if (BACKSPACES.has(key)) {
      state.line = [...state.line].slice(0, -1).join("");
      return opts.onTypedAhead(state);
    }
    if (key === CTRL_U) {
      state.line = "";
      return opts.onTypedAhead(state);
    }
    if (key === CTRL_D) return;
    if (!printable(key)) return;
    if (state.line.length + key.length > TYPED_AHEAD_MAX_CHARS) {
      return opts.onTypedAhead(state, `the line typed ahead is full (${TYPED_AHEAD_MAX_CHARS} characters)`);
    }
    state.line += key;
    opts.onTypedAhead(state);
  };

  const onKey = (key: string) => {
    if (key === CTRL_C) return opts.onCancel("Ctrl-C");
    if (questionKeys) {
      if (!waiter) return void questionKeys.push(key);
      const w = waiter;
      waiter = undefined;
      return w(key);
    }
    if (key === ESC) return opts.onCancel("Esc");
    typed(key);
  };

  return {
    get asking() {
      return questionKeys !== undefined;
    },
    feed(chunk) {
      if (!running) {
        opts.lineEditor.write(chunk);
        return;
      }
      for (const key of splitKeys(chunk)) onKey(key);
    },
    startRun() {
      running = true;
      state = { queued: [], line: "" };
    },
    endRun() {
      running = false;
      waiter = undefined;
      questionKeys = undefined;
      const ahead = state;
      state = { queued: [], line: "" };
      return ahead;
    },
    closeQuestion() {
      questionKeys = undefined;
      waiter = undefined;
    },
    nextKey(signal) {
      questionKeys ??= [];
      const ready = questionKeys.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise((resolve) => {
        if (signal.aborted) return resolve(undefined);
        const onAbort = () => {
          waiter = undefined;
          resolve(undefined);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        waiter = (key) => {
          signal.removeEventListener("abort", onAbort);
          resolve(key);
        };
      });
    },
  };
}
