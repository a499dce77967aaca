/**
 * The descriptor-first read and the landing-checked write (docs/safety.md "What was opened"): the
 * own cost of one file_read and one file_write call on a small file, as the call pipeline
 * runs them after the gate. `node bench/opened.mjs [dist-dir]` (default: ./dist), so two
 * builds can be compared side by side.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const dist = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, "..", "dist"));
const { fileReadTool } = await import(pathToFileURL(path.join(dist, "tools", "file_read.js")).href);
const { fileWriteTool } = await import(pathToFileURL(path.join(dist, "tools", "file_write.js")).href);

const CALLS = 2000;
/** Writes fsync: fewer of them, or the disk is all that is measured. */
const WRITE_CALLS = 100;
const ROUNDS = 7;
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-opened-")));
const file = path.join(dir, "f.txt");
fs.writeFileSync(file, "hello\n".repeat(100));
const ctx = { signal: new AbortController().signal, timeoutMs: 5000, cwd: dir };

async function perCall(fn, calls = CALLS) {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await fn(i);
    rounds.push(Number(process.hrtime.bigint() - t0) / 1e3 / calls);
  }
  rounds.sort((a, b) => a - b);
  return rounds[Math.floor(ROUNDS / 2)];
}

const read = await perCall(() => fileReadTool.run({ path: "f.txt" }, ctx, { read: [file], write: [] }));
const write = await perCall(
  (i) =>
    fileWriteTool.run({ path: "w.txt", content: `x${i}\n` }, ctx, {
      read: [],
      write: [path.join(dir, "w.txt")],
    }),
  WRITE_CALLS,
);
fs.rmSync(dir, { recursive: true, force: true });
console.log(
  `${dist}: file_read ${read.toFixed(1)} µs/call, file_write ${write.toFixed(1)} µs/call (median of ${ROUNDS} rounds of ${CALLS} reads / ${WRITE_CALLS} writes)`,
);
