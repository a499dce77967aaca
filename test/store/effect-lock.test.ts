/**
 * The per-project effect lock (src/store/effect-lock.ts), across real processes: an editor
 * write waits while a command of another Scoot process runs in the project and fails, naming
 * it, when the command outlasts the wait; a command waits while a write is in flight; a share
 * or a writer left by a dead process holds nothing.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { effectLockDir, holdForCommand, holdForEditorWrite } from "../../src/store/effect-lock.js";
import { REPO_ROOT, removeDir, tempDir } from "../helpers/cli.js";

let home: string;
let dir: string;
beforeEach(() => {
  home = tempDir("scoot-effect-lock-");
  dir = effectLockDir(home, REPO_ROOT);
});
afterEach(() => removeDir(home));

const never = new AbortController().signal;
const DIST_LOCK = path.join(REPO_ROOT, "dist", "store", "effect-lock.js");

/** Another process holding a command's share for `ms`; resolves once it holds it. */
function otherCommand(ms: number): Promise<{ pid: number; ended: Promise<void>; releasedAt: () => number }> {
  const code = `const m = await import(${JSON.stringify(DIST_LOCK)});
const h = await m.holdForCommand(${JSON.stringify(dir)}, new AbortController().signal);
process.stdout.write("held\\n");
setTimeout(() => { process.stdout.write("releasing " + Date.now() + "\\n", () => { h.release(); process.exit(0); }); }, ${ms});`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  // Ended once its output is all read (the time it let go is in it).
  const ended = new Promise<void>((r) => child.stdout!.once("end", () => r()));
  let releasedAt = Number.POSITIVE_INFINITY;
  return new Promise((resolve) => {
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      const m = /releasing (\d+)/.exec(d);
      if (m) releasedAt = Number(m[1]);
      if (d.includes("held")) resolve({ pid: child.pid!, ended, releasedAt: () => releasedAt });
    });
  });
}

describe("the project's effect lock", () => {
  it("lives under the home, one directory per real project root", () => {
    expect(dir.startsWith(path.join(home, "state", "locks"))).toBe(true);
    expect(effectLockDir(home, `${REPO_ROOT}/./`)).toBe(dir);
    expect(effectLockDir(home, path.join(REPO_ROOT, "src"))).not.toBe(dir);
  });

  it("an editor write waits until another process's command has ended", async () => {
    const other = await otherCommand(300);
    const w = await holdForEditorWrite(dir, never);
    const grantedAt = Date.now();
    expect(w.ok).toBe(true);
    if (w.ok) w.value.release();
    await other.ended;
    // Granted only after the other process was about to let go of its share.
    expect(grantedAt).toBeGreaterThanOrEqual(other.releasedAt());
    expect(fs.readdirSync(dir).filter((n) => n.startsWith("run-"))).toEqual([]);
  });

  it("an editor write fails, naming the process, when a command outlasts the wait", async () => {
    const other = await otherCommand(5_000);
    const w = await holdForEditorWrite(dir, never, 200);
    expect(w.ok).toBe(false);
    if (!w.ok) expect(w.error).toMatch(new RegExp(`pid ${other.pid}\\) still runs in this project`));
    process.kill(other.pid, "SIGKILL");
    await other.ended;
    // A share whose process died holds nothing.
    const again = await holdForEditorWrite(dir, never, 1_000);
    expect(again.ok).toBe(true);
    if (again.ok) again.value.release();
  });

  it("a command waits while an editor write is in flight, and starts when it ends", async () => {
    const w = await holdForEditorWrite(dir, never);
    expect(w.ok).toBe(true);
    let started = false;
    const command = holdForCommand(dir, never).then((h) => {
      started = true;
      return h;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toBe(false);
    if (w.ok) w.value.release();
    const h = await command;
    expect(started).toBe(true);
    h?.release();
  });

  it("a command waiting for a write gives up when its signal fires (it does not start)", async () => {
    const w = await holdForEditorWrite(dir, never);
    const stop = new AbortController();
    const command = holdForCommand(dir, stop.signal);
    stop.abort();
    expect(await command).toBeUndefined();
    if (w.ok) w.value.release();
  });
});
