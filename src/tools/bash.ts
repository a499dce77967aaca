/**
 * `bash`: one POSIX shell command under `/bin/sh -c`, in the project root, with stdin
 * closed, in its own process group, under the tool deadline.
 *
 * Nothing outlives the call: when the deadline fires or the run is interrupted the whole
 * group gets SIGTERM and, after KILL_GRACE_MS, SIGKILL. When the shell exits on its own
 * but left background members in the group (`server &`), they are torn down the same
 * way, because a tool call must end with no process of its own still running. Waiting
 * ends on the shell's exit plus a short drain, never on pipe EOF alone: a background
 * process holding the pipes open must not hang the call.
 */
import type { ChildProcess } from "node:child_process";
import type { Duplex } from "node:stream";
import { childProcessModule } from "../core/builtins.js";
import { groupAlive, holdGroup, terminateGroup } from "../core/process-group.js";
import type { Result } from "../core/types.js";
import { GATE_FD, GATE_GO } from "../sandbox/gate.js";
import { type ShellLaunch, shellLaunch } from "../sandbox/launch.js";
import { type EffectHold, holdForCommand } from "../store/effect-lock.js";
import { type Capture, captureStream } from "./capture.js";
import { CLIP } from "./clip.js";
import { COMMAND_SCOPE } from "./command-scope.js";
import { declareText } from "./declare.js";
import { effectLockDirOf } from "./effect-place.js";
import { type OutputSummary, OutputTally } from "./output-tally.js";
import { done, failed } from "./result.js";
import { knownSafeCommand } from "./safe-commands.js";
import type { Tool, ToolContext, ToolDetails, ToolResult } from "./types.js";

/** Per-stream capture limit (stdout and stderr each up to 1 MiB). */
export const OUTPUT_CAP_BYTES = 1024 * 1024;
/** After the shell exits, how long its pipes may take to deliver their last bytes. */
export const DRAIN_GRACE_MS = 200;
/** How often, at most, a running command's newest lines are reported (the live view's stream). */
export const PROGRESS_INTERVAL_MS = 100;
/** How many of its newest lines each report carries (the live view shows fewer). */
export const PROGRESS_LINES = 8;
/** How long to wait for the shell's exit to be reported once its group was killed. */
const EXIT_REPORT_MS = 1000;
const SHELL = "/bin/sh";

/** Blank commands are the gate's to refuse (in every mode), with a policy reason, so no `nonEmpty` here. */
export const INPUT = declareText("bash", {
  shape: "command string",
  example: "git status",
  fields: ["command"],
  objects: "refuse",
});

type Stop = { kind: "timeout"; ms: number } | { kind: "interrupted" };
type Exit = { code: number | null; signal: NodeJS.Signals | null };

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Resolves with the promise's value, or undefined when `ms` pass first. */
function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** The caller aborts the signal both for the deadline and for SIGINT; its reason tells which. */
function stopFromSignal(ctx: ToolContext): Stop {
  const reason: unknown = ctx.signal.reason;
  const isTimeout = reason instanceof Error && reason.name === "TimeoutError";
  return isTimeout ? { kind: "timeout", ms: ctx.timeoutMs } : { kind: "interrupted" };
}

function stopText(stop: Stop): string {
  return stop.kind === "timeout" ? `timed out after ${stop.ms} ms` : "interrupted";
}

function stoppedDetails(stop: Stop): ToolDetails {
  return { stopped: stop.kind === "timeout" ? "deadline" : "interrupted" };
}

/**
 * A command that ran to its end did the tool's work whatever its status (a failing test run
 * is an answer); one stopped by the deadline or an interrupt did not.
 */
function outcome(
  text: string,
  exit: Exit | undefined,
  stop: Stop | undefined,
  output: OutputSummary,
): ToolResult {
  if (stop) return failed(text, { ...stoppedDetails(stop), output });
  return typeof exit?.code === "number"
    ? done(text, { exitCode: exit.code, output })
    : done(text, { output });
}

/**
 * Reports the newest lines through `ctx.progress` at most every PROGRESS_INTERVAL_MS while
 * output keeps coming, and never after the call ended.
 */
