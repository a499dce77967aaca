/**
 * Python-style calls, as Gemma's `tool_code` blocks, LFM2 (`[bash(command="ls")]`) and Granite
 * write them: `name(key=value, …)`, a list of such calls, or one wrapped in `print(…)`. Values are
 * Python literals — strings in either quote (escapes as Python reads them, triple quotes too),
 * numbers, True/False/None, lists and dicts — read exactly, never evaluated. A positional argument
 * has no field to map to, so it is an error, as is anything after the calls.
 */
import type { ReadCall } from "./call-args.js";

export type PythonCalls =
  | { ok: true; calls: ReadCall[]; end: number }
  | { ok: false; error: string; at: number };

class Fail extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

const NAME = /[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*/y;
const NUMBER = /-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?/y;
const SIMPLE_ESCAPES: Record<string, string> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  f: "\f",
  v: "\v",
  a: "\u0007",
  "0": "\0",
  "\n": "",
};
/** Prefixes models put before a tool's name (`default_api.bash`, `functions.bash`). */
const NAME_PREFIX = /^(?:default_api|functions|tools)\./;

class Reader {
  constructor(
    readonly text: string,
    public i: number,
  ) {}

  space(): void {
    while (this.i < this.text.length && /\s/.test(this.text[this.i]!)) this.i++;
  }

  peek(): string | undefined {
    return this.text[this.i];
  }

  expect(ch: string): void {
    this.space();
    if (this.text[this.i] !== ch) throw new Fail(`expected "${ch}"`, this.i);
    this.i++;
  }

  match(re: RegExp): string | undefined {
    re.lastIndex = this.i;
    const m = re.exec(this.text);
    if (!m) return undefined;
    this.i += m[0].length;
    return m[0];
  }

  string(): string {
    const q = this.text[this.i]!;
    const triple = this.text.startsWith(q.repeat(3), this.i);
    const close = triple ? q.repeat(3) : q;
    this.i += close.length;
    let out = "";
    // Plain runs are copied whole: only quotes, backslashes and newlines need a look.
    const special = new RegExp(`[\\\\${q}${triple ? "" : "\\n"}]`, "g");
    while (this.i < this.text.length) {
      special.lastIndex = this.i;
      const next = special.exec(this.text);
      const stop = next ? next.index : this.text.length;
      out += this.text.slice(this.i, stop);
      this.i = stop;
      if (this.i >= this.text.length) break;
      if (this.text.startsWith(close, this.i)) {
        this.i += close.length;
        return out;
      }
      const ch = this.text[this.i]!;
      if (ch === "\n" && !triple) throw new Fail("a string that is not closed on its line", this.i);
      if (ch === "\\") {
        const next = this.text[this.i + 1] ?? "";
        const hex = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0;
        if (hex > 0) {
          const digits = this.text.slice(this.i + 2, this.i + 2 + hex);
          if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== hex) throw new Fail("a bad escape", this.i);
          out += String.fromCodePoint(Number.parseInt(digits, 16));
          this.i += 2 + hex;
          continue;
        }
        const simple = SIMPLE_ESCAPES[next];
        // Python keeps an unknown escape as it is (`\d` is a backslash and a d).
        out += simple ?? `\\${next}`;
        this.i += 2;
        continue;
      }
      out += ch;
      this.i++;
    }
    throw new Fail("a string that never closes", this.text.length);
  }

  value(): unknown {
    this.space();
    const ch = this.peek();
    if (ch === '"' || ch === "'") return this.string();
    if (ch === "[") return this.list("]");
    if (ch === "(") return this.list(")");
    if (ch === "{") return this.dict();
    const num = this.match(NUMBER);
    if (num !== undefined) return Number(num);
    const word = this.match(NAME);
    if (word === "True" || word === "true") return true;
    if (word === "False" || word === "false") return false;
    if (word === "None" || word === "null") return null;
    throw new Fail(word ? `"${word}" is not a value (only literals are read)` : "expected a value", this.i);
  }

  list(close: string): unknown[] {
    this.i++;
    const out: unknown[] = [];
    for (;;) {
      this.space();
      if (this.peek() === close) {
        this.i++;
        return out;
      }
      out.push(this.value());
      this.space();
      if (this.peek() === ",") this.i++;
      else if (this.peek() !== close) throw new Fail(`expected "," or "${close}"`, this.i);
    }
  }

  dict(): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    for (;;) {
      this.space();
      if (this.peek() === "}") {
        this.i++;
        return out;
      }
      const key = this.value();
      if (typeof key !== "string") throw new Fail("a dict key must be a string", this.i);
      this.expect(":");
      out[key] = this.value();
      this.space();
      if (this.peek() === ",") this.i++;
      else if (this.peek() !== "}") throw new Fail('expected "," or "}"', this.i);
    }
  }

  /** `name(k=v, …)`, or `print(name(…))`. */
  call(): ReadCall {
    this.space();
    const at = this.i;
    const raw = this.match(NAME);
    if (!raw) throw new Fail("expected a call name(…)", this.i);
    this.expect("(");
    if (raw === "print") {
      const inner = this.call();
      this.expect(")");
      return inner;
    }
    const args: Record<string, unknown> = {};
    for (;;) {
      this.space();
      if (this.peek() === ")") {
        this.i++;
        break;
      }
      const keyAt = this.i;
      const key = this.match(/[A-Za-z_]\w*/y);
      this.space();
      if (!key || this.peek() !== "=") throw new Fail("a positional argument (write key=value)", keyAt);
      this.i++;
      if (key in args) throw new Fail(`the argument "${key}" twice`, keyAt);
      args[key] = this.value();
      this.space();
      if (this.peek() === ",") this.i++;
      else if (this.peek() !== ")") throw new Fail('expected "," or ")"', this.i);
    }
    if (raw.length === 0) throw new Fail("expected a name", at);
    return { name: raw.replace(NAME_PREFIX, ""), arguments: args };
  }
}

/** Whether `text` at `from` begins like a Python call or a list of them (`name(` or `[name(`). */
export function looksLikePythonCall(text: string, from = 0): boolean {
  return /^\s*\[?\s*[A-Za-z_][\w.]*\(/.test(text.slice(from, from + 200));
}

/** The calls at `from`: one `name(…)` or a `[…]` list of them. */
export function readPythonCalls(text: string, from = 0): PythonCalls {
  const r = new Reader(text, from);
  try {
    r.space();
    const calls: ReadCall[] = [];
    if (r.peek() === "[") {
      r.i++;
      for (;;) {
        calls.push(r.call());
        r.space();
        if (r.peek() === ",") {
          r.i++;
          continue;
        }
        r.expect("]");
        break;
      }
    } else {
      calls.push(r.call());
      // Calls one per line (a tool_code block with two) are a list too.
      for (;;) {
        const save = r.i;
        r.space();
        if (r.i > save && looksLikePythonCall(text, r.i) && text[r.i] !== "[") calls.push(r.call());
        else {
          r.i = save;
          break;
        }
      }
    }
    return { ok: true, calls, end: r.i };
  } catch (e) {
    if (e instanceof Fail) return { ok: false, error: e.message, at: e.at };
    throw e;
  }
}
