/**
 * The checkpoint store and undo over it (docs/sessions.md "Undo"), on real files in a temp home:
 * bounds, pruning, and undo's rules (last run only, refuse a file changed since, restore
 * absence and permission bits).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CHECKPOINT_LIMITS,
  type CheckpointWriter,
  checkpointDir,
  openCheckpointWriter,
  pruneCheckpoints,
  readCheckpoints,
} from "../../src/store/checkpoints.js";
import {
  applyUndo,
  changedSince,
  planUndo,
  sessionChanges,
  uncontained,
  unrestorable,
} from "../../src/store/undo.js";

let root: string;
let state: string;
let sessions: string;
let project: string;
beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-checkpoints-")));
  state = path.join(root, "home", "state");
  sessions = path.join(state, "sessions");
  project = path.join(root, "project");
  fs.mkdirSync(sessions, { recursive: true });
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(sessions, "s.jsonl"), "");
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** What the pipeline does around one file tool call: checkpoint, change, record the result. */
function change(w: CheckpointWriter, runId: string, file: string, content: string | null): void {
  const abs = path.join(project, file);
  const before = fs.existsSync(abs) ? fs.readFileSync(abs) : null;
  const mode = fs.existsSync(abs) ? fs.statSync(abs).mode & 0o7777 : undefined;
  const kept = w.before({
    runId,
    goal: `goal of ${runId}`,
    path: abs,
    content: before,
    ...(mode ? { mode } : {}),
  });
  if (!kept.ok) throw new Error(kept.error);
  if (content === null) fs.rmSync(abs, { force: true });
  else fs.writeFileSync(abs, content);
  const now = content === null ? null : Buffer.from(content);
  const r = w.after(kept.value, now);
  if (!r.ok) throw new Error(r.error);
}

const read = (file: string) => fs.readFileSync(path.join(project, file), "utf8");

describe("undo over checkpoints", () => {
  it("reverts only the last run, each file to what it held before that run", () => {
    const w = openCheckpointWriter(state, "s", sessions);
    fs.writeFileSync(path.join(project, "a.txt"), "a0");
    change(w, "run-1", "a.txt", "a1");
    change(w, "run-2", "a.txt", "a2");
    change(w, "run-2", "a.txt", "a3");
    change(w, "run-2", "b.txt", "b1");
    const plan = planUndo(readCheckpoints(state, "s").entries)!;
    expect(plan.runId).toBe("run-2");
    expect(plan.goal).toBe("goal of run-2");
    expect(changedSince(plan, project)).toEqual([]);
    const out = applyUndo(state, "s", plan, project);
    expect(out).toMatchObject({
      restored: [path.join(project, "a.txt")],
      removed: [path.join(project, "b.txt")],
    });
    expect(read("a.txt")).toBe("a1");
    expect(fs.existsSync(path.join(project, "b.txt"))).toBe(false);
    // The next undo takes the run before.
    const next = planUndo(readCheckpoints(state, "s").entries)!;
    expect(next.runId).toBe("run-1");
    applyUndo(state, "s", next, project);
    expect(read("a.txt")).toBe("a0");
    expect(planUndo(readCheckpoints(state, "s").entries)).toBeUndefined();
  });

  it("a file changed since Scoot changed it is named, and nothing is undone unless forced", () => {
    const w = openCheckpointWriter(state, "s", sessions);
    fs.writeFileSync(path.join(project, "a.txt"), "mine");
    change(w, "run-1", "a.txt", "scoot's");
    change(w, "run-1", "c.txt", "created");
    fs.writeFileSync(path.join(project, "a.txt"), "edited by hand");
    const plan = planUndo(readCheckpoints(state, "s").entries)!;
    expect(changedSince(plan, project)).toEqual([path.join(project, "a.txt")]);
    // Removed since: "changed since". Swapped for a symlink: refused for containment, never followed.
    fs.rmSync(path.join(project, "c.txt"));
    expect(changedSince(plan, project)).toEqual([path.join(project, "a.txt"), path.join(project, "c.txt")]);
    fs.symlinkSync(path.join(project, "a.txt"), path.join(project, "c.txt"));
    expect(changedSince(plan, project)).toEqual([path.join(project, "a.txt")]);
    expect(uncontained(plan, project).map((f) => f.path)).toEqual([path.join(project, "c.txt")]);
    // Forced: the person asked for it.
    fs.rmSync(path.join(project, "c.txt"));
    applyUndo(state, "s", plan, project);
    expect(read("a.txt")).toBe("mine");
  });

  it("restores the permission bits the file had", () => {
    const w = openCheckpointWriter(state, "s", sessions);
    const script = path.join(project, "run.sh");
    fs.writeFileSync(script, "#!/bin/sh\necho old\n");
    fs.chmodSync(script, 0o750);
    change(w, "run-1", "run.sh", "#!/bin/sh\necho new\n");
    fs.chmodSync(script, 0o644);
    // Mode alone is no content change; undo puts the content and the mode back.
    applyUndo(state, "s", planUndo(readCheckpoints(state, "s").entries)!, project);
    expect(read("run.sh")).toBe("#!/bin/sh\necho old\n");
    expect(fs.statSync(script).mode & 0o777).toBe(0o750);
  });

  it("a file too large to keep is recorded by hash only; undo names it as unrestorable", () => {
    const w = openCheckpointWriter(state, "s", sessions, { ...CHECKPOINT_LIMITS, maxFileBytes: 10 });
    fs.writeFileSync(path.join(project, "big.txt"), "x".repeat(11));
    change(w, "run-1", "big.txt", "small");
    const plan = planUndo(readCheckpoints(state, "s").entries)!;
    expect(unrestorable(plan)).toEqual([path.join(project, "big.txt")]);
    const out = applyUndo(state, "s", plan, project);
    expect(out.skipped).toEqual([path.join(project, "big.txt")]);
    expect(read("big.txt")).toBe("small");
  });

  it("a change whose outcome was never recorded (tool failed, crash) is left alone", () => {
    const w = openCheckpointWriter(state, "s", sessions);
    change(w, "run-1", "a.txt", "one");
    const kept = w.before({
      runId: "run-2",
      goal: "g",
      path: path.join(project, "a.txt"),
      content: Buffer.from("one"),
    });
    expect(kept.ok).toBe(true);
    const plan = planUndo(readCheckpoints(state, "s").entries)!;
    expect(plan.runId).toBe("run-1");
    applyUndo(state, "s", plan, project);
    expect(fs.existsSync(path.join(project, "a.txt"))).toBe(false);
    expect(readCheckpoints(state, "s").entries).toEqual([]);
  });

  it("sessionChanges: each file from before the session's first change to what is on disk now", () => {
    const w = openCheckpointWriter(state, "s", sessions);
    fs.writeFileSync(path.join(project, "a.txt"), "a0\n");
    change(w, "run-1", "a.txt", "a1\n");
    change(w, "run-2", "a.txt", "a2\n");
    change(w, "run-2", "n.txt", "new\n");
    fs.writeFileSync(path.join(project, "n.txt"), "new, then edited\n");
    expect(sessionChanges(readCheckpoints(state, "s").entries, project)).toEqual([
      {
        path: path.join(project, "a.txt"),
        before: "a0\n",
        now: "a2\n",
        omitted: false,
        secret: false,
        changedSince: false,
        runs: 2,
      },
      {
        path: path.join(project, "n.txt"),
        before: null,
        now: "new, then edited\n",
        omitted: false,
        secret: false,
        changedSince: true,
        runs: 1,
      },
    ]);
  });
});

