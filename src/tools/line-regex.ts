/**
 * Line-oriented regular expression search with a linear-time guarantee, for `grep`.
 *
 * The pattern is RE2 syntax compiled by re2js, which never backtracks. Three scanners, fastest
 * first, all with the same answers (the tests cross-check them):
 *
 * - literal: a pattern without metacharacters is a byte search (`Buffer.indexOf`).
 * - dfa: re2js's lazy DFA driven over the raw UTF-8 bytes by a tight loop here, restarted at
 *   every line start. Calling `RE2JS.test` once per line costs ~0.7 µs of setup per line and
 *   needs every line decoded to a string first; driving the DFA directly is about twice as fast
 *   on source-like text. It uses re2js internals (the version is pinned), so they are feature-
 *   checked at compile time and any surprise falls back to the next scanner.
 * - each: decode each line and call the public `RE2JS.test` (DFA, then NFA: still linear).
 *
 * A line is the bytes between newlines; a "\r" before the "\n" is not part of it. `^`, `$`,
 * `\A` and `\z` therefore anchor at the line's ends and no match ever spans two lines.
 */
import type { RE2JS } from "re2js";
import { lazyRequire } from "../core/lazy.js";

/** The regex engine loads with the first grep, not with every Scoot process. */
const re2js = lazyRequire<typeof import("re2js")>("re2js");

import type { Result } from "../core/types.js";

/** Longest accepted pattern; RE2 also bounds repetition counts (at most 1000). */
export const MAX_PATTERN_CHARS = 1000;
/** DFA states this scanner indexes before it forgets them and starts a fresh table. */
const MAX_TABLE_STATES = 4096;

/** Called for each matching line: its 0-based index in the scanned text, its byte range, and where the match is (-1: unknown). */
export type HitFn = (line: number, start: number, end: number, at: number) => void;

export interface LineMatcher {
  readonly engine: "literal" | "dfa" | "each";
  /** Scans whole lines (the last may lack its newline), calls `onHit` per matching line, returns the number of lines. */
  scan(text: Buffer, onHit: HitFn): number;
  /** Only counts the matching lines; the literal scanner then skips counting newlines. */
  count(text: Buffer): number;
  /** A quick "could any line match?" where that is much cheaper than a scan (literals only). */
  mayMatch?(text: Buffer): boolean;
  /** Whether one line (no newline) matches; the reference the scanners must agree with. */
  test(line: string): boolean;
}

export interface CompileOptions {
  /** Skip the fast paths (tests use this to cross-check them against the reference). */
  engine?: "auto" | "each";
}

/**
 * Patterns compiled lately. A model greps for the same few patterns turn after turn, and
 * compiling costs far more than a small scan; a compiled RE2JS is immutable, and each call
 * still builds its own matcher (and DFA table) from it.
 */
const compiled = new Map<string, RE2JS>();
const MAX_COMPILED = 16;

