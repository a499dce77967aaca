/**
 * Checkpoint-ahead drill (docs/reliability.md, docs/sessions.md "Undo"): undo knows every change
 * a file tool made, whatever stopped the run around the rename that makes the new content
 * visible. Real faults on the real CLI against the scripted model:
 *
 * - strace kills the CLI (SIGKILL) at the fsync of the project directory that follows the
 *   file tool's rename, so the change is on disk and its completion record is not: `scoot undo`
 *   puts back every file of the run, the interrupted one included (it said "no file changes to
 *   undo", or undid only the files before it and reported that complete);
 * - strace kills it at the fsync of the checkpoint directory that makes the intent record
 *   durable, before the rename: the file is untouched, undo finds nothing, and the next run's
 *   change of the same file undoes to the right content;
 * - the checkpoint store on a full tmpfs (root only, as the disk-full drill): no room for the
 *   intent record stops the run before the change, with the stop a failed audit write gives;
 *   room for the intent but not for its completion still leaves a change undo restores.
 *
 * strace (installed by CI's .ci/run) and mounting need what CI has; elsewhere each part is
 * skipped with the reason printed.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempWriterPid } from "../../src/core/stale-temps.js";
import { CLI, type CliResult, cleanEnv, collect, removeDir, runCli, tempDir } from "../helpers/cli.js";
import {
  type ScriptedServer,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";
import { allAuditEvents, whyNoTmpfs } from "./lib.js";

const RUN_GUARD_MS = 60_000;
const BEFORE = "alpha\nbeta\n";

function probeStrace(): string | undefined {
  try {
    execFileSync("strace", ["-f", "-qq", "-o", "/dev/null", "true"], { stdio: "ignore" });
    return undefined;
  } catch (e) {
    return `strace cannot run here (.ci/run installs it): ${(e as Error).message.split("\n")[0]}`;
  }
}

const noStrace = probeStrace();
if (noStrace) console.log(`[drill checkpoint-ahead] strace part skipped: ${noStrace}`);
const cannotMount = whyNoTmpfs();
if (cannotMount) console.log(`[drill checkpoint-ahead] full-store part skipped: ${cannotMount}`);

let base: string;
let home: string;
let project: string;
let server: ScriptedServer | undefined;
const mounts: string[] = [];

beforeEach(() => {
  base = fs.realpathSync(tempDir("scoot-drill-ckpt-"));
  home = path.join(base, "home");
  project = path.join(base, "project");
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, "notes.txt"), BEFORE);
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const m of mounts.splice(0)) {
    try {
      execFileSync("umount", [m], { stdio: "pipe" });
    } catch {
      execFileSync("umount", ["-l", m], { stdio: "pipe" });
    }
  }
  removeDir(base);
});

const read = (name: string) => fs.readFileSync(path.join(project, name), "utf8");
const checkpointDir = (session: string) => path.join(home, "state", "checkpoints", session);

/** The session's checkpoint entries as stored (whatever the product makes of them). */
function storedEntries(session: string): Record<string, unknown>[] {
  const dir = checkpointDir(session);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => /^\d{8}\.json$/.test(n))
    .sort()
    .map((n) => JSON.parse(fs.readFileSync(path.join(dir, n), "utf8")) as Record<string, unknown>);
}

async function serve(items: ScriptItem[]): Promise<string> {
  await server?.close();
  server = await startScriptedServer(items);
  return server.url;
}

/**
 * One `-e` run under strace, SIGKILLed at the `when`-th fsync of a descriptor open on `dir`
 * (strace's -P keeps the count to that directory alone).
 */
