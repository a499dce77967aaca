/**
 * file_read through an editor's buffer (ACP `fs/read_text_file`) while a helper process swaps
 * the file's directory for a link to an outside directory and back, as fast as it can. The
 * editor reads by path, as real editors do, so without the checks in src/tools/editor-read.ts
 * it hands over the outside file now and then (16 of 200 reads did). With them, no read may
 * return outside text; without the racer, the editor's unsaved text is what the model reads.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { canJudgeDescriptors } from "../../src/core/fd-path.js";
import { judgeReadPath } from "../../src/policy/paths.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import { readThroughEditor } from "../../src/tools/editor-read.js";
import { fileReadTool } from "../../src/tools/file_read.js";
import type { EditorBuffers } from "../../src/tools/types.js";
import { removeDir, tempDir } from "../helpers/cli.js";
import { killSwappers, startDirSwapper } from "../helpers/procs.js";
import { makeToolContext } from "../helpers/tool-context.js";

const READS = 200;
const SECRET = "OUTSIDE-SECRET-e41a";

let base: string;
let project: string;
let outside: string;
beforeEach(() => {
  base = fs.realpathSync(tempDir("scoot-editor-race-"));
  project = path.join(base, "project");
  outside = path.join(base, "outside");
  fs.mkdirSync(path.join(project, "sub"), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(project, "sub", "f.txt"), "inside text\n");
  fs.writeFileSync(path.join(outside, "f.txt"), `${SECRET}\n`);
});
afterEach(() => {
  killSwappers();
  removeDir(base);
});

/** An editor that reads by path, as editors do, and marks what it served as its buffer. */
const pathReadingEditor: EditorBuffers = {
  async read(abs) {
    return `BUFFER ${await fs.promises.readFile(abs, "utf8")}`;
  },
};

/** As the pipeline: judged in readonly for the project (an outside path is denied), then run. */
async function read(input: { path: string }): Promise<string> {
  const settings = buildGateSettings(defaultConfig(), project, { mode: "readonly" });
  const v = judgeReadPath(input.path, settings);
  if (!v.allow) return `denied: ${v.reason}`;
  const ctx = makeToolContext({
    cwd: project,
    mode: "readonly",
    services: { editorBuffers: pathReadingEditor },
  });
  return (await fileReadTool.run(input, ctx, { read: [v.target], write: [] })).text;
}

describe.skipIf(process.platform !== "linux" || !canJudgeDescriptors())("reads through the editor", () => {
  it("without a racer, the editor's text is what the model reads", async () => {
    expect(await read({ path: "sub/f.txt" })).toContain("BUFFER inside text");
  });

  it("a rename beside the file while the editor reads makes Scoot read its own descriptor", async () => {
    const abs = path.join(project, "sub", "f.txt");
    const fd = fs.openSync(abs, "r");
    try {
      const editor: EditorBuffers = {
        async read(p) {
          // The swap and the swap back both happen inside the read: identities match afterwards.
          fs.renameSync(path.join(project, "sub"), path.join(project, "sub.real"));
          fs.symlinkSync(outside, path.join(project, "sub"));
          const text = await fs.promises.readFile(p, "utf8");
          fs.unlinkSync(path.join(project, "sub"));
          fs.renameSync(path.join(project, "sub.real"), path.join(project, "sub"));
          return text;
        },
      };
      const out = await readThroughEditor(editor, abs, fd, new AbortController().signal);
      expect(out).toEqual({ refused: "renamed-nearby" });
    } finally {
      fs.closeSync(fd);
    }
  });

  it("a rename elsewhere in a directory of the path (a busy /tmp, a home) does not refuse the editor", async () => {
    const abs = path.join(project, "sub", "f.txt");
    fs.writeFileSync(path.join(project, "other.txt"), "x");
    const fd = fs.openSync(abs, "r");
    try {
      const editor: EditorBuffers = {
        async read(p) {
          fs.renameSync(path.join(project, "other.txt"), path.join(project, "other2.txt"));
          fs.mkdirSync(path.join(base, "neighbour"));
          return `BUFFER ${await fs.promises.readFile(p, "utf8")}`;
        },
      };
      expect(await readThroughEditor(editor, abs, fd, new AbortController().signal)).toEqual({
        text: "BUFFER inside text\n",
      });
    } finally {
      fs.closeSync(fd);
    }
  });

  it(`${READS} reads under a directory swap: no read returns the outside file`, async () => {
    const swapper = await startDirSwapper(path.join(project, "sub"), outside);
    const leaked: string[] = [];
    let fromEditor = 0;
    for (let i = 0; i < READS; i++) {
      const text = await read({ path: "sub/f.txt" });
      if (text.includes(SECRET)) leaked.push(text);
      if (text.includes("BUFFER")) fromEditor += 1;
    }
    const swaps = await swapper.stop();
    expect(swaps).toBeGreaterThan(0);
    expect(leaked).toEqual([]);
    // Reads that won the race still count as reads: each is the file, from disk or from the editor.
    expect(fromEditor).toBeLessThanOrEqual(READS);
  }, 60_000);
});
