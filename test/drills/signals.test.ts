/**
 * Signals drill: SIGHUP (a closed terminal or SSH session) and SIGTERM (a supervisor, `kill`)
 * stop every long-running mode as SIGINT does, while a `bash` command runs, with and without
 * bubblewrap. One table: mode × signal × sandbox, and a second signal during the stop. For each
 * case the real CLI runs against the scripted model server, whose only step is a `sleep` with a
 * tag no other process uses; once that sleep runs, the signal goes to Scoot (or, for the modes a
 * person runs in a terminal, the terminal closes under it), and then:
 *
 * - Scoot exits, with 130 (SPEC §4 "interrupted"; the daemon: 0, it stops as asked);
 * - no process of the command's groups (the tool's group, and the sandbox's session inside it)
 *   is left, read from /proc;
 * - every run in the audit log has its closing record (`system_error interrupted`, or the job's
 *   own end in the daemon, which finishes its current tick first: SPEC §12);
 * - the transcript is whole and ends with the run's stop;
 * - the daemon's state says `stopped` with the signal as its reason, and its pid file is gone.
 *
 * "Without bubblewrap" is `--policy unrestricted` at the keyboard (the operator's choice runs
 * bash directly) and `tools.sandbox = "off"` for the daemon's unattended jobs; every case checks
 * whether bwrap really led the command's group, so the table cannot silently test one side only.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, type CliResult, collect, REPO_ROOT, removeDir, spawnCli, tempDir } from "../helpers/cli.js";
import { bwrapWorks, processesWith, processLine, uniqueSleepArg, waitForProcess } from "../helpers/procs.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";
import { checkJsonl, sleep, waitFor } from "./lib.js";

const BWRAP = bwrapWorks();
if (!BWRAP) console.log("signals drill: the sandboxed half is skipped, bwrap cannot run here");
if (!hasTmux) console.log("signals drill: the cases in a terminal are skipped, tmux is not installed");

const RECORDER = path.join(REPO_ROOT, "test", "drills", "exit-recorder.mjs");
/** A guard against a hung case, not a measure: a clean stop takes a second or two. */
const EXIT_GUARD_MS = 30_000;
/** How long the tagged sleep may take to appear (a cold start under load, bwrap's setup). */
const START_GUARD_MS = 20_000;
/**
 * The daemon finishes its current tick before it stops (SPEC §12): its job's command ends at
 * this tool deadline, the job's run then ends, and the daemon stops.
 */
const DAEMON_TOOL_TIMEOUT_MS = 5000;

/** The second signal comes this long after the first: well inside the stop it interrupts. */
const SECOND_SIGNAL_AFTER_MS = 200;

type Mode = "-e" | "repl" | "serve" | "acp" | "daemon";
/** A signal sent with kill(2), or Scoot's terminal going away (its pty closed: SIGHUP from the kernel). */
type How = "SIGHUP" | "SIGTERM" | "SIGINT" | "terminal closed";

interface Case {
  mode: Mode;
  how: How;
  sandbox: boolean;
  /**
   * The signal is sent again during the stop, and the command ignores SIGTERM, so the stop
   * takes the group's whole grace (KILL_GRACE_MS) and the second signal lands inside it.
   */
  twice?: true;
}

const MODES: Mode[] = ["-e", "repl", "serve", "acp", "daemon"];
const CASES: Case[] = [];
/** The modes a person runs in a terminal, which may close under them (serve and ACP talk over pipes). */
const IN_A_TERMINAL: Mode[] = ["-e", "repl", "daemon"];
for (const mode of MODES)
  for (const how of [
    "SIGHUP",
    "SIGTERM",
    ...(IN_A_TERMINAL.includes(mode) ? ["terminal closed"] : []),
  ] as How[])
    for (const sandbox of [true, false]) CASES.push({ mode, how, sandbox });
// A second signal during the stop leaves nothing half-done. Without the sandbox: under it the
// group's leader is bwrap, which SIGTERM ends at once whatever the command ignores.
for (const mode of MODES)
  for (const how of ["SIGHUP", "SIGTERM"] as const) CASES.push({ mode, how, sandbox: false, twice: true });
// A person's second Ctrl-C ends `-e` at once (docs/keyboard.md "Cancelling"): still nothing of
// the command is left (its run's closing record is what the forced end gives up).
CASES.push({ mode: "-e", how: "SIGINT", sandbox: false, twice: true });

/** One process's `state ppid pgrp` from /proc (undefined once it is gone). */
function statOf(pid: number): { state: string; ppid: number; pgid: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: f[0]!, ppid: Number(f[1]), pgid: Number(f[2]) };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .map(Number);
}

