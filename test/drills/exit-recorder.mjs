/**
 * Runs `node <args>` in the terminal it was started in and records how it ended: its pid in
 * `<file>.pid` once it started, `{code, signal}` in `<file>` once it exited. The recorder itself
 * outlives a hang-up (the shell tmux started dies with the terminal), so the CLI's exit is still
 * seen when the terminal is gone. Usage: node exit-recorder.mjs <file> <script> [args...]
 */
import { spawn } from "node:child_process";
import fs from "node:fs";

const [file, ...rest] = process.argv.slice(2);
// Handlers, not SIG_IGN: a child starts with every signal at its default whatever the handlers here.
process.on("SIGHUP", () => {});
process.on("SIGTERM", () => {});
const child = spawn(process.execPath, rest, { stdio: "inherit" });
child.once("spawn", () => {
  fs.writeFileSync(`${file}.pid.tmp`, String(child.pid));
  fs.renameSync(`${file}.pid.tmp`, `${file}.pid`);
});
child.once("exit", (code, signal) => {
  // Whole or not at all: the test polls for the file and reads it as soon as it appears.
  fs.writeFileSync(`${file}.tmp`, JSON.stringify({ code, signal }));
  fs.renameSync(`${file}.tmp`, file);
  // Node 20 aborts on exit when it cannot put a hung-up terminal's settings back: with the
  // descriptors closed it does not try (src/core/stop.ts does the same for Scoot).
  for (const fd of [0, 1, 2]) {
    try {
      fs.closeSync(fd);
    } catch {
      // already closed
    }
  }
  process.exit(0);
});
