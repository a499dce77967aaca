import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FileEditInput, fileEditTool } from "../../src/tools/file_edit.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-"));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function edit(input: FileEditInput): Promise<string> {
  return runTool(fileEditTool, input, makeToolContext({ cwd: dir }));
}

function put(name: string, content: string | Buffer): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, content);
  return f;
}

describe("file_edit input validation", () => {
  it.each([
    ['{"path": "a", "old": "", "new": "x"}', 'file_edit: "old" must be a non-empty string'],
    ['{"path": "a", "new": "x"}', 'file_edit: "old" is required'],
    ['{"path": "a", "old": "x"}', 'file_edit: "new" is required'],
    ['{"path": "a", "old": 1, "new": "x"}', 'file_edit: "old" must be a string, got the number 1'],
    ['{"path": "a", "old": "same", "new": "same"}', 'file_edit: "old" and "new" are identical'],
    ['{"path": "a", "old": "x", "new": "y", "all": true}', 'file_edit: unknown field "all"'],
    [
      '{"path": "a", "old": "x", "new": "y", "count": 2, "all": true}',
      'file_edit: unknown fields "count", "all"',
    ],
  ])("%s", (raw, message) => {
    const r = fileEditTool.parse(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });

  it("accepts whitespace-only old text and an empty replacement", () => {
    expect(fileEditTool.parse('{"path": "a", "old": "  ", "new": ""}')).toEqual({
      ok: true,
      value: { path: "a", old: "  ", new: "" },
    });
  });
});

describe("file_edit", () => {
  it("replaces the single occurrence and leaves every other byte alone", async () => {
    const f = put("a.ts", "const a = 1;\nconst b = 2;\nconst c = 3;\n");
    fs.chmodSync(f, 0o640);
    expect(await edit({ path: "a.ts", old: "const b = 2;", new: "const b = 20;\nconst bb = 21;" })).toBe(
      'edited "a.ts": replaced 1 occurrence at line 2 (1 line -> 2)',
    );
    expect(fs.readFileSync(f, "utf8")).toBe("const a = 1;\nconst b = 20;\nconst bb = 21;\nconst c = 3;\n");
    expect(fs.statSync(f).mode & 0o777).toBe(0o640);
    expect(fs.readdirSync(dir)).toEqual(["a.ts"]);
  });

  it("inserts the replacement literally ($& and $1 are not special)", async () => {
    const f = put("p.txt", "price: X\n");
    await edit({ path: "p.txt", old: "X", new: "$& $1 $$" });
    expect(fs.readFileSync(f, "utf8")).toBe("price: $& $1 $$\n");
  });

  it("deletes text when new is empty", async () => {
    const f = put("d.txt", "keep drop keep");
    await edit({ path: "d.txt", old: " drop", new: "" });
    expect(fs.readFileSync(f, "utf8")).toBe("keep keep");
  });

  it("fails with 0 occurrences when old is missing, and changes nothing", async () => {
    const f = put("m.txt", "alpha\nbeta\n");
    const before = fs.statSync(f).mtimeMs;
    expect(await edit({ path: "m.txt", old: "gamma", new: "delta" })).toBe(
      'file_edit: "old" was not found in "m.txt" (0 occurrences); file_read it and copy the exact text, whitespace included; nothing was changed',
    );
    expect(fs.readFileSync(f, "utf8")).toBe("alpha\nbeta\n");
    expect(fs.statSync(f).mtimeMs).toBe(before);
  });

  it("fails with the count and the lines when old is not unique, and changes nothing", async () => {
    const f = put("n.txt", "x = 1\ny = 2\nx = 1\nz\nx = 1\n");
    expect(await edit({ path: "n.txt", old: "x = 1", new: "x = 9" })).toBe(
      'file_edit: "old" occurs 3 times in "n.txt" (at lines 1, 3, 5); include more surrounding text so it matches exactly once; nothing was changed',
    );
    expect(fs.readFileSync(f, "utf8")).toBe("x = 1\ny = 2\nx = 1\nz\nx = 1\n");
  });

  it("counts overlapping occurrences as ambiguous", async () => {
    put("o.txt", "aaa");
    expect(await edit({ path: "o.txt", old: "aa", new: "b" })).toContain('"old" occurs 2 times');
  });

  it("matches LF text against a CRLF file and keeps its line ends", async () => {
    const f = put("w.txt", "one\r\ntwo\r\nthree\r\n");
    expect(await edit({ path: "w.txt", old: "one\ntwo", new: "1\n2" })).toContain("CRLF");
    expect(fs.readFileSync(f, "utf8")).toBe("1\r\n2\r\nthree\r\n");
  });

  it.each([
    ["a missing file", "ghost.txt", 'file_edit: "ghost.txt" does not exist; use file_write to create it'],
    ["a directory", "sub", 'file_edit: "sub" is a directory'],
    ["a binary file", "bin.dat", 'file_edit: "bin.dat" is a binary file, 4 bytes; not edited'],
  ])("refuses %s", async (_what, name, message) => {
    fs.mkdirSync(path.join(dir, "sub"));
    put("bin.dat", Buffer.from([0x41, 0, 0x42, 0x43]));
    expect(await edit({ path: name, old: "A", new: "Z" })).toBe(message);
    expect(fs.readFileSync(path.join(dir, "bin.dat"))).toEqual(Buffer.from([0x41, 0, 0x42, 0x43]));
  });
});
