import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLIP } from "../../src/tools/clip.js";
import { type FileReadInput, fileReadTool, MAX_READ_BYTES } from "../../src/tools/file_read.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-"));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function read(input: FileReadInput): Promise<string> {
  return runTool(fileReadTool, input, makeToolContext({ cwd: dir }));
}

function numbered(n: number): string {
  return Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");
}

describe("file_read input validation", () => {
  it.each([
    ["src/main.ts", "is not valid JSON"],
    ["[]", "got an array"],
    ['"x"', "got a string"],
    ["{}", '"path" is required'],
    ['{"path": 3}', '"path" must be a string, got the number 3'],
    ['{"path": "  "}', '"path" must be a non-empty string'],
    ['{"path": "a", "lines": 3}', 'unknown field "lines"; allowed: path, offset, limit'],
    ['{"path": "a", "offset": 0}', '"offset" must be >= 1, got 0'],
    ['{"path": "a", "offset": "3"}', '"offset" must be an integer, got a string ("3")'],
    ['{"path": "a", "limit": 1.5}', '"limit" must be an integer, got the number 1.5'],
  ])("%s → %s", (raw, message) => {
    const r = fileReadTool.parse(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toContain(message);
      expect(r.error.startsWith("file_read: ")).toBe(true);
    }
  });

  it("accepts a path with an optional window", () => {
    expect(fileReadTool.parse('{"path": "a.txt", "offset": 3, "limit": 2}')).toEqual({
      ok: true,
      value: { path: "a.txt", offset: 3, limit: 2 },
    });
  });

  it("declares a read of the path as given", () => {
    expect(fileReadTool.effects({ path: "../x" })).toEqual({ capability: "read", readPaths: ["../x"] });
  });
});

describe("file_read whole files", () => {
  it("returns the exact content of a small file, resolved against the project root", async () => {
    fs.writeFileSync(path.join(dir, "a.txt"), "héllo\nworld\n");
    expect(await read({ path: "a.txt" })).toBe("héllo\nworld\n");
  });

  it("says a file is empty", async () => {
    fs.writeFileSync(path.join(dir, "e.txt"), "");
    expect(await read({ path: "e.txt" })).toBe('("e.txt" is empty, 0 bytes)');
  });

  it("warns up front when the content is longer than the observation clip", async () => {
    const text = `${"x".repeat(99)}\n`.repeat(200);
    fs.writeFileSync(path.join(dir, "big.txt"), text);
    const out = await read({ path: "big.txt" });
    expect(out.startsWith('["big.txt": 200 lines, 20000 bytes; the observation is clipped')).toBe(true);
    expect(out.endsWith(text)).toBe(true);
    expect(text.length).toBeGreaterThan(CLIP.file_read);
  });

  it("refuses a file over 1 MiB without a window and suggests offset/limit or grep", async () => {
    fs.writeFileSync(path.join(dir, "huge.log"), "y".repeat(MAX_READ_BYTES + 1));
    const out = await read({ path: "huge.log" });
    expect(out).toContain("over the 1.0 MiB limit");
    expect(out).toContain("offset/limit");
    expect(out).toContain("grep");
  });
});

