/**
 * The audit lock: stale takeover can never produce two holders, release removes
 * only our own lock, a live owner is never taken over. The race tests run real processes
 * (test/helpers/lock-contender.mjs) that judge the same crafted stale lock and meet at a
 * barrier before the takeover, so the interleaving is forced rather than hoped for.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { acquireLock, GARBAGE_LOCK_MS, tryLock } from "../../src/core/lock.js";
import { REPO_ROOT, removeDir, tempDir } from "../helpers/cli.js";

const CONTENDER = path.join(REPO_ROOT, "test", "helpers", "lock-contender.mjs");
const HOLD_MS = 150;

let dir: string;
let lock: string;
let deadPid: number;
beforeAll(() => {
  // A pid that certainly belonged to a process that is gone now.
  deadPid = spawnSync(process.execPath, ["-e", "0"]).pid!;
});
beforeEach(() => {
  dir = tempDir();
  lock = path.join(dir, "audit.jsonl.lock");
});
afterEach(() => removeDir(dir));

function contend(ids: string[], mode: "real" | "naive"): Promise<{ code: number | null; stderr: string }[]> {
  const barrier = path.join(dir, "barrier");
  fs.mkdirSync(barrier);
  const logFile = path.join(dir, "holders.log");
  return Promise.all(
    ids.map(
      (id) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(
            process.execPath,
            [CONTENDER, lock, barrier, id, String(ids.length), String(HOLD_MS), logFile, mode],
            { stdio: ["ignore", "ignore", "pipe"] },
          );
          let stderr = "";
          child.stderr.on("data", (d) => {
            stderr += d;
          });
          child.on("close", (code) => resolve({ code, stderr }));
        }),
    ),
  );
}

/** The most holders inside the critical section at once, from the enter/leave log. */
function maxHolders(): { max: number; entered: string[] } {
  const lines = fs.readFileSync(path.join(dir, "holders.log"), "utf8").trim().split("\n");
  let inside = 0;
  let max = 0;
  const entered: string[] = [];
  for (const l of lines) {
    const [what, id] = l.split(" ");
    if (what === "enter") {
      inside += 1;
      entered.push(id!);
    } else inside -= 1;
    max = Math.max(max, inside);
  }
  return { max, entered };
}

describe("stale takeover", () => {
  it("main's takeover (remove whatever is there) gives two holders in this interleaving", async () => {
    fs.writeFileSync(lock, String(deadPid));
    const results = await contend(["a", "b"], "naive");
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(maxHolders().max).toBe(2);
  });

  it("two processes that judged the same stale lock at the same moment never both hold it", async () => {
    // Exactly what a SIGKILLed holder leaves: its owner file, hard-linked to the lock name.
    const deadOwner = `${lock}.owner-${deadPid}-00aa11bb22cc33dd`;
    fs.writeFileSync(deadOwner, `${deadPid} 00aa11bb22cc33dd`);
    fs.linkSync(deadOwner, lock);
    const results = await contend(["a", "b"], "real");
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const { max, entered } = maxHolders();
    expect(max).toBe(1);
    // The run goes on: both got the lock in turn, and nothing is left behind.
    expect(entered.sort()).toEqual(["a", "b"]);
    // No lock, no claim, no temp file left: the dead owner's file was removed by the one
    // process that broke its lock, and the contenders' own owner files went when they exited.
    expect(fs.readdirSync(dir).filter((n) => n.startsWith("audit.jsonl.lock"))).toEqual([]);
  });

  it("four processes racing for a stale lock left by an older version (bare pid) take turns", async () => {
    fs.writeFileSync(lock, String(deadPid));
    const results = await contend(["p1", "p2", "p3", "p4"], "real");
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const { max, entered } = maxHolders();
    expect(max).toBe(1);
    expect(entered.sort()).toEqual(["p1", "p2", "p3", "p4"]);
  });
});

describe("ownership", () => {
  it("release removes only our own lock, never one another process holds now", () => {
    const mine = acquireLock(lock);
    // Someone else's lock sits at the name now (as after a wrongful takeover).
    fs.rmSync(lock);
    fs.writeFileSync(lock, `${process.ppid} feedfacefeedface`);
    mine.release();
    expect(fs.readFileSync(lock, "utf8")).toBe(`${process.ppid} feedfacefeedface`);
  });

  it("a lock whose owner is alive is never taken over, however old; the wait fails naming it", () => {
    fs.writeFileSync(lock, `${process.ppid} 0123456789abcdef`);
    const old = new Date(Date.now() - 3_600_000);
    fs.utimesSync(lock, old, old);
    expect(tryLock(lock)).toEqual({ holder: process.ppid });
    expect(() => acquireLock(lock, {}, 30)).toThrow(new RegExp(`held by pid ${process.ppid}`));
    expect(fs.readFileSync(lock, "utf8")).toContain("0123456789abcdef");
  });

  it.each([
    ["an empty lock younger than the garbage limit is left alone", 0, false],
    ["an empty lock older than the garbage limit is taken over", GARBAGE_LOCK_MS + 5_000, true],
  ])("%s", (_what, ageMs, taken) => {
    fs.writeFileSync(lock, "");
    const t = new Date(Date.now() - ageMs);
    fs.utimesSync(lock, t, t);
    const r = tryLock(lock);
    expect("release" in r).toBe(taken);
    if ("release" in r) r.release();
  });

  it("our own pid with a token we do not hold is a leftover of an earlier process with this pid", () => {
    fs.writeFileSync(lock, `${process.pid} 0000000000000000`);
    const r = tryLock(lock);
    expect("release" in r).toBe(true);
    if ("release" in r) r.release();
    expect(fs.existsSync(lock)).toBe(false);
  });

  it("takes the lock by linking this process's owner file (never visible empty), and leaves no temp files", () => {
    const l = acquireLock(lock);
    expect(fs.readFileSync(lock, "utf8")).toMatch(new RegExp(`^${process.pid} [0-9a-f]{16}$`));
    l.release();
    // Only the owner file stays, for the next acquisition; the process removes it at exit.
    expect(fs.readdirSync(dir)).toEqual([
      expect.stringMatching(new RegExp(`^audit\\.jsonl\\.lock\\.owner-${process.pid}-[0-9a-f]{16}$`)),
    ]);
  });

  it("owner files left by dead processes that did not hold the lock are swept; live ones stay", () => {
    const dead = `${lock}.owner-${deadPid}-abcdef0123456789`;
    const live = `${lock}.owner-${process.ppid}-0123456789abcdef`;
    fs.writeFileSync(dead, `${deadPid} abcdef0123456789`);
    fs.writeFileSync(live, `${process.ppid} 0123456789abcdef`);
    acquireLock(lock).release();
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.existsSync(live)).toBe(true);
  });
});
