/**
 * Follows one step while it streams (docs/context.md "Streaming"): an incremental reader of the
 * step's JSON object that hands on the thought as it arrives and, once the step is known to
 * be a `final` answer, the answer text itself, decoded (escapes may be split anywhere
 * between chunks).
 *
 * The answer is handed on only when what has arrived so far can still be a valid final
 * step: the object's `thought` is a complete string, `action` is exactly "final", no key
 * repeats, and the answer holds more than white space. At the end of the turn `settle`
 * compares what was handed on with the validated step: it completes a prefix, or withdraws
 * the text (the step was invalid, or the stream failed) so the caller can say so.
 */

import { FINAL_ACTION } from "../tools/final.js";
import type { Listener } from "./events.js";

export interface StreamFollowerEvents {
  thought(text: string): void;
  answer(text: string): void;
  /** Text already handed on does not stand: the step was invalid or the call failed. */
  withdrawn(reason: string): void;
}

type Frame =
  /** Before the object's opening brace (a code fence or prose may come first). */
  | { kind: "seek" }
  /** Inside the top-level object, expecting a key, ':' , a value, ',' or '}'. */
  | { kind: "object"; expect: "key" | "colon" | "value" | "comma" }
  /** A string at the top level of the object (a key or a value). */
  | { kind: "string"; role: "key" | "value" }
  /** A nested value (object, array, number, literal) being skipped. */
  | { kind: "skip"; depth: number; inString: boolean; escaped: boolean }
  | { kind: "done" };

const HEX = /^[0-9a-fA-F]{4}$/;
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

export class StepStreamReader {
  private frame: Frame = { kind: "seek" };
  private key = "";
  /** Decoded text of the string being read. */
  private current = "";
  /**
   * What this piece added to it, joined once (settleParts): a string grown a character at a
   * time costs memory per character, and reading it per piece is quadratic in a long reply.
   */
  private parts: string[] = [];
  /** Answer text decoded but not handed on yet, and whether any of the answer is more than white space. */
  private answerFresh = "";
  private answerHasText = false;
  private escape: string | undefined;
  /** A high surrogate waiting for its pair. */
  private highSurrogate: string | undefined;
  private readonly seen = new Set<string>();
  private thoughtDone = false;
  /** The thought once its string closed. */
  private thought = "";
  private action: string | undefined;
  private answer = "";
  private answerComplete = false;
  private answerIsString = false;
  private broken = false;
  private handedOn = "";

  constructor(private readonly on: StreamFollowerEvents) {}

  /** What has been handed on as the answer so far. */
  shown(): string {
    return this.handedOn;
  }

  /**
   * The step as far as it arrived, decoded: the thought (whole or begun), the action once its
   * string closed, and the answer text when the step is a final answer still being written
   * (the same test as the one for handing the answer on). For a reply cut off by the person.
   */
  partial(): { thought: string; action?: string; answer?: string } {
    const reading = this.frame.kind === "string" && this.frame.role === "value";
    const thought = this.thoughtDone ? this.thought : reading && this.key === "thought" ? this.current : "";
    const out: { thought: string; action?: string; answer?: string } = { thought };
    if (this.action !== undefined) out.action = this.action;
    // An answer not begun yet is an empty one; an answer that is no string is not an answer.
    const answerable = this.answerIsString || !this.seen.has("action_input");
    if (!this.broken && this.action === FINAL_ACTION && this.thoughtDone && answerable)
      out.answer = this.answerComplete
        ? this.answer
        : reading && this.key === "action_input"
          ? this.current
          : "";
    return out;
  }

  push(chunk: string): void {
    for (const ch of chunk) this.step(ch);
    this.settleParts();
    if (this.thoughtPending) {
      const piece = this.thoughtPending;
      this.thoughtPending = "";
      this.on.thought(piece);
    }
    this.flushAnswer();
  }

