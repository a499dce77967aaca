/**
 * The race between the gate's decision and the open (docs/safety.md "Safety model", "What was opened"): a
 * helper process swaps a project subdirectory for a symlink to an outside directory as fast
 * as it can while 200 readonly reads (file_read, grep, outline, glob) and 100 guarded writes
 * (file_write, file_edit) run the way the call pipeline runs them: judged, recorded in the
 * audit log (fdatasync), then run. No read may return the outside file, no file may appear
 * outside. Linux only (descriptors are judged through /proc).
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { canJudgeDescriptors } from "../../src/core/fd-path.js";
import { judgeReadPath, judgeWritePath } from "../../src/policy/paths.js";
import { resolvePhysical } from "../../src/policy/realpath.js";
import type { GateSettings } from "../../src/policy/types.js";
import { createAuditLog } from "../../src/store/audit-writer.js";
import { fileEditTool } from "../../src/tools/file_edit.js";
import { fileReadTool } from "../../src/tools/file_read.js";
import { fileWriteTool } from "../../src/tools/file_write.js";
import { globTool } from "../../src/tools/glob.js";
import { grepTool } from "../../src/tools/grep.js";
import { outlineTool } from "../../src/tools/outline.js";
import type { AnyTool } from "../../src/tools/types.js";
import { removeDir, tempDir } from "../helpers/cli.js";
import { killSwappers, startDirSwapper } from "../helpers/procs.js";
import { makeToolContext } from "../helpers/tool-context.js";

const READS = 200;
const WRITES = 100;
const SECRET = "OUTSIDE-SECRET-7c1d";

let base: string;
let project: string;
let outside: string;
beforeEach(() => {
  base = fs.realpathSync(tempDir("scoot-race-"));
  project = path.join(base, "project");
  outside = path.join(base, "outside");
  fs.mkdirSync(path.join(project, "sub"), { recursive: true });
  fs.mkdirSync(outside);
  for (const dir of [path.join(project, "sub"), outside]) {
    const inside = dir !== outside;
    fs.writeFileSync(path.join(dir, "f.txt"), inside ? "inside text\n" : `${SECRET} inside text\n`);
    fs.writeFileSync(
      path.join(dir, "e.ts"),
      inside ? "export const a = 1;\n" : `export const ${SECRET.replace(/-/g, "_")} = 1;\n`,
    );
  }
  // A name only the outside directory holds: a glob that lists it walked outside.
  fs.writeFileSync(path.join(outside, "OUTSIDE-name.txt"), "");
});
afterEach(() => {
  killSwappers();
  removeDir(base);
});

/** glob's input as its declaration parses it (defaults and alternatives filled in). */
function globInput(raw: { pattern: string; root?: string }): unknown {
  const r = globTool.parse(JSON.stringify(raw));
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

function settings(mode: "readonly" | "guarded"): GateSettings {
  return {
    mode,
    projectRoot: project,
    confineWrites: true,
    blockInternalHttp: false,
    secretPaths: [],
    protectedPaths: [],
    readableInside: [],
    protectedIdentities: new Set(),
    mcpAllowed: {},
    realpath: resolvePhysical,
  };
}

it.skipIf(process.platform !== "linux" || !canJudgeDescriptors())(
  "200 readonly reads and 100 guarded writes under a directory swap: nothing outside is read or written",
  async () => {
    const log = createAuditLog({
      file: path.join(base, "audit.jsonl"),
      level: "info",
      toFile: true,
      maxRetained: 4,
      maxFileBytes: 1 << 20,
    });
    const ctx = makeToolContext({ cwd: project, mode: "readonly" });
    /** As the pipeline: judge, record durably, run on the judged target. */
    const call = async (tool: AnyTool, input: unknown, mode: "readonly" | "guarded") => {
      const effects = tool.effects(input);
      const read: string[] = [];
      const write: string[] = [];
      for (const p of effects.readPaths ?? []) {
        const v = judgeReadPath(p, settings(mode));
        if (!v.allow) return `denied: ${v.reason}`;
        read.push(v.target);
      }
      for (const p of effects.writePaths ?? []) {
        const v = judgeWritePath(p, settings(mode));
        if (!v.allow) return `denied: ${v.reason}`;
        write.push(v.target);
      }
      const r = log.emit("race", "tool_call", `${tool.name} ${JSON.stringify(input)}`);
      if (!r.ok) throw new Error(r.error);
      return (await tool.run(input as never, { ...ctx, mode }, { read, write })).text;
    };

    const swapper = await startDirSwapper(path.join(project, "sub"), outside);

    const leaked: string[] = [];
    const readers: [AnyTool, unknown][] = [
      [fileReadTool, { path: "sub/f.txt" }],
      [grepTool, { pattern: "SECRET|inside", path: "sub/f.txt" }],
      [outlineTool, { path: "sub/e.ts" }],
      [globTool, globInput({ pattern: "**", root: "sub" })],
      [globTool, globInput({ pattern: "sub/*.txt" })],
    ];
    for (let i = 0; i < READS; i++) {
      const [tool, input] = readers[i % readers.length]!;
      const text = await call(tool, input, "readonly");
      if (text.includes("OUTSIDE") || text.includes("OUTSIDE_SECRET")) leaked.push(`${tool.name}: ${text}`);
    }
    for (let i = 0; i < WRITES; i++) {
      if (i % 2 === 0)
        await call(fileWriteTool, { path: `sub/w-${i}.txt`, content: `write ${i}\n` }, "guarded");
      else
        await call(fileEditTool, { path: "sub/f.txt", old: "inside text", new: "inside text!" }, "guarded");
    }
    log.close();

    const swaps = await swapper.stop();
    expect(swaps).toBeGreaterThan(0);
    expect(leaked).toEqual([]);
    // Nothing written outside, and the outside file is untouched.
    expect(fs.readdirSync(outside).sort()).toEqual(["OUTSIDE-name.txt", "e.ts", "f.txt"]);
    expect(fs.readFileSync(path.join(outside, "f.txt"), "utf8")).toBe(`${SECRET} inside text\n`);
  },
  120_000,
);
