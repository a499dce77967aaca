import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { atomicWriteFile } from "../../src/core/atomic-write.js";
import { type FileWriteInput, fileWriteTool } from "../../src/tools/file_write.js";
import { makeToolContext, runTool, unrestrictedTarget } from "../helpers/tool-context.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-"));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function write(input: FileWriteInput): Promise<string> {
  return runTool(fileWriteTool, input, makeToolContext({ cwd: dir }));
}

/** Every entry under `root`, so a test can prove no temporary file was left behind. */
function listAll(root: string): string[] {
  return fs.readdirSync(root, { recursive: true, encoding: "utf8" }).sort();
}

describe("file_write input validation", () => {
  it.each([
    ["notes", "is not valid JSON"],
    ['{"path": "a"}', '"content" is required'],
    ['{"content": "x"}', '"path" is required'],
    ['{"path": "a", "content": 5}', '"content" must be a string, got the number 5'],
    ['{"path": "", "content": "x"}', '"path" must be a non-empty string'],
    ['{"path": "a", "content": "x", "mode": "755", "append": true}', 'unknown fields "mode", "append"'],
  ])("%s → %s", (raw, message) => {
    const r = fileWriteTool.parse(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.startsWith("file_write: ")).toBe(true);
      expect(r.error).toContain(message);
    }
  });

  it("accepts empty content", () => {
    expect(fileWriteTool.parse('{"path": "a", "content": ""}')).toEqual({
      ok: true,
      value: { path: "a", content: "" },
    });
  });

  it("declares a write of the path as given", () => {
    expect(fileWriteTool.effects({ path: "out/x.txt", content: "" })).toEqual({
      capability: "write",
      writePaths: ["out/x.txt"],
    });
  });
});

describe("file_write", () => {
  it("creates a file and its missing parents, and counts bytes", async () => {
    expect(await write({ path: "a/b/c.txt", content: "héllo" })).toBe(
      'wrote 6 bytes to "a/b/c.txt" (created)',
    );
    expect(fs.readFileSync(path.join(dir, "a/b/c.txt"), "utf8")).toBe("héllo");
    expect(listAll(dir)).toEqual(["a", "a/b", "a/b/c.txt"]);
  });

  it("replaces a file whole and keeps its permission bits", async () => {
    const f = path.join(dir, "run.sh");
    fs.writeFileSync(f, "old contents that are longer\n");
    fs.chmodSync(f, 0o751);
    expect(await write({ path: "run.sh", content: "#!/bin/sh\n" })).toBe(
      'wrote 10 bytes to "run.sh" (replaced)',
    );
    expect(fs.readFileSync(f, "utf8")).toBe("#!/bin/sh\n");
    expect(fs.statSync(f).mode & 0o7777).toBe(0o751);
    expect(listAll(dir)).toEqual(["run.sh"]);
  });

  it("writes through a symlink and leaves the link in place", async () => {
    fs.writeFileSync(path.join(dir, "real.txt"), "before");
    fs.symlinkSync("real.txt", path.join(dir, "link.txt"));
    expect(await write({ path: "link.txt", content: "after" })).toContain("(replaced)");
    expect(fs.lstatSync(path.join(dir, "link.txt")).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(dir, "real.txt"), "utf8")).toBe("after");
  });

  it("writes through a dangling symlink to where it points (the file the gate judged)", async () => {
    fs.symlinkSync("missing.txt", path.join(dir, "dangling"));
    expect(await write({ path: "dangling", content: "x" })).toContain("(created)");
    expect(fs.lstatSync(path.join(dir, "dangling")).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(dir, "missing.txt"), "utf8")).toBe("x");
  });

  it("refuses a symlink put at the judged path after the decision, and changes nothing", async () => {
    fs.writeFileSync(path.join(dir, "real.txt"), "before");
    fs.writeFileSync(path.join(dir, "other.txt"), "other");
    const input = { path: "real.txt", content: "after" };
    const ctx = makeToolContext({ cwd: dir });
    const target = unrestrictedTarget(fileWriteTool, input, dir);
    // The race the pipeline cannot close: the final component swapped for a link.
    fs.rmSync(path.join(dir, "real.txt"));
    fs.symlinkSync("other.txt", path.join(dir, "real.txt"));
    expect((await fileWriteTool.run(input, ctx, target)).text).toContain(
      "replaced by a symlink after the policy check",
    );
    expect(fs.readFileSync(path.join(dir, "other.txt"), "utf8")).toBe("other");
  });

  it("refuses to replace a directory", async () => {
    fs.mkdirSync(path.join(dir, "d"));
    fs.writeFileSync(path.join(dir, "d", "keep.txt"), "k");
    expect(await write({ path: "d", content: "x" })).toBe('file_write: "d" is a directory');
    expect(listAll(dir)).toEqual(["d", "d/keep.txt"]);
  });

  it("reports a parent that is a file and creates nothing", async () => {
    fs.writeFileSync(path.join(dir, "plain"), "p");
    const out = await write({ path: "plain/child.txt", content: "x" });
    expect(out).toBe('file_write: cannot write "plain/child.txt": a parent of the path is not a directory');
    expect(listAll(dir)).toEqual(["plain"]);
    expect(fs.readFileSync(path.join(dir, "plain"), "utf8")).toBe("p");
  });

  it("handles a file name too long to prefix: the temporary name stays short", async () => {
    const name = `${"n".repeat(250)}.txt`;
    expect(await write({ path: name, content: "ok" })).toContain("(created)");
    expect(listAll(dir)).toEqual([name]);
  });
});

describe("atomicWriteFile", () => {
  it("leaves the target untouched and no temporary file when the rename fails", () => {
    // Renaming a file onto a non-empty directory fails even for root: a real, late failure.
    const target = path.join(dir, "target");
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, "inside.txt"), "original");
    const r = atomicWriteFile(target, "new content");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/directory|not empty|ENOTEMPTY|EISDIR/);
    expect(listAll(dir)).toEqual(["target", "target/inside.txt"]);
    expect(fs.readFileSync(path.join(target, "inside.txt"), "utf8")).toBe("original");
  });

  it("leaves nothing behind when the temporary file cannot be created", () => {
    const r = atomicWriteFile(path.join(dir, "no-such-dir", "f.txt"), "x");
    expect(r).toEqual({ ok: false, error: "no such file or directory" });
    expect(listAll(dir)).toEqual([]);
  });

  it("applies an explicit mode exactly, regardless of the umask", () => {
    const f = path.join(dir, "m.txt");
    const old = process.umask(0o077);
    try {
      expect(atomicWriteFile(f, "x", { mode: 0o644 })).toEqual({ ok: true, value: 1 });
    } finally {
      process.umask(old);
    }
    expect(fs.statSync(f).mode & 0o777).toBe(0o644);
  });
});
