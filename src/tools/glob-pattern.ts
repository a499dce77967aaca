/**
 * Glob patterns for the `glob` tool, compiled to a list of path segments.
 *
 * `*`, `?` and `[...]` match within one segment (never "/"); a segment that is exactly `**`
 * matches zero or more whole segments. `{a,b}` alternatives are expanded up front, and `\`
 * escapes the next character. Matching is hand-written (no RegExp): a segment matcher that
 * backtracks only to the last `*` is O(name × pattern) in the worst case.
 */
import type { Result } from "../core/types.js";

/** Longest accepted pattern. */
export const MAX_GLOB_PATTERN_CHARS = 1000;
/** Most alternatives `{...}` may expand to. */
export const MAX_BRACE_EXPANSIONS = 64;

export type Token =
  | { t: "char"; c: string }
  | { t: "any" }
  | { t: "star" }
  | { t: "class"; negate: boolean; ranges: [number, number][] };

export type Segment =
  | { kind: "globstar" }
  | { kind: "literal"; text: string }
  | { kind: "wild"; tokens: Token[] };

/** One alternative of a pattern, as segments. */
export type GlobPath = Segment[];

/** Compiles a pattern relative to the glob root into its alternatives. */
export function compileGlob(pattern: string): Result<GlobPath[]> {
  if (pattern.length > MAX_GLOB_PATTERN_CHARS) {
    return {
      ok: false,
      error: `the pattern is ${pattern.length} characters; at most ${MAX_GLOB_PATTERN_CHARS}`,
    };
  }
  if (pattern.startsWith("/") || pattern.startsWith("~")) {
    return { ok: false, error: 'the pattern must be relative; put the base directory in "root"' };
  }
  const alternatives = expandBraces(pattern);
  if (!alternatives.ok) return alternatives;
  const out: GlobPath[] = [];
  for (const alt of alternatives.value) {
    const segs: GlobPath = [];
    for (const raw of splitSegments(alt)) {
      if (raw === "" || raw === ".") continue; // "a//b", "./a", "a/" all mean the plain path
      if (raw === "..")
        return { ok: false, error: 'the pattern may not contain ".."; put the base directory in "root"' };
      if (raw === "**") {
        // "**/**" is the same as "**".
        if (segs[segs.length - 1]?.kind !== "globstar") segs.push({ kind: "globstar" });
        continue;
      }
      const seg = compileSegment(raw);
      if (!seg.ok) return seg;
      segs.push(seg.value);
    }
    if (segs.length === 0) return { ok: false, error: "the pattern names no files" };
    out.push(segs);
  }
  return { ok: true, value: out };
}

/** Splits on "/" outside brackets and escapes. */
function splitSegments(p: string): string[] {
  const parts: string[] = [];
  let cur = "";
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === "\\" && i + 1 < p.length) {
      cur += c + p[i + 1];
      i++;
    } else if (c === "/") {
      parts.push(cur);
      cur = "";
    } else {
      cur += c;
    }
  }
  parts.push(cur);
  return parts;
}

function compileSegment(raw: string): Result<Segment> {
  const tokens: Token[] = [];
  let wild = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === "\\") {
      tokens.push({ t: "char", c: raw[i + 1] ?? "\\" });
      i++;
    } else if (c === "*") {
      wild = true;
      // "a**b" inside a segment is just a star.
      if (tokens[tokens.length - 1]?.t !== "star") tokens.push({ t: "star" });
    } else if (c === "?") {
      wild = true;
      tokens.push({ t: "any" });
    } else if (c === "[") {
      const cls = parseClass(raw, i);
      if (!cls.ok) return cls;
      wild = true;
      tokens.push(cls.value.token);
      i = cls.value.end;
    } else {
      tokens.push({ t: "char", c });
    }
  }
  if (!wild)
    return {
      ok: true,
      value: { kind: "literal", text: tokens.map((t) => (t.t === "char" ? t.c : "")).join("") },
    };
  return { ok: true, value: { kind: "wild", tokens } };
}

