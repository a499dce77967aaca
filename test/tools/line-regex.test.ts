import { describe, expect, it } from "vitest";
import {
  compileLineRegex,
  type LineMatcher,
  literalOf,
  unsupportedFeature,
} from "../../src/tools/line-regex.js";

function compile(pattern: string, engine: "auto" | "each" = "auto"): LineMatcher {
  const r = compileLineRegex(pattern, { engine });
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

/** [line index, start, end] of every hit, and the line count. */
function scanAll(m: LineMatcher, text: Buffer): { hits: [number, number, number][]; lines: number } {
  const hits: [number, number, number][] = [];
  const lines = m.scan(text, (line, start, end) => hits.push([line, start, end]));
  return { hits, lines };
}

const SAMPLE = Buffer.concat([
  Buffer.from(
    [
      "fn main() {",
      "    let x = 42;",
      "",
      "Error: file not found",
      "error: warning ERROR",
      "  trailing spaces   ",
      "café naïve 日本語 テスト",
      "id_9 = foo_bar(1, 2)",
      "a.b*c+d?e",
      "ab\r",
      "tab\there",
      "x",
    ].join("\n"),
    "utf8",
  ),
  Buffer.from([0x0a, 0x62, 0xff, 0xfe, 0x61, 0x0a]), // a line with invalid UTF-8
  Buffer.from("last line without newline", "utf8"),
]);

describe("the fast scanners agree with the reference (RE2JS.test per line)", () => {
  it.each([
    "main",
    "^fn",
    "\\}$",
    "^$",
    "^",
    "x*",
    "(?i)error",
    "[Ee]rror:",
    "\\berror\\b",
    "\\Bor",
    "\\d+",
    "\\w+\\s=\\s\\w+",
    "^\\s+\\S",
    "\\s+$",
    "caf.",
    "[^\\x00-\\x7f]+",
    "日本",
    "\\p{Han}+",
    "[ぁ-ン]+",
    "a\\.b\\*c",
    "b.a",
    "\\t",
    "ab$",
    "newline$",
    "(a|b)*c",
    "^(a+)+$",
    "(?s).+",
    "\\A\\w+\\z",
    "x{2,}",
    "without",
  ])("%s", (pattern) => {
    const fast = compile(pattern);
    const reference = compile(pattern, "each");
    expect(reference.engine).toBe("each");
    expect(scanAll(fast, SAMPLE)).toEqual(scanAll(reference, SAMPLE));
  });

  it("uses the byte DFA for patterns and the byte search for literals", () => {
    // If a re2js upgrade changes its internals this fails, while grep stays correct (slower path).
    expect(compile("[A-Z][a-z]+\\d{2,}").engine).toBe("dfa");
    expect(compile("fn main").engine).toBe("literal");
    expect(compile("a\\.b").engine).toBe("literal");
  });

  it("stays correct when the DFA outgrows its state table", () => {
    // (a|b)*a(a|b){12} needs ~2^13 DFA states: the table is reset and/or the DFA gives up.
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed >>> 16;
    };
    const rows: string[] = [];
    for (let i = 0; i < 3000; i++) {
      let row = "";
      for (let j = 0; j < 40; j++) row += rand() % 2 ? "a" : "b";
      rows.push(i % 3 === 0 ? row.replace(/a/g, "b") : row);
    }
    const text = Buffer.from(rows.join("\n"));
    const fast = compile("^(a|b)*a(a|b){12}$");
    const got = scanAll(fast, text);
    expect(got).toEqual(scanAll(compile("^(a|b)*a(a|b){12}$", "each"), text));
    expect(got.hits.length).toBeGreaterThan(0);
    expect(got.hits.length).toBeLessThan(3000);
  });

  it("counts lines like wc -l plus an unterminated last line", () => {
    const m = compile("q");
    expect(m.scan(Buffer.from(""), () => {})).toBe(0);
    expect(m.scan(Buffer.from("a\nb\n"), () => {})).toBe(2);
    expect(m.scan(Buffer.from("a\nb"), () => {})).toBe(2);
    expect(m.scan(Buffer.from("\n\n"), () => {})).toBe(2);
  });
});

describe("literal detection", () => {
  it.each([
    ["fn main", "fn main"],
    ["a\\.b", "a.b"],
    ["c\\+\\+", "c++"],
    ["a.b", undefined],
    ["\\d", undefined],
    ["x|y", undefined],
    ["\\n", undefined],
  ])("%s → %s", (pattern, literal) => {
    expect(literalOf(pattern)).toBe(literal);
  });
});

describe("unsupported features are named", () => {
  it.each([
    ["(a)\\1", "backreferences"],
    ["(?=x)", "lookahead"],
    ["(?!x)", "lookahead"],
    ["(?<=x)", "lookbehind"],
    ["(?<!x)", "lookbehind"],
    ["(?>x)", "atomic groups"],
    ["x*+", "possessive"],
    ["x{2}+", "possessive"],
  ])("%s → %s", (pattern, what) => {
    expect(unsupportedFeature(pattern)).toContain(what);
  });

  it.each([
    "x*?",
    "(?i)x",
    "(?P<name>x)",
    "(?:x)",
    "[?=]",
    "\\(?=",
    "a}+",
    "\\p{Greek}+",
    "\\x{41}+",
    "[[:alpha:]]\\1",
  ])("%s is not flagged here", (pattern) => {
    // "[[:alpha:]]\\1" is flagged by RE2 itself; this scanner only looks outside classes.
    if (pattern.endsWith("\\1")) expect(unsupportedFeature(pattern)).toContain("backreferences");
    else expect(unsupportedFeature(pattern)).toBeUndefined();
  });
});
