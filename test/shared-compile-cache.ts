/**
 * Vitest's global setup: one directory of kept compiled code for every CLI the suite starts
 * (`SCOOT_COMPILE_CACHE`, docs/configuration.md "Runtime home"). Tests run the CLI in fresh
 * homes, where each first run would compile the whole app again: about 40 ms of CPU per process,
 * over the suite's 1,200-odd processes. Made private (mode 0700, in the temp directory) so the
 * CLI accepts it, handed to the workers through the environment, and removed at the end.
 * `cleanEnv` (test/helpers/cli.ts) passes it on; the tests of the home's own cache unset it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const SUITE_COMPILE_CACHE_ENV = "SUITE_SCOOT_COMPILE_CACHE";

export default function setup(): () => void {
  // Each project of vitest.config.ts runs the global setup: they all share the first one's.
  if (process.env[SUITE_COMPILE_CACHE_ENV]) return () => {};
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-suite-compile-cache-"));
  process.env[SUITE_COMPILE_CACHE_ENV] = dir;
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