  /**
   * End of the turn. `answer` is the validated final answer, or undefined when the step was
   * not a valid final step (or the call failed); `reason` says why for the withdrawal.
   */
  settle(answer: string | undefined, reason: string): void {
    const shown = this.handedOn;
    if (answer?.startsWith(shown)) {
      const rest = answer.slice(shown.length);
      if (rest) {
        this.handedOn = answer;
        this.on.answer(rest);
      }
      return;
    }
    if (shown !== "") this.on.withdrawn(reason);
  }

  /** Thought text decoded during this push, handed on at its end. */
  private thoughtPending = "";

  private flushAnswer(): void {
    if (this.broken || !this.answerIsString || this.action !== FINAL_ACTION || !this.thoughtDone) return;
    if (!this.answerComplete && this.handedOn === "" && !this.answerHasText) return;
    // Only the new text is touched: the answer so far is never read again while it streams.
    if (this.answerFresh !== "") {
      const piece = this.answerFresh;
      this.answerFresh = "";
      this.handedOn += piece;
      this.on.answer(piece);
    }
  }

  private settleParts(): void {
    if (this.parts.length === 0) return;
    const added = this.parts.join("");
    this.parts = [];
    this.current += added;
    const f = this.frame;
    if (f.kind === "string" && f.role === "value" && this.key === "action_input") {
      this.answerFresh += added;
      if (!this.answerHasText && added.trim() !== "") this.answerHasText = true;
    }
  }

  private step(ch: string): void {
    const f = this.frame;
    switch (f.kind) {
      case "done":
        return;
      case "seek":
        if (ch === "{") this.frame = { kind: "object", expect: "key" };
        return;
      case "skip":
        if (f.inString) {
          if (f.escaped) f.escaped = false;
          else if (ch === "\\") f.escaped = true;
          else if (ch === '"') f.inString = false;
          return;
        }
        if (ch === '"') f.inString = true;
        else if (ch === "{" || ch === "[") f.depth++;
        else if (ch === "}" || ch === "]") {
          f.depth--;
          if (f.depth === 0) this.frame = { kind: "object", expect: "comma" };
        } else if (f.depth === 0 && (ch === "," || ch === "}")) {
          // The end of a bare literal or number.
          this.frame = { kind: "object", expect: "comma" };
          this.step(ch);
        }
        return;
      case "string":
        this.stringChar(ch, f.role);
        return;
      case "object":
        if (/\s/.test(ch)) return;
        if (f.expect === "key") {
          if (ch === '"') {
            this.current = "";
            this.frame = { kind: "string", role: "key" };
          } else if (ch === "}") this.frame = { kind: "done" };
          else this.broken = true;
        } else if (f.expect === "colon") {
          if (ch === ":") f.expect = "value";
          else this.broken = true;
        } else if (f.expect === "value") {
          if (ch === '"') {
            this.current = "";
            this.frame = { kind: "string", role: "value" };
            if (this.key === "action_input") {
              this.answerIsString = true;
              this.answerFresh = "";
              this.answerHasText = false;
            }
          } else {
            if (this.key === "action_input") this.answerIsString = false;
            this.frame =
              ch === "{" || ch === "["
                ? { kind: "skip", depth: 1, inString: false, escaped: false }
                : { kind: "skip", depth: 0, inString: false, escaped: false };
          }
        } else if (ch === ",") f.expect = "key";
        else if (ch === "}") this.frame = { kind: "done" };
        else this.broken = true;
        return;
    }
  }

  private stringChar(ch: string, role: "key" | "value"): void {
    if (this.escape !== undefined) {
      if (this.escape === "") {
        if (ch === "u") {
          this.escape = "u";
          return;
        }
        this.escape = undefined;
        const decoded = ESCAPES[ch];
        if (decoded === undefined) this.broken = true;
        else this.append(decoded, role);
        return;
      }
      this.escape += ch;
      if (this.escape.length < 5) return;
      const hex = this.escape.slice(1);
      this.escape = undefined;
      if (!HEX.test(hex)) {
        this.broken = true;
        return;
      }
      const unit = String.fromCharCode(Number.parseInt(hex, 16));
      const code = unit.charCodeAt(0);
      if (code >= 0xd800 && code <= 0xdbff) {
        // Held until its pair: half a character is never handed on.
        if (this.highSurrogate) this.append("", role);
        this.highSurrogate = unit;
        return;
      }
      this.append(unit, role);
      return;
    }
    if (ch === "\\") {
      this.escape = "";
      return;
    }
    if (ch === '"') {
      this.append("", role);
      this.endString(role);
      return;
    }
    this.append(ch, role);
  }

