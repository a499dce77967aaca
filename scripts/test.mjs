#!/usr/bin/env node
/**
 * `npm test`: the build, the type check, the lint and all tests, failing if any of them fails.
 *
 * Only the build must come before the tests (they run the built CLI). The type check and the
 * lint run beside the build and then beside the tests, instead of holding the tests back until
 * the slowest of them ends: on the 2-core machine the first minute of the tests (the terminal
 * files, which wait on a screen at a person's pace) leaves CPU idle, and the whole command ends
 * sooner (docs/architecture.md "Development").
 *
 * Their output is held and printed after the tests, so it never lands in the middle of Vitest's.
 * A failed build stops everything at once: there is nothing to test.
 *
 *   npm test [-- vitest arguments]
 */
import { spawn } from "node:child_process";

/** A check run beside the tests, with its output held until they end. */
function held(name, args) {
  const child = spawn("npm", ["run", "--silent", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const done = new Promise((resolve) => {
    child.on("error", (e) => resolve({ name, code: 1, output: `${output}${e.message}\n` }));
    child.on("close", (code, signal) => resolve({ name, code: code ?? 1, signal, output }));
  });
  return { child, done };
}

/** Ends `child`'s process group, the step and everything it started. */
function endGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** A step whose output goes straight to the terminal; resolves to its exit code. */
function inline(command, args) {
  const child = spawn(command, args, { stdio: "inherit", detached: true });
  const done = new Promise((resolve) => {
    child.on("error", (e) => {
      process.stderr.write(`${command}: ${e.message}\n`);
      resolve(1);
    });
    child.on("close", (code) => resolve(code ?? 1));
  });
  return { child, done };
}

const checks = [held("typecheck", ["typecheck"]), held("lint", ["lint"])];
let current = inline("npm", ["run", "--silent", "build"]);
// Interrupted (Ctrl-C, a CI timeout): every step ends with it, and all it started. Each step is
// its own process group (npm does not pass a signal on to the command it runs).
for (const signal of ["SIGINT", "SIGTERM"])
  process.on(signal, () => {
    for (const step of [...checks, current]) endGroup(step.child, signal);
    process.exit(130);
  });

if ((await current.done) !== 0) {
  for (const c of checks) endGroup(c.child, "SIGTERM");
  await Promise.all(checks.map((c) => c.done));
  process.stderr.write("npm test: the build failed (above); no tests ran\n");
  process.exit(1);
}

current = inline("npx", ["vitest", "run", ...process.argv.slice(2)]);
const testsCode = await current.done;
const results = await Promise.all(checks.map((c) => c.done));
let failed = testsCode !== 0;
for (const r of results) {
  if (r.code === 0) {
    process.stdout.write(`npm test: ${r.name} passed\n`);
    continue;
  }
  failed = true;
  process.stderr.write(`\nnpm test: ${r.name} failed (exit ${r.signal ?? r.code}):\n${r.output}`);
}
if (testsCode !== 0) process.stderr.write("npm test: tests failed (above)\n");
process.exit(failed ? 1 : 0);
