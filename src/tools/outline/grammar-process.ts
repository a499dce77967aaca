/**
 * Outline by real parse in a process of its own (grammar-helper.ts), started on the first outline
 * that needs a grammar and kept while outlines keep coming (`GRAMMAR_IDLE_MS`).
 *
 * Why not in Scoot's own process: V8 compiles tree-sitter's WebAssembly grammars with its
 * optimising compiler, and on Node 24 that takes hundreds of megabytes per grammar (outlining a
 * TypeScript and a TSX file took a process past 1.4 GB) and can end the whole process with
 * "Fatal process out of memory: Zone" (nodejs/node#63421): an agent, its session and its
 * pending writes gone over an outline. V8's `--liftoff-only` keeps the grammars on the baseline
 * compiler (smaller and, for one outline, faster), but only on Node's command line: set from
 * inside the process it is ignored. So the grammars run in a child started with it. A child that
 * dies costs one outline, which falls back to the keyword heuristic, and the next outline starts a
 * new one. The child never keeps Scoot alive: it is unreferenced while idle, and it leaves when its
 * channel closes.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { childProcessModule } from "../../core/builtins.js";
import type { GrammarReply, GrammarRequest } from "./grammar-helper.js";
import type { LanguageSpec } from "./languages.js";
import { type GrammarOptions, type GrammarOutcome, outlineWithGrammar } from "./treesitter.js";

/** V8 flags of the grammar process: no optimising WebAssembly compiler (see the top of this file). */
const HELPER_FLAGS = ["--liftoff-only"];
/** How long past its deadline an outline may take before its process is ended. */
const DEADLINE_GRACE_MS = 1_000;
/** The tail of the process's stderr kept to say why it ended. */
const STDERR_TAIL_CHARS = 2_000;
/**
 * How long the process may sit idle before it is let go: it holds every grammar it loaded (about
 * 170 MB after all 19 languages), which a daemon, `serve` or an editor's session would otherwise
 * keep for good. The next outline starts a new one (about 60 ms, then its grammar loads again).
 */
export const GRAMMAR_IDLE_MS = 60_000;

/**
 * The helper's script: next to the bundle (`dist/scoot-grammar.mjs`), next to this module in the
 * per-module build, or, running from the sources (the tests), the built bundle.
 */
function helperScript(): string | undefined {
  const candidates = ["./scoot-grammar.mjs", "./grammar-helper.js", "../../../dist/scoot-grammar.mjs"];
  for (const rel of candidates) {
    const file = fileURLToPath(new URL(rel, import.meta.url));
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

/** Variables the grammar process gets: only those Node may need to start. */
const HELPER_ENV = ["PATH", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"];

function helperEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(HELPER_ENV.filter((k) => env[k] !== undefined).map((k) => [k, env[k]]));
}

interface Pending {
  /** The process asked: only its end fails this outline (an idle one may end after the next starts). */
  child: ChildProcess;
  resolve: (outcome: GrammarOutcome) => void;
  timer: NodeJS.Timeout;
}

let child: ChildProcess | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();
let idleMs = GRAMMAR_IDLE_MS;
let idleTimer: NodeJS.Timeout | undefined;

/**
 * Idle: the process and its channel no longer hold Scoot's event loop open, and after `idleMs`
 * more its channel is closed, which ends it.
 */
function release(c: ChildProcess): void {
  c.unref();
  c.channel?.unref();
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    if (child !== c || waitingOn(c)) return;
    child = undefined;
    c.disconnect();
  }, idleMs);
  idleTimer.unref();
}

function hold(c: ChildProcess): void {
  clearTimeout(idleTimer);
  c.ref();
  c.channel?.ref();
}

/** Whether an outline still waits on `c`. */
function waitingOn(c: ChildProcess): boolean {
  for (const p of pending.values()) if (p.child === c) return true;
  return false;
}

/** Every outline still waiting on `c` ends with `why`. */
function failAll(c: ChildProcess, why: string): void {
  if (child === c) child = undefined;
  for (const [id, p] of pending) {
    if (p.child !== c) continue;
    clearTimeout(p.timer);
    pending.delete(id);
    p.resolve({ ok: false, reason: "grammar", error: why });
  }
}

function lastLine(text: string): string {
  return (
    text
      .trim()
      .split("\n")
      .map((l) => l.replace(/^#\s*/, "").trim())
      .filter((l) => l && !/^-+|^\d+: 0x/.test(l))
      .at(-1) ?? ""
  );
}

function start(script: string): ChildProcess {
  let stderrTail = "";
  // Its one argument names the Scoot it works for (`ps` shows whose it is).
  const c = childProcessModule().fork(script, [String(process.pid)], {
    execArgv: HELPER_FLAGS,
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    // The helper needs none of Scoot's environment (its secrets included) beyond what lets Node
    // itself start: the path and a dynamic loader's library path where one is set.
    env: helperEnv(process.env),
  });
  // The pipe must not hold Scoot's event loop either; the channel does while an outline waits.
  (c.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
  c.stderr?.setEncoding("utf8");
  c.stderr?.on("data", (d: string) => {
    stderrTail = (stderrTail + d).slice(-STDERR_TAIL_CHARS);
  });
  c.on("message", (reply: GrammarReply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    clearTimeout(p.timer);
    pending.delete(reply.id);
    if (!waitingOn(c)) release(c);
    p.resolve(reply.outcome);
  });
  c.on("error", (e) => failAll(c, `the grammar process failed: ${e.message}`));
  c.on("exit", (code, signal) => {
    const why = lastLine(stderrTail);
    failAll(c, `the grammar process ended (${signal ?? `exit ${code}`})${why ? `: ${why}` : ""}`);
  });
  return c;
}

/**
 * outlineWithGrammar in the grammar process. Without the built helper script (sources not yet
 * built), in this process.
 */
export async function outlineInHelper(
  text: string,
  spec: LanguageSpec,
  opts: GrammarOptions,
): Promise<GrammarOutcome> {
  const script = helperScript();
  if (!script) return outlineWithGrammar(text, spec, opts);
  child ??= start(script);
  const c = child;
  const id = nextId++;
  return new Promise<GrammarOutcome>((resolve) => {
    const wait = Math.max(0, opts.deadlineAt - Date.now()) + DEADLINE_GRACE_MS;
    // A parse that overruns its deadline this far is stuck: end the process, start afresh next time.
    const timer = setTimeout(() => {
      pending.delete(id);
      resolve({ ok: false, reason: "deadline", error: "parsing did not finish before the deadline" });
      if (child === c) child = undefined;
      c.kill("SIGKILL");
    }, wait);
    pending.set(id, { child: c, resolve, timer });
    hold(c);
    const req: GrammarRequest = {
      id,
      language: spec.name,
      text,
      limit: opts.limit,
      deadlineAt: opts.deadlineAt,
      ...(opts.grammarDir ? { grammarDir: opts.grammarDir } : {}),
    };
    c.send(req, (err) => {
      if (err) failAll(c, `the grammar process could not be asked: ${err.message}`);
    });
  });
}

/** Ends the grammar process now (tests; a caller that wants it gone before it exits). */
export function stopGrammarProcess(): void {
  child?.kill("SIGKILL");
  child = undefined;
}

/** How long an idle grammar process is kept (tests shorten it). */
export function setGrammarIdleMs(ms: number): void {
  idleMs = ms;
}

/** The grammar process's pid, if one runs (tests). */
export function grammarProcessPid(): number | undefined {
  return child?.pid;
}
