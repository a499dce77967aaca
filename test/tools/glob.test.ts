import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type GlobInput, globTool, MAX_GLOB_RESULTS } from "../../src/tools/glob.js";
import { compileGlob, expandBraces, matchSegment, type Token } from "../../src/tools/glob-pattern.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-"));
  const files = [
    "src/a.ts",
    "src/b.js",
    "src/c.tsx",
    "src/deep/x/d.ts",
    "src/deep/y.md",
    "docs/readme.md",
    ".hidden/h.ts",
    ".git/config",
    ".git/objects/o.ts",
    "node_modules/pkg/index.ts",
    "top.ts",
  ];
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), f);
  }
  fs.symlinkSync("src", path.join(dir, "link-dir"));
  fs.symlinkSync("docs/readme.md", path.join(dir, "link-file.md"));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function parse(raw: object): GlobInput {
  const r = globTool.parse(JSON.stringify(raw));
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

async function glob(pattern: string, root?: string, signal?: AbortSignal): Promise<string> {
  const input = parse(root === undefined ? { pattern } : { pattern, root });
  return runTool(globTool, input, makeToolContext({ cwd: dir, ...(signal ? { signal } : {}) }));
}

describe("glob walks", () => {
  it.each([
    ["**/*.ts", [".hidden/h.ts", "src/a.ts", "src/deep/x/d.ts", "top.ts"]],
    ["*.ts", ["top.ts"]],
    ["src/*.ts", ["src/a.ts"]],
    ["src/?.js", ["src/b.js"]],
    ["src/[ab].*", ["src/a.ts", "src/b.js"]],
    ["src/[!ab].*", ["src/c.tsx"]],
    ["src/*.{ts,js}", ["src/a.ts", "src/b.js"]],
    ["src/**/*.md", ["src/deep/y.md"]],
    ["**/deep", ["src/deep/"]],
    [
      "src/**",
      [
        "src/",
        "src/a.ts",
        "src/b.js",
        "src/c.tsx",
        "src/deep/",
        "src/deep/x/",
        "src/deep/x/d.ts",
        "src/deep/y.md",
      ],
    ],
    ["./src//a.ts", ["src/a.ts"]],
    ["link-*", ["link-dir", "link-file.md"]],
    ["**/*.md", ["docs/readme.md", "link-file.md", "src/deep/y.md"]],
    ["node_modules/**/*.ts", ["node_modules/pkg/index.ts"]],
  ])("%s", async (pattern, expected) => {
    expect((await glob(pattern)).split("\n")).toEqual(expected);
  });

  it("never enters .git, even when asked", async () => {
    expect(await glob(".git/**")).toBe('no paths match ".git/**" under "."');
  });

  it("does not follow a symlinked directory", async () => {
    expect(await glob("link-dir/*.ts")).toBe('no paths match "link-dir/*.ts" under "."');
  });

  it("lists relative to root", async () => {
    expect((await glob("**/*.ts", "src")).split("\n")).toEqual(["a.ts", "deep/x/d.ts"]);
  });

  it("caps the list and counts the rest", async () => {
    fs.mkdirSync(path.join(dir, "many"));
    for (let i = 0; i < MAX_GLOB_RESULTS + 7; i++)
      fs.writeFileSync(path.join(dir, "many", `f${String(i).padStart(4, "0")}.txt`), "");
    const out = (await glob("many/*.txt")).split("\n");
    expect(out).toHaveLength(MAX_GLOB_RESULTS + 1);
    expect(out[0]).toBe("many/f0000.txt");
    expect(out[MAX_GLOB_RESULTS - 1]).toBe(`many/f${String(MAX_GLOB_RESULTS - 1).padStart(4, "0")}.txt`);
    expect(out[MAX_GLOB_RESULTS]).toBe("... and 7 more");
  });

  it("stops when the deadline signal has fired", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await glob("**/*.ts", undefined, controller.signal)).toContain("[stopped early");
  });

  it.each([
    [{ pattern: "*.ts", root: "nope" }, 'glob: cannot read root "nope": no such file or directory'],
    [{ pattern: "*.ts", root: "top.ts" }, 'glob: root "top.ts" is not a directory'],
  ])("refuses a bad root %o", async (input, message) => {
    expect(await runTool(globTool, parse(input), makeToolContext({ cwd: dir }))).toBe(message);
  });

  it("declares a read of its root", () => {
    expect(globTool.effects(parse({ pattern: "*" }))).toEqual({ capability: "read", readPaths: ["."] });
    expect(globTool.effects(parse({ pattern: "*", root: "/etc" }))).toEqual({
      capability: "read",
      readPaths: ["/etc"],
    });
  });
});

describe("glob input validation", () => {
  it.each([
    [{ pattern: "../*.ts" }, 'glob: the pattern may not contain ".."'],
    [{ pattern: "/etc/*" }, "glob: the pattern must be relative"],
    [{ pattern: "src/[ab" }, 'glob: unclosed "[" in "[ab"'],
    [{ pattern: "[z-a]" }, "glob: the range z-a in [...] is backwards"],
    [{ pattern: "" }, 'glob: "pattern" must be a non-empty string'],
    [{ pattern: "." }, "glob: the pattern names no files"],
    [{ pattern: "*", root: "" }, 'glob: "root" must be a non-empty string'],
    [{ pattern: "*", depth: 2 }, 'glob: unknown field "depth"'],
    [{ pattern: "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}" }, "expand to more than 64 patterns"],
  ])("%o", (input, message) => {
    const r = globTool.parse(JSON.stringify(input));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });
});

describe("glob segment matching", () => {
  function tokens(seg: string): Token[] {
    const r = compileGlob(seg);
    if (!r.ok) throw new Error(r.error);
    const s = r.value[0]![0]!;
    if (s.kind === "wild") return s.tokens;
    if (s.kind === "literal") return [...s.text].map((c) => ({ t: "char", c }));
    throw new Error("globstar");
  }

  it.each([
    ["*", "anything.txt", true],
    ["*", "", true],
    ["*.ts", ".ts", true],
    ["*.ts", "a.tsx", false],
    ["a*b*c", "aXbYc", true],
    ["a*b*c", "aXbY", false],
    ["*a*b", "xaxxb", true],
    ["?", "ab", false],
    ["[a-c]x", "bx", true],
    ["[!a-c]x", "bx", false],
    ["[]]", "]", true],
    ["\\*", "*", true],
    ["\\*", "a", false],
    ["x[*]y", "x*y", true],
  ])("%s vs %s → %s", (seg, name, expected) => {
    expect(matchSegment(tokens(seg), name)).toBe(expected);
  });

  it("is not exponential on many stars", () => {
    expect(matchSegment(tokens("*a*a*a*a*a*a*a*a*a*a*b"), "a".repeat(250))).toBe(false);
  });

  it("expands braces, nested and escaped", () => {
    expect(expandBraces("a{b,c{d,e}}f")).toEqual({ ok: true, value: ["abf", "acdf", "acef"] });
    expect(expandBraces("x{y}z")).toEqual({ ok: true, value: ["x{y}z"] });
    expect(expandBraces("x\\{a,b}")).toEqual({ ok: true, value: ["x\\{a,b}"] });
  });
});