/** Parses `[...]` starting at `start`; `end` is the index of the closing "]". */
function parseClass(raw: string, start: number): Result<{ token: Token; end: number }> {
  let i = start + 1;
  let negate = false;
  if (raw[i] === "!" || raw[i] === "^") {
    negate = true;
    i++;
  }
  const ranges: [number, number][] = [];
  let first = true;
  while (i < raw.length) {
    let c = raw[i]!;
    if (c === "]" && !first) return { ok: true, value: { token: { t: "class", negate, ranges }, end: i } };
    first = false;
    if (c === "\\" && i + 1 < raw.length) {
      i++;
      c = raw[i]!;
    }
    const lo = c.codePointAt(0)!;
    if (raw[i + 1] === "-" && raw[i + 2] !== undefined && raw[i + 2] !== "]") {
      let hiChar = raw[i + 2]!;
      let step = 3;
      if (hiChar === "\\" && raw[i + 3] !== undefined) {
        hiChar = raw[i + 3]!;
        step = 4;
      }
      const hi = hiChar.codePointAt(0)!;
      if (hi < lo) return { ok: false, error: `the range ${c}-${hiChar} in [...] is backwards` };
      ranges.push([lo, hi]);
      i += step;
    } else {
      ranges.push([lo, lo]);
      i++;
    }
  }
  return { ok: false, error: `unclosed "[" in ${JSON.stringify(raw)}` };
}

/** Expands `{a,b}` (nested allowed) into plain alternatives. A brace without a comma is literal. */
export function expandBraces(p: string): Result<string[]> {
  const open = findBraceGroup(p);
  if (!open) return { ok: true, value: [p] };
  const { start, end, options } = open;
  const out: string[] = [];
  for (const option of options) {
    const rest = expandBraces(p.slice(0, start) + option + p.slice(end + 1));
    if (!rest.ok) return rest;
    for (const r of rest.value) {
      if (!out.includes(r)) out.push(r);
      if (out.length > MAX_BRACE_EXPANSIONS) {
        return {
          ok: false,
          error: `the {...} alternatives expand to more than ${MAX_BRACE_EXPANSIONS} patterns`,
        };
      }
    }
  }
  return { ok: true, value: out };
}

/** The first top-level `{...}` group that has a comma, with its options split. */
function findBraceGroup(p: string): { start: number; end: number; options: string[] } | undefined {
  for (let i = 0; i < p.length; i++) {
    if (p[i] === "\\") {
      i++;
      continue;
    }
    if (p[i] !== "{") continue;
    let depth = 0;
    const cuts: number[] = [];
    for (let j = i; j < p.length; j++) {
      const c = p[j];
      if (c === "\\") {
        j++;
      } else if (c === "{") {
        depth++;
      } else if (c === "}") {
        depth--;
        if (depth === 0) {
          if (cuts.length === 0) break; // "{x}" is literal; look for a later group
          const bounds = [i, ...cuts, j];
          const options = bounds.slice(0, -1).map((b, k) => p.slice(b + 1, bounds[k + 1]));
          return { start: i, end: j, options };
        }
      } else if (c === "," && depth === 1) {
        cuts.push(j);
      }
    }
  }
  return undefined;
}

/** Does one path segment (a file or directory name) match the tokens? */
export function matchSegment(tokens: readonly Token[], name: string): boolean {
  let p = 0;
  let s = 0;
  let starP = -1;
  let starS = 0;
  while (s < name.length) {
    const tok = tokens[p];
    if (tok?.t === "star") {
      starP = p++;
      starS = s;
      continue;
    }
    if (tok !== undefined && tokenMatches(tok, name.charCodeAt(s))) {
      p++;
      s++;
      continue;
    }
    if (starP === -1) return false;
    // Let the last star swallow one more character and retry from there.
    p = starP + 1;
    s = ++starS;
  }
  while (tokens[p]?.t === "star") p++;
  return p === tokens.length;
}

function tokenMatches(tok: Token, code: number): boolean {
  switch (tok.t) {
    case "char":
      return tok.c.charCodeAt(0) === code;
    case "any":
      return true;
    case "class": {
      let hit = false;
      for (const [lo, hi] of tok.ranges) {
        if (code >= lo && code <= hi) {
          hit = true;
          break;
        }
      }
      return hit !== tok.negate;
    }
    default:
      return false;
  }
}