function progressReporter(ctx: ToolContext, tally: OutputTally): { touch(): void; end(): void } {
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  return {
    touch() {
      if (!ctx.progress || ended || timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        if (!ended) ctx.progress?.(tally.newest(PROGRESS_LINES));
      }, PROGRESS_INTERVAL_MS);
      timer.unref();
    },
    end() {
      ended = true;
      clearTimeout(timer);
    },
  };
}

function section(label: string, capture: Capture): string | undefined {
  if (capture.total() === 0) return undefined;
  return `${label}:\n${capture.text(label).replace(/\n$/, "")}`;
}

function formatObservation(
  exit: Exit | undefined,
  stop: Stop | undefined,
  leftovers: boolean,
  out: Capture,
  err: Capture,
): string {
  const lines: string[] = [];
  if (stop) lines.push(`${stopText(stop)} (process group terminated)`);
  else if (exit?.signal) lines.push(`killed by signal ${exit.signal}`);
  else lines.push(`exit code: ${exit?.code ?? "unknown"}`);
  if (leftovers)
    lines.push("note: background processes still running after the command exited were terminated");
  const sections = [section("stdout", out), section("stderr", err)].filter((s) => s !== undefined);
  if (sections.length === 0) lines.push("(no output)");
  return [...lines, ...sections].join("\n");
}

/**
 * Spawns the shell (or bwrap running it, docs/safety.md "Shell containment"); resolves once it
 * started, or with the reason it could not. Under bwrap the group leader is bwrap itself:
 * the command runs in bwrap's new session and PID namespace, and every process there dies
 * with bwrap (--die-with-parent, then the namespace's init), so killing the group still
 * ends the whole tree.
 */
function start(launch: Extract<ShellLaunch, { ok: true }>, ctx: ToolContext): Promise<Result<ChildProcess>> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      // fd 3 carries the seccomp filter to bwrap, which reads it and closes it before the command
      // runs; fd 4 is the start gate (sandbox/gate.ts), closed before the command runs.
      const stdio: ("ignore" | "pipe")[] = [
        "ignore",
        "pipe",
        "pipe",
        launch.seccomp ? "pipe" : "ignore",
        "pipe",
      ];
      child = childProcessModule().spawn(launch.file, launch.args, {
        cwd: ctx.cwd,
        env: launch.env,
        stdio,
        // Own process group: one signal to -pid reaches every descendant that stayed in it.
        detached: true,
      });
    } catch (e) {
      resolve({ ok: false, error: errorText(e) });
      return;
    }
    if (launch.seccomp) {
      const filterPipe = child.stdio[3] as NodeJS.WritableStream & { on(e: "error", f: () => void): void };
      // bwrap fails (and says so on stderr) if the filter does not arrive; nothing to add here.
      filterPipe.on("error", () => {});
      filterPipe.end(launch.seccomp);
    }
    child.once("spawn", () => resolve({ ok: true, value: child }));
    child.once("error", (e) => resolve({ ok: false, error: errorText(e) }));
  });
}

function notStarted(stop: Stop): ToolResult {
  return failed(`${stopText(stop)}: the command was not started`, stoppedDetails(stop));
}

/** The gate's socket: resolves once the gate says it runs (sandbox/gate.ts). */
function gateReady(gate: Duplex): Promise<void> {
  return new Promise((resolve) => {
    gate.once("data", () => resolve());
  });
}

export async function runShell(command: string, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) return notStarted(stopFromSignal(ctx));
  const launch = await shellLaunch(SHELL, command, ctx);
  if (!launch.ok) return failed(launch.error);
  // A stop that came while the launch was prepared: nothing is spawned.
  if (ctx.signal.aborted) return notStarted(stopFromSignal(ctx));
  // No command runs in the project while a write through the editor is in flight there.
  let hold: EffectHold | undefined;
  try {
    hold = await holdForCommand(effectLockDirOf(ctx), ctx.signal);
  } catch (e) {
    return failed(`bash: cannot take the project's effect lock: ${errorText(e)}. The command was not run.`);
  }
  if (!hold) return notStarted(stopFromSignal(ctx));
  try {
    return await runHeld(launch, ctx);
  } finally {
    hold.release();
  }
}

