/**
 * A container's arbitrary uid: no passwd entry and often no `HOME`. `scoot -e` then either runs
 * (HOME names a directory) or exits 2 with one line naming the fix, never a stack trace
 * (docs/configuration.md "Runtime home"). The built CLI runs as uid/gid 54321, which has no
 * passwd entry here; that needs root, so elsewhere the test skips with a printed reason.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, cleanEnv, collect, removeDir, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";

const UID = 54321;
const isRoot = process.getuid?.() === 0;
const hasPasswdEntry =
  fs.existsSync("/etc/passwd") &&
  fs
    .readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .some((line) => line.split(":")[2] === String(UID));
const skipReason = !isRoot
  ? "it must run as root to start the CLI as another uid"
  : hasPasswdEntry
    ? `uid ${UID} has a passwd entry here`
    : undefined;
if (skipReason) console.log(`[no-passwd-home] skipped: ${skipReason}`);

let base: string;
let project: string;
let model: ScriptedServer;
/** The node binary the other uid runs. */
let node = process.execPath;

/** Whether any user may run `file`: it and every directory above it open to others. */
function openToOthers(file: string): boolean {
  for (let p = file; ; p = path.dirname(p)) {
    const mode = fs.statSync(p).mode;
    if ((mode & 0o001) === 0) return false;
    if (p === path.dirname(p)) return true;
  }
}

beforeAll(async () => {
  if (skipReason) return;
  base = tempDir();
  fs.chmodSync(base, 0o755);
  project = path.join(base, "project");
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, "notes.txt"), "hello\n");
  fs.chownSync(project, UID, UID);
  fs.chownSync(path.join(project, "notes.txt"), UID, UID);
  model = await startScriptedServer([step("final", "done as a passwd-less uid")]);
  // A node installed under root's own home (CI's Node 24 lives in /root/.cache) is not the
  // other uid's to run: a copy in the test's open directory is.
  if (!openToOthers(process.execPath)) {
    node = path.join(base, "node");
    fs.copyFileSync(process.execPath, node);
    fs.chmodSync(node, 0o755);
  }
});

afterAll(async () => {
  await model?.close();
  if (base) removeDir(base);
});

function runAsNobody(env: Record<string, string | undefined>) {
  const child = spawn(node, [CLI, "-e", "say done"], {
    cwd: project,
    uid: UID,
    gid: UID,
    // Not the suite's shared compile cache: it is root's, and this uid would be warned off it.
    env: cleanEnv({
      HOME: undefined,
      SCOOT_BACKEND_BASE_URL: model.url,
      SCOOT_COMPILE_CACHE: undefined,
      ...env,
    }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  return collect(child);
}

describe.skipIf(skipReason !== undefined)("a uid with no passwd entry", () => {
  it("without HOME or SCOOT_HOME: exit 2 and one line naming the fix", async () => {
    const r = await runAsNobody({});
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trimEnd().split("\n")).toEqual([
      `scoot: cannot tell your home directory: HOME is not set and uid ${UID} has no passwd entry; set HOME to a directory of yours (e.g. HOME=/tmp/scoot-user), or run as a user with a passwd entry`,
    ]);
    expect(r.stdout).toBe("");
  });

  it("without HOME but with SCOOT_HOME: the same one line (the gate protects the user's home)", async () => {
    const home = path.join(base, "scoot-home");
    fs.mkdirSync(home, { mode: 0o700 });
    fs.chownSync(home, UID, UID);
    const r = await runAsNobody({ SCOOT_HOME: home });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^scoot: cannot tell your home directory: .*set HOME/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("with HOME set as the fix says: the run answers, its home under HOME", async () => {
    const userHome = path.join(base, "user-home");
    fs.mkdirSync(userHome, { mode: 0o700 });
    fs.chownSync(userHome, UID, UID);
    const r = await runAsNobody({ HOME: userHome });
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("done as a passwd-less uid");
    expect(fs.existsSync(path.join(userHome, ".scoot", "logs", "audit.jsonl"))).toBe(true);
  });
});