async function killedAtFsync(
  args: string[],
  url: string,
  dir: string,
  when: number,
): Promise<CliResult & { trace: string }> {
  const out = path.join(base, "strace.txt");
  const child = spawn(
    "strace",
    [
      "-f",
      "-qq",
      "-o",
      out,
      "-P",
      dir,
      "-e",
      "trace=fsync",
      "-e",
      `inject=fsync:signal=KILL:when=${when}`,
      process.execPath,
      CLI,
      ...args,
    ],
    {
      cwd: project,
      env: cleanEnv({ SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: url }),
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  const r = await collect(child, { timeoutMs: RUN_GUARD_MS });
  return { ...r, trace: fs.readFileSync(out, "utf8") };
}

const scoot = (args: string[], url?: string) =>
  runCli(args, {
    home,
    cwd: project,
    timeoutMs: RUN_GUARD_MS,
    ...(url ? { env: { SCOOT_BACKEND_BASE_URL: url } } : {}),
  });

describe.skipIf(noStrace !== undefined)("a SIGKILL on either side of a file tool's rename (strace)", () => {
  it("killed just after the rename: undo puts back every file of the run, the interrupted one too", async () => {
    const url = await serve([
      step("file_write", { path: "made.txt", content: "new file\n" }),
      step("file_write", { path: "notes.txt", content: "changed\n" }),
      step("final", "should not get here"),
    ]);
    // The first fsync of the project directory follows made.txt's rename, the second notes.txt's.
    const r = await killedAtFsync(["-e", "change two files", "--session-id", "ck-after"], url, project, 2);
    expect(r.trace, r.stderr).toMatch(/killed by SIGKILL/);
    // The change landed, and its completion was never recorded: the window the drill aims at.
    expect(read("made.txt")).toBe("new file\n");
    expect(read("notes.txt")).toBe("changed\n");
    const stored = storedEntries("ck-after");
    expect(stored.map((e) => path.basename(String(e.path)))).toEqual(["made.txt", "notes.txt"]);
    expect(stored[1]!.after).toBeUndefined();

    const undo = await scoot(["undo", "ck-after"]);
    console.log(`[drill checkpoint-ahead] undo after a kill past the rename: ${undo.stdout}${undo.stderr}`);
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.stdout).toMatch(/restored notes\.txt/);
    expect(undo.stdout).toMatch(/removed\s+made\.txt/);
    expect(read("notes.txt")).toBe(BEFORE);
    expect(fs.existsSync(path.join(project, "made.txt"))).toBe(false);
  });

  it("killed once the intent is on disk, before the rename: nothing changed, nothing undone, the next change undoes right", async () => {
    let url = await serve([
      step("file_write", { path: "notes.txt", content: "changed\n" }),
      step("final", "should not get here"),
    ]);
    // The first fsync of the checkpoint directory makes the intent record durable.
    const r = await killedAtFsync(
      ["-e", "change a file", "--session-id", "ck-before"],
      url,
      checkpointDir("ck-before"),
      1,
    );
    expect(r.trace, r.stderr).toMatch(/killed by SIGKILL/);
    expect(read("notes.txt")).toBe(BEFORE);
    expect(storedEntries("ck-before")).toHaveLength(1);

    const nothing = await scoot(["undo", "ck-before"]);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/no file changes to undo/);
    expect(read("notes.txt")).toBe(BEFORE);

    // The session goes on: the model writes the same content again, and it really lands this time.
    url = await serve([
      step("file_write", { path: "notes.txt", content: "changed\n" }),
      step("final", "done"),
    ]);
    const again = await scoot(["-e", "change it again", "--resume", "ck-before"], url);
    expect(again.code, again.stderr).toBe(0);
    expect(read("notes.txt")).toBe("changed\n");
    // The session's start settled the interrupted intent (the file held its earlier content): gone.
    expect(storedEntries("ck-before").map((e) => e.after)).toEqual([expect.any(String)]);
    const undo = await scoot(["undo", "ck-before"]);
    expect(undo.code, undo.stderr).toBe(0);
    expect(read("notes.txt")).toBe(BEFORE);
    // Nothing is left to undo: the interrupted intent was not a change.
    const more = await scoot(["undo", "ck-before"]);
    expect(more.code).toBe(1);
    expect(more.stderr).toMatch(/no file changes to undo/);
    expect(read("notes.txt")).toBe(BEFORE);
  });
});