/** Compiles `pattern` or says, in words, what is wrong with it. */
export function compileLineRegex(pattern: string, opts: CompileOptions = {}): Result<LineMatcher> {
  if (pattern.length > MAX_PATTERN_CHARS) {
    return {
      ok: false,
      error: `the pattern is ${pattern.length} characters; at most ${MAX_PATTERN_CHARS} are allowed`,
    };
  }
  const unsupported = unsupportedFeature(pattern);
  if (unsupported) return { ok: false, error: unsupported };
  let re = compiled.get(pattern);
  if (re) {
    // Most recently used last: the oldest entry is the one dropped.
    compiled.delete(pattern);
    compiled.set(pattern, re);
  } else {
    try {
      re = re2js().RE2JS.compile(pattern);
    } catch (e) {
      const msg = (e instanceof Error ? e.message : String(e)).replace(/^error parsing regexp: /, "");
      return { ok: false, error: `invalid pattern: ${msg}` };
    }
    compiled.set(pattern, re);
    if (compiled.size > MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  }
  const test = (line: string) => re.test(line);
  if (opts.engine === "each") return { ok: true, value: eachLineMatcher(test) };
  const literal = literalOf(pattern);
  if (literal !== undefined) return { ok: true, value: literalMatcher(literal) };
  const dfa = dfaOf(re);
  if (dfa) return { ok: true, value: dfaMatcher(dfa, test) };
  return { ok: true, value: eachLineMatcher(test) };
}

// ---------------------------------------------------------------------------------------------
// Clear errors for the features a linear-time engine cannot offer.

/** Names the first construct RE2 cannot do, in words the model can act on. */
export function unsupportedFeature(p: string): string | undefined {
  const why = "grep uses a linear-time engine (RE2 syntax)";
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "\\") {
      const d = p[i + 1] ?? "";
      if (!inClass && d >= "1" && d <= "9") return `backreferences such as \\${d} are not supported: ${why}`;
      if (!inClass && d === "k" && p[i + 2] === "<")
        return `named backreferences (\\k<name>) are not supported: ${why}`;
      // \p{Greek}, \x{263a}: the braces belong to the escape.
      const close = (d === "p" || d === "P" || d === "x") && p[i + 2] === "{" ? p.indexOf("}", i + 3) : -1;
      i = close === -1 ? i + 1 : close;
      continue;
    }
    if (inClass) {
      if (c === "[" && p[i + 1] === ":") {
        const close = p.indexOf(":]", i + 2);
        if (close !== -1) i = close + 1;
      } else if (c === "]") {
        inClass = false;
      }
      continue;
    }
    if (c === "[") {
      inClass = true;
      if (p[i + 1] === "^") i++;
      if (p[i + 1] === "]") i++; // a leading "]" is a literal member
      continue;
    }
    if (c === "(" && p[i + 1] === "?") {
      const next = p.slice(i + 2, i + 4);
      if (next.startsWith("=") || next.startsWith("!")) {
        return `lookahead ((?=...) and (?!...)) is not supported: ${why}`;
      }
      if (next === "<=" || next === "<!")
        return `lookbehind ((?<=...) and (?<!...)) is not supported: ${why}`;
      if (next.startsWith(">")) return `atomic groups ((?>...)) are not supported: ${why}`;
    }
    if ((c === "*" || c === "+" || c === "?" || closesRepeat(p, i)) && p[i + 1] === "+") {
      return `possessive quantifiers such as ${c}+ are not supported: ${why}; write ${c} instead`;
    }
  }
  return undefined;
}

/** Is p[i] the "}" of a repetition such as {2} or {2,5} (rather than a literal brace)? */
function closesRepeat(p: string, i: number): boolean {
  if (p[i] !== "}") return false;
  const open = p.lastIndexOf("{", i);
  return open !== -1 && /^\d+(,\d*)?$/.test(p.slice(open + 1, i));
}

// ---------------------------------------------------------------------------------------------
// literal