/**
 * The command's process groups while it runs: each child of Scoot that leads a group of its own
 * (the tool's group: the shell, or bwrap), and the group of each tagged process (inside the
 * sandbox that is the sandbox's own session).
 */
function commandGroups(scootPid: number, tag: string): Set<number> {
  const groups = new Set<number>();
  for (const pid of allPids()) {
    const s = statOf(pid);
    if (s && s.ppid === scootPid && s.pgid === pid) groups.add(pid);
  }
  for (const pid of processesWith(tag)) {
    const s = statOf(pid);
    if (s) groups.add(s.pgid);
  }
  return groups;
}

/** Live (not zombie) members of any of `groups`. */
function liveMembers(groups: Set<number>): string[] {
  const out: string[] = [];
  for (const pid of allPids()) {
    const s = statOf(pid);
    if (s && groups.has(s.pgid) && s.state !== "Z" && s.state !== "X") out.push(`${pid} ${processLine(pid)}`);
  }
  return out;
}

function killGroups(groups: Set<number>): void {
  for (const g of groups) {
    try {
      process.kill(-g, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** Writes one JSON line to a child's stdin (serve's requests, ACP's messages). */
function send(child: ChildProcess, message: object): void {
  child.stdin!.write(`${JSON.stringify(message)}\n`);
}

/** Resolves with the first JSON line on `child`'s stdout that `pick` accepts. */
function lineFrom(
  child: ChildProcess,
  pick: (m: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let buffered = "";
    const onData = (d: Buffer) => {
      buffered += d.toString("utf8");
      let nl = buffered.indexOf("\n");
      while (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf("\n");
        let m: unknown;
        try {
          m = JSON.parse(line);
        } catch {
          continue;
        }
        if (typeof m === "object" && m !== null && pick(m as Record<string, unknown>)) {
          child.stdout!.off("data", onData);
          resolve(m as Record<string, unknown>);
          return;
        }
      }
    };
    child.stdout!.on("data", onData);
  });
}

interface Started {
  /** Scoot's own pid. */
  pid: number;
  /** Sends a signal to Scoot. */
  signal(sig: NodeJS.Signals): void;
  /** The REPL's: its terminal goes away (tmux ends, the pty closes). */
  closeTerminal?(): Promise<void>;
  /** Scoot's exit code (and, for spawned modes, what it wrote). */
  exited(): Promise<{ code: number | null; stderr: string; stdout: string }>;
  /** Ends whatever is left (a failed case). */
  cleanup(): Promise<void>;
}

interface Env {
  home: string;
  project: string;
  server: ScriptedServer;
  tag: string;
  c: Case;
}

/** The flags that choose the sandbox at the keyboard: guarded (bwrap) or unrestricted (direct). */
function policyArgs(c: Case): string[] {
  return c.sandbox ? [] : ["--policy", "unrestricted"];
}

function cliEnv(e: Env): Record<string, string> {
  return { SCOOT_BACKEND_BASE_URL: e.server.url, SCOOT_BACKEND_MAX_RETRIES: "0" };
}

function spawned(child: ChildProcess): Started {
  const done = collect(child, { timeoutMs: EXIT_GUARD_MS });
  return {
    pid: child.pid!,
    signal: (sig) => child.kill(sig),
    async exited() {
      const r: CliResult = await done;
      return { code: r.code, stderr: r.stderr, stdout: r.stdout };
    },
    async cleanup() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await done.catch(() => undefined);
    },
  };
}

/** Spawns a mode whose input stays open (serve, ACP): `collect` would end stdin at once. */
function spawnOpen(args: string[], e: Env): ChildProcess {
  return spawnCli(args, { home: e.home, cwd: e.project, env: cliEnv(e) });
}

async function startMode(e: Env): Promise<Started> {
  const { c } = e;
  if (c.mode === "daemon") writeDaemonConfig(e);
  if (c.mode === "repl") return startInTerminal(e, ["repl", "--approval", "never", ...policyArgs(c)]);
  if (c.how === "terminal closed")
    return startInTerminal(e, c.mode === "-e" ? ["-e", "go", ...policyArgs(c)] : ["daemon", "run"]);
  switch (c.mode) {
    case "-e": {
      const child = spawnCli(["-e", "go", ...policyArgs(c)], {
        home: e.home,
        cwd: e.project,
        env: cliEnv(e),
      });
      return spawned(child);
    }
    case "serve": {
      const child = spawnOpen(["serve", ...policyArgs(c)], e);
      const s = spawnedOpen(child, c);
      send(child, { id: 1, method: "run", params: { goal: "go" } });
      return s;
    }
    case "acp": {
      const child = spawnOpen(["acp", "--approval", "never", ...policyArgs(c)], e);
      const s = spawnedOpen(child, c);
      send(child, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: 1, clientCapabilities: {} },
      });
      await lineFrom(child, (m) => m.id === 1);
      send(child, {
        jsonrpc: "2.0",
        id: 2,
        method: "session/new",
        params: { cwd: e.project, mcpServers: [] },
      });
      const created = await lineFrom(child, (m) => m.id === 2);
      const sessionId = (created.result as { sessionId: string }).sessionId;
      send(child, {
        jsonrpc: "2.0",
        id: 3,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "go" }] },
      });
      return s;
    }
    case "daemon":
      return spawnedOpen(spawnOpen(["daemon", "run"], e), c);
  }
}