async function runHeld(launch: Extract<ShellLaunch, { ok: true }>, ctx: ToolContext): Promise<ToolResult> {
  const started = await start(launch, ctx);
  if (!started.ok || started.value.pid === undefined) {
    const why = started.ok ? "no process id" : started.error;
    return failed(`bash: could not start ${launch.file} in ${ctx.cwd}: ${why}`);
  }
  const child = started.value;
  const pgid = started.value.pid;
  // Later errors (a failed kill) must not crash the run; the exit event still reports.
  child.on("error", () => {});
  const gate = child.stdio[GATE_FD] as Duplex;
  // A gate that closed (the shell exited, or was killed) is not an error of the run.
  gate.on("error", () => {});
  const ready = gateReady(gate);
  const tally = new OutputTally();
  const progress = progressReporter(ctx, tally);
  const out = captureStream(child.stdout!, OUTPUT_CAP_BYTES, (chunk) => {
    tally.feed("stdout", chunk);
    progress.touch();
  });
  const err = captureStream(child.stderr!, OUTPUT_CAP_BYTES, (chunk) => {
    tally.feed("stderr", chunk);
    progress.touch();
  });
  const exited = new Promise<Exit>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once("exit", (code, signal) => resolve({ code, signal }));
  });

  // Ended on the way out should the process end while the call runs (core/process-group.ts).
  const release = holdGroup(pgid);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<Stop>((resolve) => {
    // Enforced here as well as by the caller's signal, so the tool never depends on it.
    timer = setTimeout(() => resolve({ kind: "timeout", ms: ctx.timeoutMs }), ctx.timeoutMs);
    onAbort = () => resolve(stopFromSignal(ctx));
    // An abort that fired during the launch's awaits has no event left to hear.
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener("abort", onAbort, { once: true });
  });

  try {
    // The command runs only once Scoot opens the gate: a stop before that means it never ran.
    const opening = await Promise.race([
      ready.then(() => "ready" as const),
      exited.then(() => "exited" as const),
      stopped,
    ]);
    if (opening !== "exited" && (opening !== "ready" || ctx.signal.aborted)) {
      const stop = opening === "ready" ? stopFromSignal(ctx) : opening;
      gate.destroy();
      await terminateGroup(pgid);
      await within(exited, EXIT_REPORT_MS);
      out.stop();
      err.stop();
      return notStarted(stop);
    }
    if (opening === "ready") gate.end(GATE_GO);
    const first = await Promise.race([
      exited.then((exit) => ({ exit, stop: undefined })),
      stopped.then((stop) => ({ exit: undefined, stop })),
    ]);
    let exit = first.exit;
    let leftovers = false;
    if (first.stop) {
      await terminateGroup(pgid);
      exit = await within(exited, EXIT_REPORT_MS);
    } else {
      await within(Promise.all([out.done, err.done]), DRAIN_GRACE_MS);
      if (await groupAlive(pgid)) {
        leftovers = true;
        await terminateGroup(pgid);
      }
    }
    // A process that left the group (setsid) may still hold the pipes: stop reading them.
    await within(Promise.all([out.done, err.done]), DRAIN_GRACE_MS);
    out.stop();
    err.stop();
    progress.end();
    const observation = formatObservation(exit, first.stop, leftovers, out, err);
    const note = launch.after?.();
    const output = tally.summary(out.kept() + err.kept());
    return outcome(note ? `${observation}\n${note}` : observation, exit, first.stop, output);
  } finally {
    release();
    progress.end();
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener("abort", onAbort);
  }
}

export const bashTool: Tool<string> = {
  name: "bash",
  describe:
    "Run one non-interactive POSIX sh command (no bash-only syntax) in the project root with stdin closed " +
    "and a hard timeout. Returns the exit code, stdout and stderr. Prefer the structured tools for files, " +
    "search and HTTP.",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  textName: INPUT.textName,
  approvalScope: COMMAND_SCOPE,
  knownSafe: (command: string, where) => knownSafeCommand(command, where.root()),
  clipBytes: CLIP.bash,
  parse: INPUT.parse,
  effects(command: string) {
    return { capability: "exec", command };
  },
  present: (command: string) => ({ title: `Run ${command}`, keyArgument: command, locations: [] }),
  run(command: string, ctx: ToolContext): Promise<ToolResult> {
    return runShell(command, ctx);
  },
};
