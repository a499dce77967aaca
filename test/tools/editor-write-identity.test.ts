/**
 * A write through the editor is verified by identity afterwards (src/tools/editor-write.ts):
 * when the file at the judged path is not what the editor was asked to write — the write went
 * through a link swapped in and out during it — the call fails and says so. An editor that
 * writes in place, replaces the file, or skips a save that changes nothing is fine.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeThroughEditor } from "../../src/tools/editor-write.js";
import type { EditorBuffers, EditorWrite } from "../../src/tools/types.js";
import { removeDir, tempDir } from "../helpers/cli.js";

let base: string;
let project: string;
let elsewhere: string;
beforeEach(() => {
  base = fs.realpathSync(tempDir("scoot-ew-id-"));
  project = path.join(base, "project");
  elsewhere = path.join(base, "elsewhere.txt");
  fs.mkdirSync(path.join(project, "sub"), { recursive: true });
  fs.writeFileSync(path.join(project, "sub", "notes.md"), "old\n");
});
afterEach(() => removeDir(base));

const editor: EditorBuffers = { read: async () => undefined };
const signal = new AbortController().signal;

function request(file: string, write: EditorWrite, expected: Buffer | null) {
  return writeThroughEditor({
    editor,
    write,
    abs: path.join(project, file),
    content: "new\n",
    expected,
    signal,
    lockDir: path.join(base, "locks"),
  });
}

describe("the file the editor wrote is the file judged", () => {
  const wrote: [string, EditorWrite][] = [
    ["in place", async (p, c) => fs.writeFileSync(p, c)],
    [
      "by replacing it",
      async (p, c) => {
        fs.writeFileSync(`${p}.tmp`, c);
        fs.renameSync(`${p}.tmp`, p);
      },
    ],
  ];
  it.each(wrote)("an editor that writes %s: the call succeeds", async (_how, write) => {
    expect(await request("sub/notes.md", write, null)).toEqual({ ok: true, value: undefined });
    expect(fs.readFileSync(path.join(project, "sub", "notes.md"), "utf8")).toBe("new\n");
  });

  it("an editor that skips a save changing nothing: the call succeeds", async () => {
    fs.writeFileSync(path.join(project, "sub", "notes.md"), "new\n");
    expect((await request("sub/notes.md", async () => {}, null)).ok).toBe(true);
  });

  it("a write that went elsewhere, the file at the path untouched: the call fails and says so", async () => {
    const r = await request("sub/notes.md", async (_p, c) => fs.writeFileSync(elsewhere, c), null);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error).toMatch(
        /did not reach the file Scoot judged.*\(the file at its path was not changed\)/,
      );
  });

  it("a new file written elsewhere: nothing is at its path, and the call says so", async () => {
    const r = await request("sub/fresh.md", async (_p, c) => fs.writeFileSync(elsewhere, c), null);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/did not reach the file Scoot judged.*no file is at its path now/);
  });

  it("a file left with a second name (hard-linked during the write): the call fails", async () => {
    const r = await request(
      "sub/notes.md",
      async (p, c) => {
        fs.writeFileSync(p, c);
        fs.linkSync(p, path.join(base, "second-name"));
      },
      null,
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/now has 2 names/);
  });
});
