import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { bashTool, OUTPUT_CAP_BYTES, PROGRESS_INTERVAL_MS } from "../../src/tools/bash.js";
import { makeToolContext, runTool, runToolResult } from "../helpers/tool-context.js";

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-"));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Long enough never to fire in a test that expects the command to finish by itself. */
const GENEROUS_MS = 30_000;

/**
 * These cases pin the direct (unsandboxed) process handling: host pids, signals, the group.
 * The same guarantees under bubblewrap are in bash-sandbox.test.ts.
 */
function unsandboxed(): ReturnType<typeof defaultConfig> {
  const config = defaultConfig();
  config.tools.sandbox = "off";
  return config;
}

function run(command: string, overrides: Parameters<typeof makeToolContext>[0] = {}): Promise<string> {
  return runTool(
    bashTool,
    command,
    makeToolContext({ cwd: tmp, timeoutMs: GENEROUS_MS, config: unsandboxed(), ...overrides }),
  );
}

/** Gone, or a zombie nobody reaped (PID 1 in containers often does not): either way not running. */
function isDead(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
}

function readPid(file: string): number {
  const pid = Number(fs.readFileSync(file, "utf8").trim());
  expect(pid).toBeGreaterThan(1);
  return pid;
}

function stdoutSection(obs: string): string {
  const start = obs.indexOf("stdout:\n");
  const end = obs.indexOf("\nstderr:\n");
  return obs.slice(start + "stdout:\n".length, end === -1 ? undefined : end);
}

describe("bash parse and effects", () => {
  it("accepts any command string, blank included (the gate refuses blank commands)", () => {
    expect(bashTool.parse("ls -la")).toEqual({ ok: true, value: "ls -la" });
    expect(bashTool.parse("   ")).toEqual({ ok: true, value: "   " });
  });
  it("rejects a non-string input", () => {
    const r = bashTool.parse(42 as unknown as string);
    expect(r.ok).toBe(false);
  });
  it("declares exec with the command text", () => {
    expect(bashTool.effects("rm -rf build")).toEqual({ capability: "exec", command: "rm -rf build" });
  });
});

describe("bash results", () => {
  it.each([
    ["echo hello", "exit code: 0\nstdout:\nhello"],
    ["exit 3", "exit code: 3\n(no output)"],
    ["true", "exit code: 0\n(no output)"],
    ["echo oops >&2; exit 1", "exit code: 1\nstderr:\noops"],
    ["echo out; echo err >&2", "exit code: 0\nstdout:\nout\nstderr:\nerr"],
    ["kill -KILL $$", "killed by signal SIGKILL\n(no output)"],
  ])("%s", async (command, expected) => {
    expect(await run(command)).toBe(expected);
  });

  it("runs in ctx.cwd", async () => {
    expect(await run("pwd -P")).toBe(`exit code: 0\nstdout:\n${fs.realpathSync(tmp)}`);
  });

  it("has stdin closed: cat returns at once instead of waiting for input", async () => {
    expect(await run("cat; echo after-cat")).toBe("exit code: 0\nstdout:\nafter-cat");
  });

  it("uses ctx.childEnv, not the parent's environment", async () => {
    process.env.SCOOT_TEST_PARENT_ONLY = "parent-value";
    try {
      const obs = await run("env", {
        childEnv: { PATH: process.env.PATH, SCOOT_TEST_CHILD_ONLY: "child-value" },
      });
      expect(obs).toContain("SCOOT_TEST_CHILD_ONLY=child-value");
      expect(obs).not.toContain("SCOOT_TEST_PARENT_ONLY");
    } finally {
      delete process.env.SCOOT_TEST_PARENT_ONLY;
    }
  });

  it("reports a shell that cannot start (missing working directory) as an observation", async () => {
    const obs = await run("echo hi", { cwd: path.join(tmp, "does-not-exist") });
    expect(obs).toMatch(/^bash: could not start \/bin\/sh in .*does-not-exist: /);
  });
});

describe("bash output capture", () => {
  it("caps a 5 MB flood at 1 MiB, keeps head and tail, and names the dropped bytes", async () => {
    const obs = await run("yes | head -c 5000000; echo END");
    expect(obs.startsWith("exit code: 0\nstdout:\ny\ny\n")).toBe(true);
    expect(obs).toContain(`stdout truncated: ${5_000_004 - OUTPUT_CAP_BYTES} of 5000004 bytes dropped`);
    expect(obs.endsWith("y\nEND")).toBe(true);
    expect(Buffer.byteLength(stdoutSection(obs))).toBeLessThan(OUTPUT_CAP_BYTES + 200);
  });

  it("keeps draining an endless producer and still stops it at the deadline", async () => {
    const obs = await run("yes", { timeoutMs: 500 });
    expect(obs.startsWith("timed out after 500 ms (process group terminated)\nstdout:\ny\n")).toBe(true);
    expect(Buffer.byteLength(stdoutSection(obs))).toBeLessThan(OUTPUT_CAP_BYTES + 200);
  });
});

