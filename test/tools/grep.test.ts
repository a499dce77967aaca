import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type GrepInput, grepTool, MAX_CONTEXT, MAX_HITS } from "../../src/tools/grep.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-"));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function parse(raw: object | string): GrepInput {
  const r = grepTool.parse(typeof raw === "string" ? raw : JSON.stringify(raw));
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

async function grep(pattern: string, file: string, context?: number, signal?: AbortSignal): Promise<string> {
  const input = parse({ pattern, path: file, ...(context === undefined ? {} : { context }) });
  return runTool(grepTool, input, makeToolContext({ cwd: dir, ...(signal ? { signal } : {}) }));
}

function put(name: string, content: string | Buffer): void {
  fs.writeFileSync(path.join(dir, name), content);
}

describe("grep input validation", () => {
  it.each([
    [{ pattern: "(", path: "a" }, "grep: invalid pattern: missing closing ): `(`"],
    [{ pattern: "[a-", path: "a" }, "grep: invalid pattern: missing closing ]"],
    [{ pattern: "a**", path: "a" }, "grep: invalid pattern: invalid nested repetition operator"],
    [{ pattern: "(a)\\1", path: "a" }, "grep: backreferences such as \\1 are not supported"],
    [{ pattern: "(?<n>a)\\k<n>", path: "a" }, "grep: named backreferences"],
    [{ pattern: "foo(?=bar)", path: "a" }, "grep: lookahead ((?=...) and (?!...)) is not supported"],
    [{ pattern: "(?<!x)y", path: "a" }, "grep: lookbehind ((?<=...) and (?<!...)) is not supported"],
    [{ pattern: "(?>a+)b", path: "a" }, "grep: atomic groups"],
    [{ pattern: "a++", path: "a" }, "grep: possessive quantifiers such as ++ are not supported"],
    [{ pattern: "", path: "a" }, 'grep: "pattern" must be a non-empty string'],
    [{ pattern: "x".repeat(1001), path: "a" }, "at most 1000 are allowed"],
    [{ pattern: "a" }, 'grep: "path" is required'],
    [{ pattern: "a", path: "a", context: "2" }, 'grep: "context" must be an integer, got a string ("2")'],
    [{ pattern: "a", path: "a", ignore_case: true }, 'grep: unknown field "ignore_case"'],
  ])("%o", (input, message) => {
    const r = grepTool.parse(JSON.stringify(input));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });

  it("does not take escaped or bracketed look-alikes for unsupported syntax", () => {
    for (const pattern of ["\\\\1", "[\\d]", "[(?=]", "a\\(?=", "[[:digit:]]+"]) {
      expect(grepTool.parse(JSON.stringify({ pattern, path: "a" })).ok, pattern).toBe(true);
    }
  });

  it.each([
    [50, MAX_CONTEXT],
    [-3, 0],
    [5, 5],
  ])("clamps context %i to %i", (given, expected) => {
    expect(parse({ pattern: "a", path: "a", context: given }).context).toBe(expected);
  });

  it("declares a read of the path", () => {
    expect(grepTool.effects(parse({ pattern: "a", path: "src/x.ts" }))).toEqual({
      capability: "read",
      readPaths: ["src/x.ts"],
    });
  });
});

describe("grep output", () => {
  const lines = Array.from({ length: 30 }, (_, i) => `row ${i + 1}`);

  beforeEach(() => {
    const marked = lines.map((l, i) => ([5, 7, 20].includes(i + 1) ? `${l} HIT` : l));
    put("t.txt", `${marked.join("\n")}\n`);
  });

  it("prints hits as N:text", async () => {
    expect(await grep("HIT$", "t.txt")).toBe("5:row 5 HIT\n7:row 7 HIT\n20:row 20 HIT");
  });

  it("merges overlapping context blocks and separates the others with --", async () => {
    expect(await grep("HIT", "t.txt", 2)).toBe(
      [
        "3-row 3",
        "4-row 4",
        "5:row 5 HIT",
        "6-row 6",
        "7:row 7 HIT",
        "8-row 8",
        "9-row 9",
        "--",
        "18-row 18",
        "19-row 19",
        "20:row 20 HIT",
        "21-row 21",
        "22-row 22",
      ].join("\n"),
    );
  });

  it("merges blocks that merely touch", async () => {
    // Hits 5 and 7 with context 1: 4-6 and 6-8 overlap; 20 is apart.
    const out = await grep("HIT", "t.txt", 1);
    expect(out).toBe(
      "4-row 4\n5:row 5 HIT\n6-row 6\n7:row 7 HIT\n8-row 8\n--\n19-row 19\n20:row 20 HIT\n21-row 21",
    );
  });

  it("clips context at the start and the end of the file", async () => {
    expect(await grep("^row (1|30)$", "t.txt", 3)).toBe(
      "1:row 1\n2-row 2\n3-row 3\n4-row 4\n--\n27-row 27\n28-row 28\n29-row 29\n30:row 30",
    );
  });

  it("says when nothing matches", async () => {
    expect(await grep("absent", "t.txt")).toBe('no matches for "absent" in "t.txt"');
  });

  it("caps the hits and counts the rest", async () => {
    put("many.txt", Array.from({ length: MAX_HITS + 100 }, (_, i) => `m${i}`).join("\n"));
    const out = (await grep("^m", "many.txt")).split("\n");
    expect(out).toHaveLength(MAX_HITS + 1);
    expect(out[MAX_HITS - 1]).toBe(`${MAX_HITS}:m${MAX_HITS - 1}`);
    expect(out[MAX_HITS]).toBe(
      `[... and 100 more matching lines not shown (${MAX_HITS + 100} in all); narrow the pattern]`,
    );
  });

  it("treats CRLF line ends as line ends: $ anchors before \\r and \\r is not printed", async () => {
    put("w.txt", "alpha\r\nbetx\r\ngamma");
    expect(await grep("a$", "w.txt", 1)).toBe("1:alpha\n2-betx\n3:gamma");
  });

  it("supports the documented syntax: . ^ $ * + ? [] () | \\d \\w \\s", async () => {
    put("s.txt", "id_42 = 7\nfoo bar\n  x9\nbaz\n");
    expect(await grep("^\\w+\\s=\\s\\d$", "s.txt")).toBe("1:id_42 = 7");
    expect(await grep("^(foo|baz)( ba.)?$", "s.txt")).toBe("2:foo bar\n4:baz");
    expect(await grep("^\\s+[a-z]\\d*$", "s.txt")).toBe("3:  x9");
    expect(await grep("(?i)FOO", "s.txt")).toBe("2:foo bar");
  });

  it("shows a window around the match on a very long line", async () => {
    put("min.js", `${"a".repeat(5000)}NEEDLE${"b".repeat(5000)}\n`);
    for (const pattern of ["NEEDLE", "NEE+DLE"]) {
      const out = await grep(pattern, "min.js");
      expect(out).toMatch(/^1:\[\d+ bytes\] \.\.\. a+NEEDLEb+ \.\.\. \[\d+ more bytes\]$/);
      expect(out.length).toBeLessThan(1200);
    }
  });
});

describe("grep refusals", () => {
  it("reports a missing file", async () => {
    expect(await grep("x", "nope.txt")).toBe('grep: cannot read "nope.txt": no such file or directory');
  });

  it("reports a directory", async () => {
    fs.mkdirSync(path.join(dir, "src"));
    expect(await grep("x", "src")).toBe(
      'grep: "src" is a directory; grep searches one file (use glob to find files first)',
    );
  });

  it("does not search a binary file", async () => {
    put("b.bin", Buffer.from([0x78, 0x00, 0x78, 0x0a]));
    expect(await grep("x", "b.bin")).toBe('grep: "b.bin" is a binary file, 4 bytes; not searched');
  });
});

describe("grep is linear-time", () => {
  it("returns promptly with no match for (a+)+$ against 100 000 a's followed by b", async () => {
    put("evil.txt", `${"a".repeat(100_000)}b\n`);
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(), 20_000);
    try {
      expect(await grep("(a+)+$", "evil.txt", 0, controller.signal)).toBe(
        'no matches for "(a+)+$" in "evil.txt"',
      );
      expect(controller.signal.aborted).toBe(false);
    } finally {
      clearTimeout(deadline);
    }
  });

  it("handles many lines of the same trap", async () => {
    put("evil2.txt", `${"a".repeat(3000)}b\n`.repeat(300));
    expect(await grep("^(a|aa)+$", "evil2.txt")).toBe('no matches for "^(a|aa)+$" in "evil2.txt"');
  });
});

