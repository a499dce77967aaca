/**
 * The start gate waits for the sandbox's init to arm `--die-with-parent` before it says it runs
 * (src/sandbox/gate.ts). The real init arms within microseconds, so the race it closes shows up
 * only under load (a CI run left init, the gate's shell and the command running after Scoot was
 * killed). Here a directory stands in for `/proc/1` and the real gate script runs under /bin/sh:
 * it must not say `r` while init's files say "not armed", and must say it as soon as they do.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { GATE_FD, GATE_GO, GATE_READY, gatedShellArgs, type InitArmed } from "../../src/sandbox/gate.js";
import { removeDir, tempDir } from "../helpers/cli.js";

/** Long enough for several of the gate's 10 ms looks. */
const QUIET_MS = 300;
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) removeDir(d);
});

function fakeInit(files: Record<string, string>): string {
  const dir = tempDir("scoot-gate-init-");
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

/** Starts the gate; `said` resolves with what it wrote on its socket by then. */
function startGate(init: InitArmed, command: string) {
  const child = spawn("/bin/sh", gatedShellArgs("/bin/sh", command, init), {
    stdio: ["ignore", "pipe", "pipe", "ignore", "pipe"],
  });
  children.push(child);
  const gate = child.stdio[GATE_FD] as Duplex;
  let heard = "";
  gate.setEncoding("utf8").on("data", (d: string) => {
    heard += d;
  });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return {
    heard: () => heard,
    out: () => out,
    exited,
    go: () => gate.end(GATE_GO),
    until: async (pred: () => boolean, ms = 5_000) => {
      const end = Date.now() + ms;
      while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      return pred();
    },
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the gate waits for the sandbox's init to arm", () => {
  it("with a filter: silent while pid 1 has none, ready once it has one, then runs the command", async () => {
    const dir = fakeInit({ status: "Name:\tbwrap\nState:\tR (running)\nSeccomp:\t0\nSeccomp_filters:\t1\n" });
    const gate = startGate({ kind: "seccomp", proc: dir }, "echo ran");
    await pause(QUIET_MS);
    expect(gate.heard()).toBe("");
    fs.writeFileSync(
      path.join(dir, "status"),
      "Name:\tbwrap\nState:\tS (sleeping)\nSeccomp:\t2\nSeccomp_filters:\t1\n",
    );
    expect(await gate.until(() => gate.heard() === GATE_READY)).toBe(true);
    gate.go();
    expect(await gate.exited).toBe(0);
    expect(gate.out()).toBe("ran\n");
  });

  it("without a filter: ready only once init sleeps in wait()", async () => {
    const dir = fakeInit({ wchan: "do_exit", status: "State:\tS (sleeping)\n" });
    const gate = startGate({ kind: "waiting", proc: dir }, "echo ran");
    await pause(QUIET_MS);
    expect(gate.heard()).toBe("");
    fs.writeFileSync(path.join(dir, "wchan"), "do_wait");
    expect(await gate.until(() => gate.heard() === GATE_READY)).toBe(true);
    gate.go();
    expect(await gate.exited).toBe(0);
  });

  it("without a filter where the kernel hides wchan: ready once init sleeps", async () => {
    const dir = fakeInit({ wchan: "0", status: "Name:\tbwrap\nState:\tR (running)\n" });
    const gate = startGate({ kind: "waiting", proc: dir }, "echo ran");
    await pause(QUIET_MS);
    expect(gate.heard()).toBe("");
    fs.writeFileSync(path.join(dir, "status"), "Name:\tbwrap\nState:\tS (sleeping)\n");
    expect(await gate.until(() => gate.heard() === GATE_READY)).toBe(true);
  });

  it("a Scoot gone before go: the gate closes without running the command", async () => {
    const dir = fakeInit({ status: "Seccomp:\t2\n" });
    const gate = startGate({ kind: "seccomp", proc: dir }, "echo ran");
    expect(await gate.until(() => gate.heard() === GATE_READY)).toBe(true);
    // The socket closes without `go`, as when Scoot is killed.
    (children[0]!.stdio[GATE_FD] as Duplex).destroy();
    expect(await gate.exited).toBe(125);
    expect(gate.out()).toBe("");
  });

  it("outside a sandbox there is nothing to wait for", async () => {
    const gate = startGate({ kind: "none" }, "echo ran");
    expect(await gate.until(() => gate.heard() === GATE_READY)).toBe(true);
    gate.go();
    expect(await gate.exited).toBe(0);
    expect(gate.out()).toBe("ran\n");
  });
});
