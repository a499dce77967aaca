#!/usr/bin/env node
/**
 * Entry point: argv → command. The only place that calls process.exit. Command modules
 * are imported on demand so `scoot --version` and `scoot config` stay fast.
 */
import fs from "node:fs";
import module from "node:module";
import path from "node:path";
import { compileWithCodeFlags, goalRan, keepAppCode, keepAppCodeIn } from "./app-code-cache.js";
import type { ParsedArgs } from "./cli/args.js";
import { COMMAND_HELP } from "./cli/help.js";
import { EXIT, processIo } from "./cli/io.js";
import { chosenCompileCacheDir } from "./config/compile-cache-dir.js";
import { HOME_DIR_MODE, homeWriteProblem, resolveHomeDir, userHomeDir } from "./config/home.js";
import { installProcessEnd } from "./core/process-end.js";
import { runArgv } from "./entry.js";

/** Exit only after stdout and stderr have flushed, so piped output is never cut short. */
function exitAfterFlush(code: number): void {
  let pending = 2;
  const done = () => {
    pending -= 1;
    if (pending > 0) return;
    releaseYoungGeneration();
    // A usage error compiled next to nothing of what a run needs.
    if (code !== EXIT.usage) keepAppCode();
    process.exit(code);
  };
  process.stdout.write("", done);
  process.stderr.write("", done);
}

/**
 * A run's garbage dies young (each turn's request body, tool output, parsed reply). Left to
 * itself V8 doubles the young generation whenever a little of it survives, to 8 MB by turn
 * 300: about 6 MB of peak RSS that buys nothing, since the scavenges stay as cheap. Set once
 * the app is loaded: loading it allocates much that lives, and in a small young generation
 * that costs a short run more scavenges than it saves. Only the CLI process sets it (tests
 * that route argv in process keep their own heap as it is).
 */
async function holdYoungGeneration(args: ParsedArgs): Promise<void> {
  if (readsAndReports(args)) return;
  const { setFlagsFromString } = await import("node:v8");
  const hold = () => setFlagsFromString("--semi-space-growth-factor=1");
  hold();
  releaseYoungGeneration = () =>
    setFlagsFromString(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH_FACTOR}`);
  // A package loaded later in the run (src/app-code-cache.ts) compiles under V8's own flags, as
  // its kept code was written, or V8 would refuse that code every time.
  compileWithCodeFlags((compile) => {
    releaseYoungGeneration();
    try {
      return compile();
    } finally {
      hold();
    }
  });
}

/** V8's own growth factor (its default in every Node Scoot runs on). */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;

/**
 * Sets V8's growth factor back as the run ends: the app's compiled code is then written for the
 * next run (src/app-code-cache.ts), and V8 refuses code stamped with other flags than its own.
 */
let releaseYoungGeneration = (): void => {};

/**
 * Commands that read the home, print and end. What they allocate mostly lives until they print
 * (a listing of thousands of sessions), so a held young generation only makes them scavenge
 * more: about 40 collections instead of 11 for `sessions list --all` over 5,000 sessions.
 */
const READ_AND_REPORT = new Set(["sessions", "session", "audit", "policy", "config", "skills"]);

function readsAndReports(args: ParsedArgs): boolean {
  return typeof args.flags.eval !== "string" && READ_AND_REPORT.has(args.words[0] ?? "");
}

/**
 * Whether this process runs goals (`-e`, the REPL, a goal as the command words). Only such a run
 * writes the app's compiled code for the next: the code kept is what the writing run compiled,
 * and a `doctor` or `config` that happened to come first would leave every later run compiling
 * its own functions afresh. `scoot acp` and `scoot serve` write it once a goal has run in them
 * (`goalRan`).
 */
function runsGoals(args: ParsedArgs): boolean {
  return typeof args.flags.eval === "string" || !Object.hasOwn(COMMAND_HELP, args.words[0] ?? "");
}

/** V8's compile cache, under the home's state directory (docs/configuration.md "Runtime home"). */
const COMPILE_CACHE_DIR = "compile-cache";

/**
 * Compiling the app is the largest single cost of a short run, so V8's compiled code is kept
 * between runs: the app's by src/app-code-cache.ts on every Node, the npm packages' by Node's
 * own cache on 22.8+ (`module.enableCompileCache`). Both are keyed so that an upgraded Scoot or
 * Node simply compiles afresh. The cache lives in the home's state/, which the gate and the
 * sandbox protect, and never in a shared temp directory: compiled code planted there would run
 * as the next Scoot. `SCOOT_COMPILE_CACHE` may name another directory, as private, that homes
 * made afresh share (src/config/compile-cache-dir.ts). Otherwise only a home already made by an
 * earlier run gets one (making the home is the run's own business). Any failure — a read-only or
 * full home, a file where the directory goes — leaves the run as it was, only slower.
 */
function cacheCompiledCode(args: ParsedArgs): void {
  const enable = (module as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
  try {
    const dir = compileCacheDir(args);
    if (dir === undefined) return;
    if (typeof enable === "function") enable(dir);
    keepAppCodeIn(dir, { write: runsGoals(args) });
  } catch {
    // No cache: the run compiles the app afresh.
  }
}

/**
 * The directory `SCOOT_COMPILE_CACHE` names when it passes its checks (a warning when it does
 * not), else the home's state/compile-cache, made here once the home exists.
 */
function compileCacheDir(args: ParsedArgs): string | undefined {
  const named = chosenCompileCacheDir(process.env, {
    userHome: userHomeDir(process.env),
    projectRoot: process.cwd(),
  });
  if (named?.ok) return named.dir;
  if (named) processIo.err(`scoot: warning: ${named.problem}\n`);
  const flag = args.flags["scoot-home"];
  const state = path.join(resolveHomeDir(typeof flag === "string" ? flag : undefined, process.env), "state");
  if (!fs.statSync(state, { throwIfNoEntry: false })?.isDirectory()) return undefined;
  const dir = path.join(state, COMPILE_CACHE_DIR);
  // Owner-only, as the rest of the home (Node would make it readable by all).
  if (!fs.existsSync(dir)) fs.mkdirSync(dir, { mode: HOME_DIR_MODE });
  return fs.statSync(dir).isDirectory() ? dir : undefined;
}

// A signal path that must end now (src/cli/run.ts, src/cli/acp.ts) ends here, at once.
installProcessEnd((code) => process.exit(code));

runArgv(
  process.argv.slice(2),
  { env: process.env, io: processIo, cwd: process.cwd(), goalRan },
  { beforeApp: cacheCompiledCode, onAppLoaded: holdYoungGeneration },
).then(exitAfterFlush, (e: unknown) => {
  if ((e as Error)?.name === "HomeUnknownError") {
    // One line naming the fix (docs/configuration.md "Runtime home"), never a stack trace.
    processIo.err(`scoot: ${(e as Error).message}\n`);
    exitAfterFlush(EXIT.usage);
    return;
  }
  // A home (or other place Scoot writes) that is full or read-only is the person's to fix: one line.
  const unwritable = homeWriteProblem(e);
  if (unwritable) {
    processIo.err(`scoot: ${unwritable}\n`);
    exitAfterFlush(EXIT.failed);
    return;
  }
  processIo.err(`scoot: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
  exitAfterFlush(EXIT.failed);
});