describe("grep streams big files", () => {
  /** The same search done the obvious way: all lines in memory, JS RegExp (safe here: simple pattern). */
  function reference(text: string, re: RegExp, context: number): string {
    const all = text.split("\n");
    if (all[all.length - 1] === "") all.pop();
    const hits = all.map((l, i) => (re.test(l) ? i : -1)).filter((i) => i >= 0);
    const show = new Map<number, boolean>();
    for (const h of hits) {
      for (let i = Math.max(0, h - context); i <= Math.min(all.length - 1, h + context); i++) {
        show.set(i, show.get(i) === true || i === h);
      }
    }
    const out: string[] = [];
    let last = -2;
    for (const i of [...show.keys()].sort((a, b) => a - b)) {
      if (context > 0 && last >= 0 && i > last + 1) out.push("--");
      out.push(`${i + 1}${show.get(i) ? ":" : "-"}${all[i]}`);
      last = i;
    }
    return out.join("\n");
  }

  it("agrees with an in-memory reference across chunk boundaries (several MiB, with context)", async () => {
    const rows: string[] = [];
    for (let i = 1; i <= 120_000; i++)
      rows.push(`L${i} ${"é".repeat(i % 7)}${"x".repeat(i % 40)} ${i % 1000 === 777 ? "mark" : ""}`);
    const text = `${rows.join("\n")}\n`;
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 * 1024 * 1024);
    put("big.txt", text);
    const capped: boolean[] = [];
    for (const [pattern, re, context] of [
      ["mark$", /mark$/, 3],
      ["^L11\\d99 ", /^L11\d99 /, 20],
      ["^L1\\d{3}99 ", /^L1\d{3}99 /, 20], // so much context that the output size cap applies
      ["^L\\d*0 ", /^L\d*0 /, 0], // 12 000 hits: capped, then counted without line numbers
      ["L119999 ", /L119999 /, 0], // a literal only in the last chunk: earlier chunks are counted late
    ] as const) {
      const out = await grep(pattern, "big.txt", context);
      const expected = reference(text, re, context);
      const hits = expected.split("\n").filter((l) => /^\d+:/.test(l)).length;
      const lines = out.split("\n");
      const note =
        /^\[\.\.\. and (\d+) more matching lines not shown \((\d+) in all\); narrow the pattern\]$/.exec(
          lines[lines.length - 1]!,
        );
      capped.push(note !== null);
      if (note) {
        // Capped (by hit count or output size): what is shown is the reference's prefix, and the count is exact.
        expect(Number(note[2]), pattern).toBe(hits);
        expect(lines.slice(0, -1).join("\n"), pattern).toBe(
          expected
            .split("\n")
            .slice(0, lines.length - 1)
            .join("\n"),
        );
      } else {
        expect(out, pattern).toBe(expected);
      }
    }
    expect(capped).toEqual([false, false, true, true, false]);
  });

  it("grows its buffer for a line longer than a chunk", async () => {
    put("wide.txt", `first\n${"w".repeat(2_500_000)}END\nlast END\n`);
    const out = await grep("END$", "wide.txt");
    expect(out).toMatch(/^2:\[\d+ bytes\] \.\.\. w+END\n3:last END$/);
  });

  it("finds nothing in an empty file", async () => {
    put("empty.txt", "");
    expect(await grep("x", "empty.txt")).toBe('no matches for "x" in "empty.txt"');
  });

  it("stops at the deadline with what it found so far", async () => {
    put("s.txt", "a\nb\n");
    const controller = new AbortController();
    controller.abort();
    expect(await grep("a", "s.txt", 0, controller.signal)).toBe(
      'no matches for "a" in "s.txt"\n[stopped early after 0 of 4 bytes: the tool deadline was reached; counts are partial]',
    );
  });
});
