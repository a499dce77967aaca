/**
 * A home that cannot take a write at session start, and the litter of writers that died
 * (docs/reliability.md "A home that refuses writes", "Temporary files"):
 *
 * - a full home, a fresh read-only home and an existing home remounted read-only: `scoot -e`
 *   exits with one line naming the place, the reason and the fix — never "internal error" or a
 *   stack trace — and asks the model nothing;
 * - temp files that dead writers left in the home's logs/ and state/ are removed when the next
 *   session starts, in the sessions directory when it is next listed; a running writer's temp
 *   file is left alone.
 *
 * The mounts need root; without it those cases are skipped with the reason printed.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";
import { whyNoTmpfs } from "./lib.js";

const cannotMount = whyNoTmpfs();
if (cannotMount) console.log(`[drill home-faults] mount cases skipped: ${cannotMount}`);

let base: string;
let home: string;
let project: string;
let server: ScriptedServer | undefined;
const mounts: string[] = [];

beforeEach(() => {
  base = tempDir("scoot-home-faults-");
  home = path.join(base, "home");
  project = path.join(base, "project");
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(project);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const m of mounts.splice(0).reverse()) spawnSync("umount", [m]);
  removeDir(base);
});

function mount(args: string[], at: string): void {
  execFileSync("mount", [...args, at], { stdio: "pipe" });
  mounts.push(at);
}

async function run() {
  server = await startScriptedServer([step("final", "done")]);
  return runCli(["-e", "go"], { home, cwd: project, env: { SCOOT_BACKEND_BASE_URL: server.url } });
}

function expectOneLine(r: { code: number | null; stderr: string }, reason: RegExp): void {
  expect(r.code).not.toBe(0);
  expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
  const lines = r.stderr.trim().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(reason);
  expect(lines[0]).toContain("fix:");
  expect(lines[0]).toContain("--scoot-home");
  // Nothing was asked of the model: the session never started.
  expect(server!.completions()).toHaveLength(0);
}

describe("a home that refuses writes at session start", () => {
  it.skipIf(cannotMount !== undefined)("full: one line naming ENOSPC and the fix", async () => {
    mount(["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs"], home);
    // Fill it to the last block: even the first small file cannot be written.
    spawnSync("dd", ["if=/dev/zero", `of=${path.join(home, "filler")}`, "bs=4k"], { stdio: "ignore" });
    const r = await run();
    expectOneLine(r, /cannot write .*: no space left on device \(ENOSPC\); fix: free space/);
  });

  it.skipIf(cannotMount !== undefined)("read-only and empty: one line naming EROFS, not ENOENT", async () => {
    mount(["-t", "tmpfs", "-o", "size=64k,mode=0700,ro", "tmpfs"], home);
    const r = await run();
    expectOneLine(r, /cannot write .*: read-only file system \(EROFS\); fix: remount it read-write/);
  });

  it.skipIf(cannotMount !== undefined)(
    "an existing home remounted read-only: one line naming EROFS",
    async () => {
      // A home that worked yesterday: its logs/ and sessions exist; today the disk is read-only.
      const first = await run();
      expect(first.code, first.stderr).toBe(0);
      await server?.close();
      mount(["--bind", home], home);
      execFileSync("mount", ["-o", "remount,bind,ro", home], { stdio: "pipe" });
      const r = await run();
      expectOneLine(r, /cannot write .*read-only file system \(EROFS\); fix: remount it read-write/);
    },
  );
});

describe("temp files of writers that died", () => {
  it("are removed from logs/ and state/ when the next session starts, from sessions/ when it is listed", async () => {
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    await server?.close();
    // A pid that surely runs no more: a child that has exited.
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
    const live = process.pid;
    const sessions = path.join(home, "state", "sessions");
    const litter = [
      path.join(home, "logs", `audit.jsonl.gen.tmp-${dead}-lq2x1`),
      path.join(home, "logs", `audit.jsonl.chain.tmp-${dead}-lq2x2`),
      path.join(home, "state", `context-window.json.${dead}.k3j2h1.tmp`),
      path.join(home, "state", `.daemon.json.scoot-${dead}-0a1b2c3d.tmp`),
    ];
    // The sessions directory is swept where it is read whole anyway: by every listing.
    const inSessions = path.join(sessions, `.x.settings.json.scoot-${dead}-0a1b2c3d.tmp`);
    const kept = [
      path.join(home, "logs", `audit.jsonl.gen.tmp-${live}-lq2x3`),
      path.join(home, "state", `.daemon.json.scoot-${live}-0a1b2c3e.tmp`),
      // Not a Scoot temp name: never touched.
      path.join(home, "state", "notes.tmp"),
    ];
    for (const f of [...litter, ...kept, inSessions]) fs.writeFileSync(f, "partial");
    const second = await run();
    expect(second.code, second.stderr).toBe(0);
    for (const f of litter) expect(fs.existsSync(f), f).toBe(false);
    for (const f of kept) expect(fs.existsSync(f), f).toBe(true);
    const listed = await runCli(["sessions", "list"], { home, cwd: project });
    expect(listed.code, listed.stderr).toBe(0);
    expect(fs.existsSync(inSessions)).toBe(false);
  });
});