describe("checkpoint bounds", () => {
  it("entries are mode 0600 in a 0700 directory, and the writes leave no temp files", () => {
    const w = openCheckpointWriter(state, "s", sessions);
    change(w, "run-1", "a.txt", "x");
    const dir = checkpointDir(state, "s");
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const files = fs.readdirSync(dir);
    expect(files).toEqual(["00000001.json"]);
    expect(fs.statSync(path.join(dir, files[0]!)).mode & 0o777).toBe(0o600);
  });

  it("a session over its size bound drops its oldest runs first, never the current one", () => {
    const w = openCheckpointWriter(state, "s", sessions, { ...CHECKPOINT_LIMITS, maxSessionBytes: 3000 });
    for (const run of ["run-1", "run-2", "run-3"]) {
      fs.writeFileSync(path.join(project, `${run}.txt`), "y".repeat(900));
      change(w, run, `${run}.txt`, "z");
    }
    const runs = new Set(readCheckpoints(state, "s").entries.map((e) => e.run_id));
    expect(runs.has("run-3")).toBe(true);
    expect(runs.has("run-1")).toBe(false);
    const total = fs
      .readdirSync(checkpointDir(state, "s"))
      .reduce((n, f) => n + fs.statSync(path.join(checkpointDir(state, "s"), f)).size, 0);
    expect(total).toBeLessThanOrEqual(3000);
  });

  it("prunes the checkpoints of deleted sessions and of old ones, never the session writing", () => {
    for (const id of ["gone", "old", "fresh"]) {
      fs.writeFileSync(path.join(sessions, `${id}.jsonl`), "");
      change(openCheckpointWriter(state, id, sessions), "run-1", `${id}.txt`, id);
    }
    fs.rmSync(path.join(sessions, "gone.jsonl"));
    const old = checkpointDir(state, "old");
    const longAgo = new Date(Date.now() - CHECKPOINT_LIMITS.maxAgeMs - 60_000);
    for (const f of fs.readdirSync(old)) fs.utimesSync(path.join(old, f), longAgo, longAgo);
    fs.utimesSync(old, longAgo, longAgo);
    const removed = pruneCheckpoints(state, sessions, Date.now(), { keep: "s" });
    expect(removed.sort()).toEqual(["gone", "old"]);
    expect(fs.existsSync(checkpointDir(state, "fresh"))).toBe(true);
    // A session's first checkpoint prunes the others on the way.
    fs.rmSync(path.join(sessions, "fresh.jsonl"));
    change(openCheckpointWriter(state, "s", sessions), "run-1", "s.txt", "s");
    expect(fs.existsSync(checkpointDir(state, "fresh"))).toBe(false);
  });

  it("a planted entry that is a symlink or not JSON is reported and skipped, never followed", () => {
    const w = openCheckpointWriter(state, "s", sessions);
    change(w, "run-1", "a.txt", "x");
    const dir = checkpointDir(state, "s");
    fs.writeFileSync(path.join(root, "elsewhere.json"), "{}");
    fs.symlinkSync(path.join(root, "elsewhere.json"), path.join(dir, "00000002.json"));
    fs.writeFileSync(path.join(dir, "00000003.json"), "not json");
    const { entries, problems } = readCheckpoints(state, "s");
    expect(entries).toHaveLength(1);
    expect(problems).toHaveLength(2);
  });
});