describe("bash counts all of its output for the screen", () => {
  const context = (overrides: Parameters<typeof makeToolContext>[0] = {}) =>
    makeToolContext({ cwd: tmp, timeoutMs: GENEROUS_MS, config: unsandboxed(), ...overrides });

  it("a flood past the capture: the true bytes and lines, what was kept, and the last lines", async () => {
    const r = await runToolResult(bashTool, "yes | head -n 3000000; echo END >&2", context());
    const output = r.details?.output;
    expect(output).toMatchObject({ bytes: 6_000_004, lines: 3_000_001 });
    expect(output!.kept).toBe(OUTPUT_CAP_BYTES + 4);
    expect(output!.tail.at(-1)).toBe("END");
    expect(output!.tail.slice(0, -1).every((l) => l === "y")).toBe(true);
  });

  it("reports the newest lines while the command runs, and nothing after it ended", async () => {
    // The command waits for the test to have seen its first line: it ends only if that line was
    // reported while it ran (else the deadline stops it).
    const go = path.join(tmp, "seen-step1");
    const reports: string[][] = [];
    let ended = false;
    const late: string[][] = [];
    const r = await runToolResult(
      bashTool,
      `echo step1; while [ ! -f '${go}' ]; do sleep 0.05; done; echo step2`,
      context({
        timeoutMs: 10_000,
        progress: (lines) => {
          (ended ? late : reports).push([...lines]);
          if (lines.includes("step1")) fs.writeFileSync(go, "");
        },
      }),
    );
    ended = true;
    expect(r.details?.exitCode).toBe(0);
    expect(r.details?.output?.tail).toEqual(["step1", "step2"]);
    expect(reports[0]).toEqual(["step1"]);
    // A report after the end would come within one interval.
    await new Promise((resolve) => setTimeout(resolve, 3 * PROGRESS_INTERVAL_MS));
    expect(late).toEqual([]);
  });
});

describe("bash deadline and abort", () => {
  it("times out with its own timer even when the caller's signal never fires", async () => {
    expect(await run("echo started; sleep 30", { timeoutMs: 300 })).toBe(
      "timed out after 300 ms (process group terminated)\nstdout:\nstarted",
    );
  });

  it("stops on an interrupt (abort without a timeout reason)", async () => {
    const ac = new AbortController();
    const pending = run("echo begun; sleep 30", { signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    expect(await pending).toMatch(/^interrupted \(process group terminated\)/);
  });

  it("reports a caller's deadline abort (TimeoutError reason) as a timeout", async () => {
    const ac = new AbortController();
    const pending = run("sleep 30", { signal: ac.signal, timeoutMs: 250 });
    setTimeout(() => ac.abort(new DOMException("deadline", "TimeoutError")), 100);
    expect(await pending).toBe("timed out after 250 ms (process group terminated)\n(no output)");
  });

  it("does not start the command when the signal is already aborted", async () => {
    const marker = path.join(tmp, "should-not-exist");
    const obs = await run(`touch ${marker}`, { signal: AbortSignal.abort() });
    expect(obs).toBe("interrupted: the command was not started");
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe("nothing outlives the tool call", () => {
  it("kills a grandchild that ignores SIGTERM when the call times out", async () => {
    const pidfile = path.join(tmp, "ignoring.pid");
    const obs = await run(`trap "" TERM; sleep 300 & echo $! > ${pidfile}; wait`, { timeoutMs: 300 });
    expect(obs).toMatch(/^timed out after 300 ms/);
    expect(isDead(readPid(pidfile))).toBe(true);
  });

  it("returns promptly when a background child keeps the pipes open, and removes it", async () => {
    const pidfile = path.join(tmp, "holder.pid");
    const obs = await run(`sleep 1000 & echo $! > ${pidfile}; echo done`);
    expect(obs).toBe(
      "exit code: 0\nnote: background processes still running after the command exited were terminated\n" +
        "stdout:\ndone",
    );
    expect(isDead(readPid(pidfile))).toBe(true);
  });

  it("removes a background child that detached its output too", async () => {
    const pidfile = path.join(tmp, "quiet.pid");
    const obs = await run(`sleep 1000 >/dev/null 2>&1 & echo $! > ${pidfile}`);
    expect(obs).toMatch(/^exit code: 0\nnote: background processes/);
    expect(isDead(readPid(pidfile))).toBe(true);
  });

  it("adds no note when the command left nothing behind", async () => {
    expect(await run("sleep 0 & wait; echo ok")).toBe("exit code: 0\nstdout:\nok");
  });
});