/** A job that runs the case's command, unattended, in bubblewrap or not. */
function writeDaemonConfig(e: Env): void {
  const { c } = e;
  fs.writeFileSync(
    path.join(e.home, "config.toml"),
    [
      "[tools]",
      `timeout_ms = ${DAEMON_TOOL_TIMEOUT_MS}`,
      `sandbox = "${c.sandbox ? "auto" : "off"}"`,
      "[edge]",
      'max_job_policy = "unrestricted"',
      "[schedule]",
      "enabled = true",
      "poll_ms = 50",
      "[[schedule.jobs]]",
      'id = "sig"',
      'goal = "go"',
      "every_sec = 3600",
      'mode = "unrestricted"',
      "",
    ].join("\n"),
  );
}

/** serve and ACP read their stdin until it ends: it stays open while the case runs. */
function spawnedOpen(child: ChildProcess, c: Case): Started {
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    pid: child.pid!,
    signal: (sig) => child.kill(sig),
    async exited() {
      let timer: NodeJS.Timeout | undefined;
      const guard = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`scoot ${c.mode} did not exit within ${EXIT_GUARD_MS} ms\nstderr: ${stderr}`)),
          EXIT_GUARD_MS,
        );
      });
      try {
        const code = await Promise.race([closed, guard]);
        return { code, stderr, stdout };
      } finally {
        clearTimeout(timer);
      }
    },
    async cleanup() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await closed;
    },
  };
}

/**
 * Scoot in a real terminal, run by the exit recorder (it sees the exit after a hang-up); the
 * REPL is given its goal as a person types it.
 */
async function startInTerminal(e: Env, args: string[]): Promise<Started> {
  const { c } = e;
  const exitFile = path.join(e.home, "exit.json");
  const term: Terminal = await openTerminal([exitFile, CLI, ...args], {
    cwd: e.project,
    home: e.home,
    env: cliEnv(e),
    script: RECORDER,
  });
  if (c.mode === "repl") {
    await term.waitFor("scoot REPL", START_GUARD_MS);
    await term.line("go");
  }
  await waitFor(
    "Scoot's pid",
    () => fs.existsSync(`${exitFile}.pid`) && fs.statSync(`${exitFile}.pid`).size > 0,
  );
  const pid = Number(fs.readFileSync(`${exitFile}.pid`, "utf8"));
  let screen = "";
  return {
    pid,
    signal: (sig) => process.kill(pid, sig),
    async closeTerminal() {
      screen = await term.screen();
      await term.close();
    },
    async exited() {
      await waitFor("Scoot to exit", () => fs.existsSync(exitFile), EXIT_GUARD_MS);
      const ended = JSON.parse(fs.readFileSync(exitFile, "utf8")) as {
        code: number | null;
        signal: string | null;
      };
      if (c.how !== "terminal closed") screen = await term.screen();
      return {
        code: ended.signal ? -1 : ended.code,
        stderr: `${screen}\n(signal: ${ended.signal})`,
        stdout: "",
      };
    },
    async cleanup() {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
      await term.close();
    },
  };
}

/** Every transcript of the home: whole (no torn or bad line) and each ends with its run's end. */
function transcripts(
  home: string,
): { file: string; last: Record<string, unknown> | undefined; torn: boolean }[] {
  const dir = path.join(home, "state", "sessions");
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => {
      const check = checkJsonl(path.join(dir, f));
      return { file: f, last: check.records.at(-1), torn: check.torn !== undefined || check.bad.length > 0 };
    });
}

