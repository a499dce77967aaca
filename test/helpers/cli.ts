/** Runs the real built CLI (`dist/scoot.cjs`, the bundled bin) as a child process in a temporary home. */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SUITE_COMPILE_CACHE_ENV } from "../shared-compile-cache.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const CLI = path.join(REPO_ROOT, "dist", "scoot.cjs");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  home?: string;
  cwd?: string;
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
}

/**
 * The one guard of a test that uses the build (`dist/`): the bundled bin by default, or the named
 * files under dist/ (a per-module copy such as `store/session.js`). Returns their absolute paths.
 * A missing file fails the test with the reason printed (a skip would let a suite that was never
 * built pass without covering the binary; `npm test` builds first).
 */
export function needsBuiltCli(...files: string[]): string[] {
  const wanted = files.length > 0 ? files : ["scoot.cjs", "scoot-app.cjs"];
  const paths = wanted.map((f) => path.join(REPO_ROOT, "dist", f));
  const missing = paths.filter((p) => !fs.existsSync(p));
  if (missing.length > 0) {
    const reason = `${missing.map((p) => path.relative(REPO_ROOT, p)).join(", ")} missing: run "npm run build" first (npm test does)`;
    console.error(`needs the built CLI: ${reason}`);
    throw new Error(reason);
  }
  return paths;
}

/** One dist/ file's absolute path, after the guard. */
export function builtFile(file: string): string {
  return needsBuiltCli(file)[0] as string;
}

function assertBuilt(): void {
  needsBuiltCli();
}

/**
 * A clean environment: no inherited SCOOT_*, OTEL_* or token variables leak into tests. The
 * suite's shared compile cache is named (test/shared-compile-cache.ts) unless `extra` unsets
 * `SCOOT_COMPILE_CACHE`, as the tests of the home's own cache do.
 */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("SCOOT_") || k.startsWith("OTEL_") || k === "OPENAI_API_KEY") continue;
    env[k] = v;
  }
  const shared = process.env[SUITE_COMPILE_CACHE_ENV];
  if (shared) env.SCOOT_COMPILE_CACHE = shared;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export function spawnCli(args: string[], opts: CliOptions = {}): ChildProcess {
  assertBuilt();
  const env = cleanEnv({ ...(opts.home ? { SCOOT_HOME: opts.home } : {}), ...opts.env });
  return spawn(process.execPath, [CLI, ...args], {
    // Not the home: a confined run refuses Scoot's home as its project (docs/safety.md "Dangerous project roots").
    cwd: opts.cwd ?? os.tmpdir(),
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const child = spawnCli(args, opts);
  return collect(child, opts);
}

export function collect(
  child: ChildProcess,
  opts: Pick<CliOptions, "input" | "timeoutMs"> = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `scoot did not exit within ${opts.timeoutMs ?? 30_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, opts.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    else child.stdin?.end();
  });
}

export function tempDir(prefix = "scoot-test-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** A small project for loop tests: two TypeScript files under src/ and a README. */
export function demoProject(): string {
  const project = tempDir("scoot-proj-");
  fs.mkdirSync(path.join(project, "src"));
  fs.writeFileSync(path.join(project, "src", "a.ts"), "export function alpha() {\n  return 1;\n}\n");
  fs.writeFileSync(path.join(project, "src", "b.ts"), "export const beta = 2; // TODO tidy\n");
  fs.writeFileSync(path.join(project, "README.md"), "# Demo\nSome text.\n");
  return project;
}

/**
 * Runs `scoot <args>` in this process: the routing main.ts runs (src/entry.ts), with the same
 * redacting writers, a clean environment and the temporary home, but no process start. For tables
 * of many cases; keep one case of each table on `runCli` so the built binary stays covered.
 * Only for commands that finish by returning (no signal handlers, no process.exit, no stdin).
 */
export async function runInProcess(
  args: string[],
  opts: Omit<CliOptions, "input" | "timeoutMs"> = {},
): Promise<CliResult> {
  const { runArgv } = await import("../../src/entry.js");
  const { neutralisedIo } = await import("../../src/cli/io.js");
  let stdout = "";
  let stderr = "";
  const io = neutralisedIo({
    out: (t) => {
      stdout += t;
    },
    err: (t) => {
      stderr += t;
    },
  });
  const env = cleanEnv({ ...(opts.home ? { SCOOT_HOME: opts.home } : {}), ...opts.env });
  const code = await runArgv(args, { env, io, cwd: opts.cwd ?? os.tmpdir() });
  return { code, signal: null, stdout, stderr };
}