/** The literal text a metacharacter-free pattern stands for ("\." counts as "."), else undefined. */
export function literalOf(pattern: string): string | undefined {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      const d = pattern[i + 1];
      // Only escaped punctuation is literal; "\d", "\w", "\n" and friends are classes or controls.
      if (d === undefined || !/[!-/:-@[-`{-~]/.test(d)) return undefined;
      out += d;
      i++;
      continue;
    }
    if (".+*?()|[]{}^$".includes(c)) return undefined;
    out += c;
  }
  return out === "" || out.includes("\n") || out.includes("\r") ? undefined : out;
}

function literalMatcher(literal: string): LineMatcher {
  const needle = Buffer.from(literal, "utf8");
  return {
    engine: "literal",
    test: (line) => line.includes(literal),
    mayMatch: (text) => text.includes(needle),
    count(text) {
      let n = 0;
      let p = text.indexOf(needle, 0);
      while (p !== -1) {
        n++;
        const nl = text.indexOf(10, p + needle.length);
        if (nl === -1) break;
        p = text.indexOf(needle, nl + 1);
      }
      return n;
    },
    scan(text, onHit) {
      const end = text.length;
      let lines = 0;
      let cur = 0; // start of line `lines`
      let nl = text.indexOf(10, cur);
      let p = text.indexOf(needle, 0);
      while (p !== -1) {
        while (nl !== -1 && nl < p) {
          lines++;
          cur = nl + 1;
          nl = text.indexOf(10, cur);
        }
        onHit(lines, cur, lineEnd(text, cur, nl), p);
        if (nl === -1) return lines + 1;
        lines++;
        cur = nl + 1;
        nl = text.indexOf(10, cur);
        p = text.indexOf(needle, cur);
      }
      while (nl !== -1) {
        lines++;
        cur = nl + 1;
        nl = text.indexOf(10, cur);
      }
      return cur < end ? lines + 1 : lines;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// each line through the public API

function eachLineMatcher(test: (line: string) => boolean): LineMatcher {
  return {
    engine: "each",
    test,
    scan: (text, onHit) => scanEach(test, text, 0, 0, onHit),
    count: (text) => countByScan(scanEach.bind(null, test, text, 0, 0)),
  };
}

/** Counts the hits a scan reports. */
function countByScan(scan: (onHit: HitFn) => number): number {
  let n = 0;
  scan(() => {
    n++;
  });
  return n;
}

/** Tests each line from byte `from` (which starts line number `line0`); returns the total line count. */
function scanEach(
  test: (line: string) => boolean,
  text: Buffer,
  from: number,
  line0: number,
  onHit: HitFn,
): number {
  const end = text.length;
  let lines = line0;
  let ls = from;
  while (ls < end) {
    const nl = text.indexOf(10, ls);
    const le = lineEnd(text, ls, nl);
    if (test(text.toString("utf8", ls, le))) onHit(lines, ls, le, -1);
    lines++;
    if (nl === -1) break;
    ls = nl + 1;
  }
  return lines;
}

/** End of the line starting at `ls` whose newline is at `nl` (-1: none), without a "\r" before the newline. */
function lineEnd(text: Buffer, ls: number, nl: number): number {
  if (nl === -1) return text.length;
  return nl > ls && text[nl - 1] === 13 ? nl - 1 : nl;
}

// ---------------------------------------------------------------------------------------------
// DFA over bytes (re2js internals, feature-checked)

interface DfaState {
  isMatch: boolean;
}

/** The parts of re2js's lazy DFA this module drives (re2js 2.10). */
interface Dfa {
  failed: boolean;
  numClasses: number;
  latin1Class: Int32Array;
  start(input: { context(pos: number): number; step(pos: number): number }, pos: number): DfaState | null;
  stepOrReset(
    state: DfaState,
    cls: number,
    rune: number,
    anchor: number,
    pos: number,
    search: { resetPos: number },
  ): DfaState | null;
  runeClass(rune: number): number;
}

// re2js constants (Utils / RE2Flags / MachineInput), the same values as Go's regexp/syntax.
const EMPTY_BEGIN_LINE = 1;
const EMPTY_BEGIN_TEXT = 4;
const UNANCHORED = 0;
const END_OF_TEXT_RUNE = -1;
const INPUT_EOF = -8;
const RUNE_ERROR = 0xfffd;
/** What the DFA sees at the start of every line: the beginning of a text. */
const LINE_START_INPUT = { context: () => EMPTY_BEGIN_TEXT | EMPTY_BEGIN_LINE, step: () => INPUT_EOF };

function dfaOf(re: RE2JS): Dfa | undefined {
  try {
    const inner = (re as unknown as { re2?: () => { dfa?: unknown; prog?: { numLb?: number } } }).re2?.();
    const dfa = inner?.dfa as Partial<Dfa> | undefined;
    if (dfa?.failed !== false) return undefined;
    if ((inner?.prog?.numLb ?? 0) !== 0) return undefined;
    if (typeof dfa.numClasses !== "number" || !(dfa.latin1Class instanceof Int32Array)) return undefined;
    if (dfa.latin1Class.length !== 256) return undefined;
    if (typeof dfa.start !== "function" || typeof dfa.stepOrReset !== "function") return undefined;
    if (typeof dfa.runeClass !== "function") return undefined;
    const start = dfa.start(LINE_START_INPUT, 0);
    if (!start || typeof start.isMatch !== "boolean") return undefined;
    return dfa as Dfa;
  } catch {
    return undefined;
  }
}

/**
 * The DFA's states numbered densely, with a flat transition table (Int32Array, -1 = not yet
 * computed) so the hot loop is one typed-array load per byte. Column `numClasses` is the
 * end-of-line transition.
 */
interface Table {
  dfa: Dfa;
  cols: number;
  trans: Int32Array;
  match: Uint8Array;
  states: DfaState[];
  ids: Map<DfaState, number>;
  start: number;
}

function newTable(dfa: Dfa): Table | undefined {
  const cols = dfa.numClasses + 1;
  const t: Table = {
    dfa,
    cols,
    trans: new Int32Array(64 * cols).fill(-1),
    match: new Uint8Array(64),
    states: [],
    ids: new Map(),
    start: 0,
  };
  const start = dfa.start(LINE_START_INPUT, 0);
  if (!start) return undefined;
  t.start = idOf(t, start);
  return t;
}

function idOf(t: Table, st: DfaState): number {
  const known = t.ids.get(st);
  if (known !== undefined) return known;
  const id = t.states.length;
  if ((id + 1) * t.cols > t.trans.length) {
    const trans = new Int32Array(t.trans.length * 2).fill(-1);
    trans.set(t.trans);
    t.trans = trans;
    const match = new Uint8Array(t.match.length * 2);
    match.set(t.match);
    t.match = match;
  }
  t.states.push(st);
  t.ids.set(st, id);
  t.match[id] = st.isMatch ? 1 : 0;
  return id;
}

/** Computes a missing transition; -1 when the DFA gives up (its memory budget thrashes). */
function slowStep(
  t: Table,
  s: number,
  cls: number,
  rune: number,
  pos: number,
  search: { resetPos: number },
): number {
  const from = t.states[s]!;
  if (t.states.length >= MAX_TABLE_STATES) {
    // Forget the numbering (the DFA keeps its own cache); `from` stays usable as an object.
    t.states = [];
    t.ids = new Map();
    t.trans.fill(-1);
    const start = t.dfa.start(LINE_START_INPUT, 0);
    if (!start) return -1;
    t.start = idOf(t, start);
    const next = t.dfa.stepOrReset(from, cls, rune, UNANCHORED, pos, search);
    return next ? idOf(t, next) : -1;
  }
  const next = t.dfa.stepOrReset(from, cls, rune, UNANCHORED, pos, search);
  if (!next) return -1;
  const id = idOf(t, next);
  t.trans[s * t.cols + cls] = id;
  return id;
}

function dfaMatcher(dfa: Dfa, test: (line: string) => boolean): LineMatcher {
  let table = newTable(dfa);
  const matcher: LineMatcher & { engine: "dfa" | "each" } = {
    engine: "dfa",
    test,
    count: (text) => countByScan((onHit) => matcher.scan(text, onHit)),
    scan(text, onHit) {
      if (!table) return scanEach(test, text, 0, 0, onHit);
      const r = scanDfa(table, text, onHit);
      if (r.lines >= 0) return r.lines;
      // The DFA gave up: finish with the reference scanner from the line it was on, and stay there.
      table = undefined;
      matcher.engine = "each";
      return scanEach(test, text, r.resumeAt, r.resumeLine, onHit);
    },
  };
  return matcher;
}

/** Scans with the DFA; `lines` is -1 if it gave up, with where to resume. */
function scanDfa(
  t: Table,
  text: Buffer,
  onHit: HitFn,
): { lines: number; resumeAt: number; resumeLine: number } {
  const classOf = t.dfa.latin1Class;
  const cols = t.cols;
  const eol = cols - 1;
  const end = text.length;
  const search = { resetPos: -1 };
  let trans = t.trans;
  let match = t.match;
  let start = t.start;
  let lines = 0;
  let ls = 0; // start of the current line
  let i = 0;
  let s = start;
  while (i < end) {
    const b = text[i]!;
    if (b === 10 || (b === 13 && text[i + 1] === 10)) {
      let n = trans[s * cols + eol]!;
      if (n < 0) {
        n = slowStep(t, s, eol, END_OF_TEXT_RUNE, i, search);
        if (n < 0) return { lines: -1, resumeAt: ls, resumeLine: lines };
        trans = t.trans;
        match = t.match;
        start = t.start;
      }
      if (match[n] === 1) onHit(lines, ls, i, i);
      i += b === 10 ? 1 : 2;
      lines++;
      ls = i;
      s = start;
      continue;
    }
    let cls: number;
    let rune: number;
    let width: number;
    if (b < 0x80) {
      cls = classOf[b]!;
      rune = b;
      width = 1;
    } else {
      const r = decodeRune(text, i, end);
      rune = r >> 3;
      width = r & 7;
      cls = t.dfa.runeClass(rune);
    }
    let n = trans[s * cols + cls]!;
    if (n < 0) {
      n = slowStep(t, s, cls, rune, i, search);
      if (n < 0) return { lines: -1, resumeAt: ls, resumeLine: lines };
      trans = t.trans;
      match = t.match;
      start = t.start;
    }
    s = n;
    if (match[s] === 1) {
      // A match ended just before byte i: the line is a hit; skip the rest of it.
      const nl = text.indexOf(10, i);
      onHit(lines, ls, lineEnd(text, ls, nl), i);
      lines++;
      if (nl === -1) return { lines, resumeAt: 0, resumeLine: 0 };
      i = nl + 1;
      ls = i;
      s = start;
      continue;
    }
    i += width;
  }
  if (ls < end) {
    // The last line has no newline: it still ends, and `$` may match there.
    let n = trans[s * cols + eol]!;
    if (n < 0) {
      n = slowStep(t, s, eol, END_OF_TEXT_RUNE, end, search);
      if (n < 0) return { lines: -1, resumeAt: ls, resumeLine: lines };
      match = t.match;
    }
    if (match[n] === 1) onHit(lines, ls, end, end);
    lines++;
  }
  return { lines, resumeAt: 0, resumeLine: 0 };
}

/** Decodes the UTF-8 sequence at i as re2js does: (rune << 3) | width, invalid bytes → U+FFFD width 1. */
function decodeRune(b: Buffer, i: number, end: number): number {
  const bad = (RUNE_ERROR << 3) | 1;
  const c = b[i]!;
  let size: number;
  let rune: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    size = 2;
    rune = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    size = 3;
    rune = c & 0x0f;
    if (c === 0xe0) lo = 0xa0;
    else if (c === 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    size = 4;
    rune = c & 0x07;
    if (c === 0xf0) lo = 0x90;
    else if (c === 0xf4) hi = 0x8f;
  } else {
    return bad;
  }
  if (i + size > end) return bad;
  const c1 = b[i + 1]!;
  if (c1 < lo || c1 > hi) return bad;
  rune = (rune << 6) | (c1 & 0x3f);
  for (let k = 2; k < size; k++) {
    const ck = b[i + k]!;
    if ((ck & 0xc0) !== 0x80) return bad;
    rune = (rune << 6) | (ck & 0x3f);
  }
  return (rune << 3) | size;
}