/** The audit records of each run, by run id, in order. */
function runsOf(home: string): Map<string, { kind: string; msg: string }[]> {
  const file = path.join(home, "logs", "audit.jsonl");
  const runs = new Map<string, { kind: string; msg: string }[]>();
  if (!fs.existsSync(file)) return runs;
  for (const r of checkJsonl(file).records) {
    const id = r.run_id;
    if (typeof id !== "string") continue;
    const list = runs.get(id) ?? [];
    list.push({ kind: String(r.kind), msg: String(r.msg) });
    runs.set(id, list);
  }
  return runs;
}

/** The cases this machine can run: the sandboxed ones need bwrap, the REPL's need tmux. */
const RUNNABLE = CASES.filter(
  (c) => (hasTmux || (c.mode !== "repl" && c.how !== "terminal closed")) && (!c.sandbox || BWRAP),
);

describe.concurrent("signals drill: every mode stops cleanly on SIGHUP and SIGTERM while a command runs", () => {
  it.each(
    RUNNABLE.map(
      (c) =>
        [
          `${c.mode} · ${c.how}${c.twice ? " twice" : ""} · ${c.sandbox ? "bwrap" : "no sandbox"}`,
          c,
        ] as const,
    ),
  )("%s", async (_name, c) => {
    const home = tempDir("scoot-sig-home-");
    const project = fs.realpathSync(tempDir("scoot-sig-proj-"));
    const tag = uniqueSleepArg(300);
    const command = c.twice ? `trap '' TERM; sleep ${tag}` : `sleep ${tag}`;
    // The daemon's job goes on after its command's deadline: one more step ends its run.
    const server = await startScriptedServer([step("bash", command), step("final", "after the deadline")]);
    const e: Env = { home, project, server, tag, c };
    let started: Started | undefined;
    let groups = new Set<number>();
    try {
      started = await startMode(e);
      expect(await waitForProcess(`sleep ${tag}`, START_GUARD_MS), `the command never ran (${c.mode})`).toBe(
        true,
      );
      groups = commandGroups(started.pid, tag);
      const leaders = [...groups].map((g) => processLine(g));
      // The table's two halves are what they say: bwrap leads the command's group, or nothing does.
      expect(
        leaders.some((l) => /(^|\/)bwrap /.test(l)),
        `sandbox ${c.sandbox}: group leaders ${leaders.join(" | ")}`,
      ).toBe(c.sandbox);
      if (c.how === "terminal closed") await started.closeTerminal!();
      else {
        started.signal(c.how);
        if (c.twice) {
          await sleep(SECOND_SIGNAL_AFTER_MS);
          started.signal(c.how);
        }
      }
      const ended = await started.exited();
      expect(ended.code, ended.stderr).toBe(c.mode === "daemon" ? 0 : 130);
      expect(ended.stderr).not.toMatch(/internal error|EIO|Unhandled/);
      // Nothing of the command is left: not its group, not the sandbox's session inside it.
      for (let i = 0; i < 20 && liveMembers(groups).length > 0; i++) await sleep(50);
      expect(liveMembers(groups)).toEqual([]);
      expect(processesWith(tag)).toEqual([]);

      const runs = runsOf(home);
      expect(runs.size, "the run's records").toBeGreaterThan(0);
      for (const [id, records] of runs) {
        const last = records.at(-1)!;
        if (c.how === "SIGINT") continue;
        // The daemon's first signal lets the job end on its own; a second one aborts it.
        if (c.mode === "daemon")
          expect(c.twice ? ["system_error"] : ["final", "system_error"], `run ${id}`).toContain(last.kind);
        else
          expect(last, `run ${id}: ${JSON.stringify(records)}`).toEqual({
            kind: "system_error",
            msg: "interrupted",
          });
      }
      const kept = transcripts(home);
      expect(kept.length).toBeGreaterThan(0);
      for (const t of kept) {
        expect(t.torn, t.file).toBe(false);
        if (c.mode !== "daemon" && c.how !== "SIGINT")
          expect(String(t.last?.content), t.file).toContain("stopped before a final answer");
      }
      if (c.mode === "daemon") {
        const state = JSON.parse(fs.readFileSync(path.join(home, "state", "daemon.json"), "utf8"));
        const reason = c.how === "terminal closed" ? "SIGHUP" : c.how;
        expect(state).toMatchObject({ status: "stopped", stop_reason: reason });
        expect(fs.existsSync(path.join(home, "state", "daemon.pid"))).toBe(false);
      }
    } finally {
      killGroups(groups);
      for (const pid of processesWith(tag)) process.kill(pid, "SIGKILL");
      await started?.cleanup();
      await server.close();
      removeDir(home);
      removeDir(project);
    }
  });
});