  private append(text: string, role: "key" | "value"): void {
    let add = text;
    if (this.highSurrogate) {
      add = this.highSurrogate + text;
      this.highSurrogate = undefined;
    }
    if (add === "") return;
    this.parts.push(add);
    if (role === "value" && this.key === "thought") this.thoughtPending += add;
  }

  private endString(role: "key" | "value"): void {
    this.settleParts();
    if (role === "key") {
      this.key = this.current;
      if (this.seen.has(this.key)) this.broken = true;
      this.seen.add(this.key);
      this.frame = { kind: "object", expect: "colon" };
      return;
    }
    if (this.key === "thought") {
      this.thoughtDone = true;
      this.thought = this.current;
    } else if (this.key === "action") this.action = this.current;
    else if (this.key === "action_input") {
      this.answer = this.current;
      this.answerIsString = true;
      this.answerComplete = true;
    }
    this.frame = { kind: "object", expect: "comma" };
  }
}

const THINK_OPEN = ["<think>", "<thinking>"];
const THINK_CLOSE = /<\/(think|thinking)>/i;
/** Longest closing tag minus one: held back in case the tag is split between chunks. */
const CLOSE_HOLD_CHARS = "</thinking>".length - 1;

/**
 * Routes a leading `<think>` block of streamed reply text to the thinking and the rest to the
 * step reader, so a draft step inside the thinking is never followed as the answer. (An orphan
 * `</think>` is only known at its end; settle() withdraws anything shown from before it.)
 */
export class ThinkRouter {
  private state: "lead" | "think" | "body" = "lead";
  private held = "";

  constructor(
    private readonly thinking: (text: string) => void,
    private readonly body: (text: string) => void,
  ) {}

  push(chunk: string): void {
    if (this.state === "body") {
      this.body(chunk);
      return;
    }
    this.held += chunk;
    if (this.state === "lead") {
      const lead = this.held.trimStart().toLowerCase();
      const tag = THINK_OPEN.find((t) => lead.startsWith(t));
      if (tag) {
        this.state = "think";
        this.held = this.held.trimStart().slice(tag.length);
      } else if (lead === "" || THINK_OPEN.some((t) => t.startsWith(lead))) {
        return;
      } else {
        this.state = "body";
        const all = this.held;
        this.held = "";
        this.body(all);
        return;
      }
    }
    const m = THINK_CLOSE.exec(this.held);
    if (m) {
      if (m.index > 0) this.thinking(this.held.slice(0, m.index));
      const rest = this.held.slice(m.index + m[0].length);
      this.held = "";
      this.state = "body";
      if (rest) this.body(rest);
      return;
    }
    const out = this.held.length - CLOSE_HOLD_CHARS;
    if (out > 0) {
      this.thinking(this.held.slice(0, out));
      this.held = this.held.slice(out);
    }
  }
}

/** A reader for one turn whose findings become agent events. */
export function followStep(emit: Listener, turn: number): StepStreamReader {
  const reader = new StepStreamReader({
    thought: (text) => emit({ type: "thought_delta", turn, text }),
    answer: (text) => emit({ type: "answer_delta", text }),
    withdrawn: (reason) => emit({ type: "answer_withdrawn", reason }),
  });
  const feed = reader.push.bind(reader);
  const router = new ThinkRouter(
    (text) => emit({ type: "thought_delta", turn, text, source: "reasoning" }),
    feed,
  );
  // The reader's own methods stay; only what it is fed goes through the router first.
  return Object.assign(reader, { push: (chunk: string) => router.push(chunk) });
}