describe.skipIf(noStrace !== undefined)("a SIGKILL at the rename itself (strace)", () => {
  it("leaves the file as it was and a temp file beside it, which the session's next start removes", async () => {
    let url = await serve([
      step("file_write", { path: "notes.txt", content: "changed\n" }),
      step("final", "should not get here"),
    ]);
    const out = path.join(base, "strace-rename.txt");
    // strace's -P matches only a rename's first path (the temp file's random name), so the
    // renames are counted: the window cache, the chain record, the checkpoint entry, then the
    // file tool's. The trace's last line proves the killed one was notes.txt's.
    const child = spawn(
      "strace",
      [
        "-f",
        "-qq",
        "-o",
        out,
        "-e",
        "trace=rename",
        "-e",
        "inject=rename:signal=KILL:when=4",
        process.execPath,
        CLI,
        "-e",
        "change a file",
        "--session-id",
        "ck-rename",
      ],
      {
        cwd: project,
        env: cleanEnv({ SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: url }),
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    const r = await collect(child, { timeoutMs: RUN_GUARD_MS });
    const trace = fs.readFileSync(out, "utf8");
    expect(trace, r.stderr).toMatch(/killed by SIGKILL/);
    const killedAt = trace
      .split("\n")
      .filter((l) => l.includes("rename("))
      .at(-1);
    expect(killedAt, trace).toContain(`${path.join(project, "notes.txt")}"`);
    expect(read("notes.txt")).toBe(BEFORE);
    const temps = () => fs.readdirSync(project).filter((n) => tempWriterPid(n) !== undefined);
    // The window: the new content sits complete in a temp file that was never renamed.
    expect(temps()).toHaveLength(1);

    url = await serve([step("final", "done")]);
    const again = await scoot(["-e", "go on", "--resume", "ck-rename"], url);
    expect(again.code, again.stderr).toBe(0);
    expect(temps()).toEqual([]);
    expect(read("notes.txt")).toBe(BEFORE);
  });
});

/** Mounts a tmpfs of `size` as the home's checkpoint store; `fill` leaves it with no room. */
function checkpointStoreOnTmpfs(size: string, fill: boolean): void {
  const store = path.join(home, "state", "checkpoints");
  fs.mkdirSync(store, { recursive: true, mode: 0o700 });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", store], { stdio: "pipe" });
  mounts.push(store);
  if (!fill) return;
  const filler = path.join(store, "filler.bin");
  // Written until the disk says no: whatever the page size, nothing is left.
  const fd = fs.openSync(filler, "w");
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(1024));
  } catch (e) {
    expect((e as NodeJS.ErrnoException).code).toBe("ENOSPC");
  } finally {
    fs.closeSync(fd);
  }
}

describe.skipIf(cannotMount !== undefined)("a checkpoint store that cannot be written (full tmpfs)", () => {
  it("no room for the intent record: the run stops before the change, as for a failed audit write", async () => {
    checkpointStoreOnTmpfs("4k", true);
    const url = await serve([
      step("file_write", { path: "notes.txt", content: "changed\n" }),
      step("final", "should not get here"),
    ]);
    const r = await scoot(["-e", "change a file", "--session-id", "ck-full"], url);
    console.log(`[drill checkpoint-ahead] full store: exit ${r.code}; ${r.stderr.trim()}`);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/cannot keep the undo checkpoint/);
    expect(r.stderr).toMatch(/ENOSPC|no space left/i);
    expect(r.stderr).toMatch(/stopping/);
    expect(read("notes.txt")).toBe(BEFORE);
    // Not run, so not audited as run; and the model was not asked for another step.
    expect(allAuditEvents(home).some((e) => e.kind === "tool_call")).toBe(false);
    expect(server!.completions().length).toBe(1);
  });

  it("room for the intent but not its completion: undo still restores the change", async () => {
    // One page: the intent record fits; the completion's temporary file beside it does not.
    checkpointStoreOnTmpfs("4k", false);
    const url = await serve([
      step("file_write", { path: "notes.txt", content: "changed\n" }),
      step("final", "done"),
    ]);
    const r = await scoot(["-e", "change a file", "--session-id", "ck-half"], url);
    expect(read("notes.txt")).toBe("changed\n");
    const stored = storedEntries("ck-half");
    expect(stored).toHaveLength(1);
    expect(
      stored[0]!.after,
      "the completion record was written after all: the store was not full",
    ).toBeUndefined();
    console.log(`[drill checkpoint-ahead] completion not written: run exit ${r.code}`);

    const undo = await scoot(["undo", "ck-half"]);
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.stdout).toMatch(/restored notes\.txt/);
    expect(read("notes.txt")).toBe(BEFORE);
  });
});