describe("file_read failures", () => {
  it("reports a missing file", async () => {
    expect(await read({ path: "nope.txt" })).toBe(
      'file_read: cannot read "nope.txt": no such file or directory',
    );
  });

  it("reports a directory and points at glob", async () => {
    fs.mkdirSync(path.join(dir, "sub"));
    expect(await read({ path: "sub" })).toBe('file_read: "sub" is a directory; use glob to list its files');
  });

  it("describes a binary file (NUL byte) by size instead of dumping it", async () => {
    fs.writeFileSync(path.join(dir, "b.bin"), Buffer.from([0x50, 0x4b, 0x00, 0x01, 0x02]));
    expect(await read({ path: "b.bin" })).toBe('file_read: "b.bin" is a binary file, 5 bytes (not shown)');
  });

  it("treats invalid UTF-8 as binary", async () => {
    fs.writeFileSync(path.join(dir, "latin.bin"), Buffer.from([0x63, 0x61, 0xff, 0xfe, 0x41]));
    expect(await read({ path: "latin.bin" })).toContain("binary file, 5 bytes");
  });

  it("does not take a UTF-8 character cut by the 8 KB sniff for binary", async () => {
    // 8191 ASCII bytes then "é" (2 bytes): the sniff window ends inside the character.
    const text = `${"a".repeat(8191)}é\n`;
    fs.writeFileSync(path.join(dir, "edge.txt"), text);
    expect((await read({ path: "edge.txt" })).endsWith(text)).toBe(true);
  });

  it("refuses a named pipe instead of blocking on it", async () => {
    const fifo = path.join(dir, "pipe");
    execFileSync("mkfifo", [fifo]);
    expect(await read({ path: "pipe" })).toBe(
      'file_read: "pipe" is not a regular file (device, socket or pipe)',
    );
  });
});

describe("file_read windows", () => {
  beforeEach(() => {
    fs.writeFileSync(path.join(dir, "five.txt"), `${numbered(5)}\n`);
  });

  it.each([
    [{ offset: 2, limit: 2 }, '["five.txt" lines 2-3 of 5]\nline 2\nline 3'],
    [{ offset: 4 }, '["five.txt" lines 4-5 of 5]\nline 4\nline 5'],
    [{ limit: 1 }, '["five.txt" lines 1-1 of 5]\nline 1'],
    [{ offset: 5, limit: 10 }, '["five.txt" lines 5-5 of 5]\nline 5'],
    [{ offset: 1, limit: 5 }, '["five.txt" lines 1-5 of 5]\nline 1\nline 2\nline 3\nline 4\nline 5'],
  ])("%o", async (window, expected) => {
    expect(await read({ path: "five.txt", ...window })).toBe(expected);
  });

  it("counts a last line without a newline", async () => {
    fs.writeFileSync(path.join(dir, "nonl.txt"), "a\nb\nc");
    expect(await read({ path: "nonl.txt", offset: 2 })).toBe('["nonl.txt" lines 2-3 of 3]\nb\nc');
  });

  it("reports an offset past the end with the line count", async () => {
    expect(await read({ path: "five.txt", offset: 9 })).toBe(
      'file_read: offset 9 is past the end of "five.txt", which has 5 lines',
    );
  });

  it("reads a window out of a file far over 1 MiB and says the file goes on", async () => {
    const body = `${numbered(200_000)}\n`; // about 2.3 MB
    fs.writeFileSync(path.join(dir, "long.log"), body);
    const out = await read({ path: "long.log", offset: 150_000, limit: 3 });
    expect(out).toBe(
      `["long.log" lines 150000-150002; the file goes on (${(body.length / 1048576).toFixed(1)} MiB in all)]\nline 150000\nline 150001\nline 150002`,
    );
  });

  it("stops a window at 1 MiB and says where to continue", async () => {
    const line = "z".repeat(600 * 1024);
    fs.writeFileSync(path.join(dir, "wide.txt"), `${line}\n${line}\n${line}\n`);
    const out = await read({ path: "wide.txt", offset: 1 });
    const [header, ...rest] = out.split("\n");
    expect(header).toBe('["wide.txt" lines 1-1; stopped at 1.0 MiB, continue with offset 2]');
    expect(rest).toEqual([line]);
  });

  it("refuses a single line longer than 1 MiB", async () => {
    fs.writeFileSync(path.join(dir, "one.txt"), `short\n${"q".repeat(MAX_READ_BYTES + 10)}\n`);
    expect(await read({ path: "one.txt", offset: 2 })).toBe(
      'file_read: line 2 of "one.txt" alone is over 1.0 MiB',
    );
  });

  it("still describes a binary file when a window is asked for", async () => {
    fs.writeFileSync(path.join(dir, "b.bin"), Buffer.from([1, 0, 2, 10, 3]));
    expect(await read({ path: "b.bin", offset: 1, limit: 1 })).toContain("binary file, 5 bytes");
  });
});
