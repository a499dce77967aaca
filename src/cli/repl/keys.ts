/**
 * Keys on a terminal while the REPL is not at its prompt (docs/keyboard.md "Typing during a run").
 *
 * The terminal's input passes through one router. At the prompt it goes to the line editor
 * (readline) untouched. While a goal runs, nothing reaches the line editor: Ctrl-C and Esc
 * cancel the goal, and everything else is typed ahead — echoed under the live view, and on
 * Enter queued as the next goal. An open question is answered only on purpose
 * (docs/keyboard.md "Questions answered on purpose"): it takes a key only when no line is
 * being typed ahead, the key came alone (a paste, or several keys in one read, is typing) and
 * not as part of a burst of typing that began before the question was drawn. Every other key
 * keeps going into the typed-ahead line, which the question's prompt line shows; `yes`⏎ or
 * `no`⏎ typed there answers the question and is never queued as a goal. So keys typed for the
 * next goal never answer a question, and nothing typed during a run is run without being shown.
 */
import type { Writable } from "node:stream";
import { PASTE_BEGIN, PASTE_END, PASTED_NEWLINE } from "./paste.js";

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
 * Keys closer together than this are one burst of typing (8 keys a second is 125 ms apart): a
 * burst that began before a question was drawn goes on into the typed-ahead line.
 */
export const BURST_GAP_MS = 500;
/** A typed-ahead line that answers an open question on Enter instead of being queued. */
const ANSWER_WORDS: Readonly<Record<string, string>> = {
  y: "y",
  yes: "y",
  a: "a",
  always: "a",
  n: "n",
  no: "n",
};
/** After a one-key answer, the rest of its word (`y` then `es`) is not typed ahead. */
const ANSWER_TAILS: Readonly<Record<string, string>> = { y: "es", a: "lways", n: "o" };

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
  /** The typed-ahead state changed: redraw its echo (on the question's prompt line while one is open). */
  onTypedAhead(state: TypedAhead, note?: string): void;
  /** The clock (tests pass their own). */
  now?: () => number;
}

/**
 * What a question reads: `answer`, a key that decides (y/a/n, the rule offer, the pager), taken
 * only on purpose; `text`, a line the person types for the question (a refusal's reason, plan
 * feedback), which may be typed fast or pasted.
 */
export type KeyKind = "answer" | "text";

export interface KeyRouter {
  /** Feed one chunk of terminal input (after the bracketed-paste filter). */
  feed(chunk: string): void;
  /** A goal starts: keys stop going to the line editor. */
  startRun(): void;
  /** The goal ended: keys go to the line editor again. Returns what was typed ahead. */
  endRun(): TypedAhead;
  /**
   * The next key for a question asked during a run; undefined when `signal` fires. The first
   * call opens the question: from then on keys are the question's when they are given on purpose
   * (see the module comment) until `closeQuestion`. Keys from before it stay typed ahead.
   */
  nextKey(signal: AbortSignal, kind?: KeyKind): Promise<string | undefined>;
  /** The question is answered: keys are typed ahead again; unread keys of the question are dropped. */
  closeQuestion(): void;
  /**
   * The REPL is back at its prompt without running a goal (a command, an empty line): keys held
   * since the line was sent go to the line editor after all.
   */
  release(): void;
  /** Whether a question is open (its prompt line waits, the cursor at its end). */
  readonly asking: boolean;
  /** What is typed ahead now. */
  readonly typedAhead: TypedAhead;
}

/** The keys of a chunk, each with whether it came inside a bracketed paste. */
function keysOf(chunk: string, pasting: { on: boolean }): { key: string; pasted: boolean }[] {
  const out: { key: string; pasted: boolean }[] = [];
  let at = 0;
  for (;;) {
    const next = chunk.indexOf(pasting.on ? PASTE_END : PASTE_BEGIN, at);
    const piece = next < 0 ? chunk.slice(at) : chunk.slice(at, next);
    for (const key of splitKeys(piece)) out.push({ key, pasted: pasting.on });
    if (next < 0) return out;
    pasting.on = !pasting.on;
    at = next + 1;
  }
}

/** A chunk for the line editor: the paste marks, which only the router reads, taken out. */
function withoutMarks(chunk: string): string {
  return chunk.split(PASTE_BEGIN).join("").split(PASTE_END).join("");
}

