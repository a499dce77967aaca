/**
 * Issue 10, fix 5: a windowed file_read past the deadline returns a timeout, and the process
 * stays responsive while it reads (the read is asynchronous and checks the signal per chunk).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runToolWithDeadline } from "../../src/agent/execute.js";
import { fileReadTool } from "../../src/tools/file_read.js";
import { makeToolContext, unrestrictedTarget } from "../helpers/tool-context.js";

/** Large enough that reading it to the end takes far longer than the deadline. */
const SPARSE_BYTES = 256 * 1024 ** 3;
const DEADLINE_MS = 300;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-deadline-"));
  const file = path.join(dir, "huge.log");
  // Text at the start (so it is not "binary"), then a sparse hole with no newline at all.
  fs.writeFileSync(file, "first line\n".repeat(1000));
  fs.truncateSync(file, SPARSE_BYTES);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it("a far offset in a huge file times out, and timers keep firing meanwhile", async () => {
  const input = { path: "huge.log", offset: 5_000_000 };
  const { call: _c, gate: _g, signal: _s, timeoutMs: _t, ...base } = makeToolContext({ cwd: dir });
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 10);
  try {
    const out = await runToolWithDeadline(
      fileReadTool,
      input,
      unrestrictedTarget(fileReadTool, input, dir),
      base,
      () => ({ gate: () => ({ allow: true }), call: async () => "" }),
      DEADLINE_MS,
      new AbortController().signal,
    );
    expect(out.failed).toBe(true);
    expect(out.text).toMatch(
      /^file_read: (stopped reading "huge.log": timed out at line 1001|timed out after 300 ms)/,
    );
  } finally {
    clearInterval(ticker);
  }
  // The event loop ran while the file was being read: the ticker fired.
  expect(ticks).toBeGreaterThan(0);
});