export function keyRouter(opts: KeyRouterOptions): KeyRouter {
  const now = opts.now ?? Date.now;
  let running = false;
  let state: TypedAhead = { queued: [], line: "" };
  let waiter: { resolve: (key: string) => void; kind: KeyKind } | undefined;
  /** Set while a question is open: its keys not yet read. */
  let questionKeys: string[] | undefined;
  /** What the question reads next (its last `nextKey`). */
  let reading: KeyKind = "answer";
  /** When the last key came (a one-key answer's word follows it at once). */
  let lastKeyAt = Number.NEGATIVE_INFINITY;
  /**
   * When the last key went into the typed-ahead line: a burst of typing under way as a question
   * opens goes on typing. A key that answered a question is not typing.
   */
  let lastTypedAt = Number.NEGATIVE_INFINITY;
  let burst = false;
  /** After a one-key answer: the rest of its word, not typed ahead if it follows at once. */
  let tail: { rest: string; eaten: string; enter: boolean } | undefined;
  const pasting = { on: false };
  /**
   * Keys that came after a line was sent at the prompt and before its goal started (or the
   * prompt came back): held, so typing on at once is never lost between the two.
   */
  let held: string | undefined;

  const toQuestion = (key: string) => {
    if (!questionKeys) return;
    if (!waiter) return void questionKeys.push(key);
    const w = waiter;
    waiter = undefined;
    w.resolve(key);
  };

  const typed = (key: string) => {
    if (ENTERS.has(key)) {
      const goal = state.line.trim();
      // `yes`⏎ at an open question answers it: it is not a goal.
      const answer = questionKeys && reading === "answer" ? ANSWER_WORDS[goal.toLowerCase()] : undefined;
      state.line = "";
      if (answer !== undefined) {
        opts.onTypedAhead(state);
        return toQuestion(answer);
      }
      if (goal === "") return opts.onTypedAhead(state);
      if (state.queued.length >= QUEUED_GOALS_MAX) {
        return opts.onTypedAhead(
          state,
          `not queued: ${QUEUED_GOALS_MAX} goals are already waiting (it was discarded)`,
        );
      }
      state.queued.push(goal);
      return opts.onTypedAhead(state, `(queued) ${goal}`);
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

  /** The rest of a one-key answer's word: eaten while it matches, Enter ends it. */
  const eatTail = (key: string, gap: number): boolean => {
    const t = tail;
    if (!t) return false;
    tail = undefined;
    const flush = () => {
      // Not the word after all: what was held back is typed (or read) as it came.
      for (const k of t.eaten) {
        if (!running) opts.lineEditor.write(k);
        else if (t.enter) toQuestion(k);
        else typed(k);
      }
    };
    if (gap >= BURST_GAP_MS) {
      flush();
      return false;
    }
    if (ENTERS.has(key)) {
      // `no`⏎: the Enter ends the question's reason line, empty; `yes`⏎: nothing more to do.
      if (t.enter) toQuestion(key);
      return true;
    }
    if (t.rest.startsWith(key)) {
      tail = { ...t, rest: t.rest.slice(key.length), eaten: t.eaten + key };
      return true;
    }
    flush();
    return false;
  };

  const onKey = (key: string, alone: boolean, pasted: boolean) => {
    if (key === CTRL_C) return opts.onCancel("Ctrl-C");
    const at = now();
    const gap = at - lastKeyAt;
    lastKeyAt = at;
    if (eatTail(key, gap)) return;
    const typing = (k: string) => {
      lastTypedAt = at;
      typed(k);
    };
    if (!questionKeys) {
      if (key === ESC) return opts.onCancel("Esc");
      return typing(key);
    }
    if (burst && at - lastTypedAt < BURST_GAP_MS) return typing(key);
    burst = false;
    // Esc is never typed by accident: it answers (refuses) the question.
    if (key !== ESC && reading === "answer" && (pasted || !alone || state.line !== "")) return typing(key);
    if (reading === "answer") {
      const word = ANSWER_TAILS[key.toLowerCase()];
      // Only the question's answer has a word: `n`'s `o` goes to the reason line it opens.
      if (word !== undefined) tail = { rest: word, eaten: "", enter: key.toLowerCase() === "n" };
    }
    toQuestion(key);
  };

  return {
    get asking() {
      return questionKeys !== undefined;
    },
    get typedAhead() {
      return state;
    },
    feed(chunk) {
      if (!running) {
        // A one-key answer can end the run at once: the rest of its word still is not a goal.
        let rest = withoutMarks(chunk);
        while (tail && rest !== "") {
          const [key] = splitKeys(rest);
          const at = now();
          const gap = at - lastKeyAt;
          if (!eatTail(key!, gap)) break;
          lastKeyAt = at;
          rest = rest.slice(key!.length);
        }
        if (held !== undefined) {
          held += rest;
          return;
        }
        // The line is sent with its Enter; what follows waits for the goal to start.
        const enter = rest.search(/[\r\n]/);
        if (enter < 0) {
          if (rest !== "") opts.lineEditor.write(rest);
          return;
        }
        opts.lineEditor.write(rest.slice(0, enter + 1));
        held = rest.slice(enter + 1);
        return;
      }
      const keys = keysOf(chunk, pasting);
      for (const { key, pasted } of keys) onKey(key, keys.length === 1, pasted);
    },
    startRun() {
      running = true;
      state = { queued: [], line: "" };
      tail = undefined;
      // What was typed on after the goal was sent is the first of the typed-ahead line.
      const early = held ?? "";
      held = undefined;
      // (Ctrl-C or Esc among them cancels the goal just started.)
      for (const key of splitKeys(early)) onKey(key, false, false);
    },
    release() {
      const early = held;
      held = undefined;
      if (early) opts.lineEditor.write(early);
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
      reading = "answer";
      // The echo goes back under the live view.
      opts.onTypedAhead(state);
    },
    nextKey(signal, kind = "answer") {
      if (!questionKeys) {
        questionKeys = [];
        // Typing under way as the question is drawn goes on into the line.
        burst = now() - lastTypedAt < BURST_GAP_MS;
      }
      reading = kind;
      const ready = questionKeys.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise((resolve) => {
        if (signal.aborted) return resolve(undefined);
        const onAbort = () => {
          waiter = undefined;
          resolve(undefined);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        waiter = {
          kind,
          resolve: (key) => {
            signal.removeEventListener("abort", onAbort);
            resolve(key);
          },
        };
      });
    },
  };
}
