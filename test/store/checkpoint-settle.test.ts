/**
 * Write-ahead checkpoints (docs/sessions.md "Undo"): an entry is on disk, with the hash of the
 * content the change will write, before the change; one a crash or a failed completion write
 * left without `after` is settled by what its file was next seen to hold. On real files in a
 * temp home, through the writer, undo's plan and diff the product uses.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type CheckpointEntry,
  type CheckpointWriter,
  checkpointDir,
  openCheckpointWriter,
  readCheckpoints,
  sha256,
} from "../../src/store/checkpoints.js";
import {
  applyUndo,
  changedSince,
  planUndo,
  sessionChanges,
  settledEntries,
  withheld,
} from "../../src/store/undo.js";

let root: string;
let state: string;
let sessions: string;
let project: string;
beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-settle-")));
  state = path.join(root, "home", "state");
  sessions = path.join(state, "sessions");
  project = path.join(root, "project");
  fs.mkdirSync(sessions, { recursive: true });
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(sessions, "s.jsonl"), "");
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const abs = (file: string) => path.join(project, file);
const read = (file: string) => fs.readFileSync(abs(file), "utf8");
const writer = () => openCheckpointWriter(state, "s", sessions, undefined, project);
const stored = () => readCheckpoints(state, "s").entries;
const settled = () => settledEntries(stored(), project);

/**
 * One file tool call as the pipeline makes it, stopped where `stop` says: "intent" before the
 * change (the kill lands between the intent record and the rename), "rename" after the change
 * and before its completion record, or not at all.
 */
function change(
  w: CheckpointWriter,
  runId: string,
  file: string,
  content: string,
  stop?: "intent" | "rename",
  opts: { withheld?: boolean } = {},
): CheckpointEntry {
  const before = fs.existsSync(abs(file)) ? fs.readFileSync(abs(file)) : null;
  const kept = w.before({
    runId,
    goal: `goal of ${runId}`,
    path: abs(file),
    content: before,
    intended: Buffer.from(content),
    ...(opts.withheld ? { withheld: true } : {}),
  });
  if (!kept.ok) throw new Error(kept.error);
  if (stop === "intent") return kept.value;
  fs.writeFileSync(abs(file), content);
  if (stop === "rename") return kept.value;
  const r = w.after(kept.value, Buffer.from(content));
  if (!r.ok) throw new Error(r.error);
  return kept.value;
}

describe("an entry is written ahead of its change", () => {
  it("carries the hash of the content the change will write, before the file changes", () => {
    fs.writeFileSync(abs("a.txt"), "a0");
    change(writer(), "run-1", "a.txt", "a1", "intent");
    expect(read("a.txt")).toBe("a0");
    const [e] = stored();
    expect(e).toMatchObject({ intent: sha256(Buffer.from("a1")), before: { kind: "content" } });
    expect(e!.after).toBeUndefined();
  });

  it("a secret's intent keeps no hash of it", () => {
    change(writer(), "run-1", ".env", "TOKEN=abc", "intent", { withheld: true });
    const text = fs.readFileSync(path.join(checkpointDir(state, "s"), "00000001.json"), "utf8");
    expect(text).not.toContain(sha256(Buffer.from("TOKEN=abc")));
    expect(stored()[0]!.intent).toBe("withheld");
  });

  it("drop removes the entry of a change that did not happen", () => {
    const w = writer();
    fs.writeFileSync(abs("a.txt"), "a0");
    const e = change(w, "run-1", "a.txt", "a1", "intent");
    expect(w.drop(e).ok).toBe(true);
    expect(stored()).toEqual([]);
  });
});

describe("undo settles a change whose completion was never recorded", () => {
  it("the file holds the intended content: undo restores it with the rest of its run", () => {
    const w = writer();
    fs.writeFileSync(abs("a.txt"), "a0");
    fs.writeFileSync(abs("b.txt"), "b0");
    change(w, "run-1", "a.txt", "a1");
    change(w, "run-1", "b.txt", "b1", "rename");
    // As the store holds it, b's change is unknown to a reader of confirmed entries only.
    expect(planUndo(stored())!.files.map((f) => path.basename(f.path))).toEqual(["a.txt"]);
    const plan = planUndo(settled())!;
    expect(plan.files.map((f) => path.basename(f.path))).toEqual(["a.txt", "b.txt"]);
    expect(changedSince(plan, project)).toEqual([]);
    const out = applyUndo(state, "s", plan, project);
    expect(out.failed).toEqual([]);
    expect([read("a.txt"), read("b.txt")]).toEqual(["a0", "b0"]);
    expect(stored()).toEqual([]);
  });

  it("a created file interrupted after the rename is removed", () => {
    change(writer(), "run-1", "new.txt", "fresh", "rename");
    const out = applyUndo(state, "s", planUndo(settled())!, project);
    expect(out.removed).toEqual([abs("new.txt")]);
    expect(fs.existsSync(abs("new.txt"))).toBe(false);
  });

  it("the file still holds its earlier content: the change did not happen, nothing to undo", () => {
    fs.writeFileSync(abs("a.txt"), "a0");
    change(writer(), "run-1", "a.txt", "a1", "intent");
    expect(planUndo(settled())).toBeUndefined();
    expect(sessionChanges(settled(), project)).toEqual([]);
  });

  it("a file absent before and still absent: did not happen", () => {
    change(writer(), "run-1", "never.txt", "x", "intent");
    expect(planUndo(settled())).toBeUndefined();
  });

  it("the file holds something else: undo names it as changed since and needs --force", () => {
    fs.writeFileSync(abs("a.txt"), "a0");
    change(writer(), "run-1", "a.txt", "a1", "rename");
    fs.writeFileSync(abs("a.txt"), "a person's edit");
    const plan = planUndo(settled())!;
    expect(changedSince(plan, project)).toEqual([abs("a.txt")]);
    expect(sessionChanges(settled(), project)[0]).toMatchObject({ changedSince: true, before: "a0" });
  });

  it("a later change of the same file tells exactly: an interrupted intent the model retried is no change", () => {
    fs.writeFileSync(abs("a.txt"), "a0");
    change(writer(), "run-1", "a.txt", "a1", "intent");
    // The session resumes (a new writer) and the retried write lands.
    change(writer(), "run-2", "a.txt", "a1");
    const plan = planUndo(settled())!;
    expect(plan.runId).toBe("run-2");
    applyUndo(state, "s", plan, project);
    expect(read("a.txt")).toBe("a0");
    expect(planUndo(settled())).toBeUndefined();
  });

  it("a later change of the same file tells exactly: an interrupted change that landed is undone in its turn", () => {
    fs.writeFileSync(abs("a.txt"), "a0");
    const w = writer();
    change(w, "run-1", "a.txt", "a1", "rename");
    // The completion could not be written, and the run went on: a later run changes it again.
    change(w, "run-2", "a.txt", "a2");
    applyUndo(state, "s", planUndo(settled())!, project);
    expect(read("a.txt")).toBe("a1");
    const first = planUndo(settled())!;
    expect(first.runId).toBe("run-1");
    applyUndo(state, "s", first, project);
    expect(read("a.txt")).toBe("a0");
  });

  it("a secret's interrupted change cannot be told: undo names it as a secret it cannot restore", () => {
    fs.writeFileSync(abs(".env"), "TOKEN=old");
    change(writer(), "run-1", ".env", "TOKEN=new", "rename", { withheld: true });
    expect(withheld(planUndo(settled())!)).toEqual([abs(".env")]);
  });
});

describe("the next start settles the change a crash interrupted", () => {
  it("landed: the entry is completed on disk (after = intent, its directory recorded)", () => {
    fs.writeFileSync(abs("a.txt"), "a0");
    change(writer(), "run-1", "a.txt", "a1", "rename");
    writer();
    const [e] = stored();
    expect(e!.after).toBe(sha256(Buffer.from("a1")));
    expect(e!.parent_id).toMatch(/^\d+:\d+$/);
  });

  it("not landed: the entry goes, so a later edit by another hand is never taken for it", () => {
    fs.writeFileSync(abs("a.txt"), "a0");
    change(writer(), "run-1", "a.txt", "a1", "intent");
    writer();
    expect(stored()).toEqual([]);
    // Without the start's settling, this edit (bash, the person) would read as Scoot's change.
    fs.writeFileSync(abs("a.txt"), "edited by bash");
    expect(planUndo(settled())).toBeUndefined();
  });

  it("neither content: left for undo to judge when it runs", () => {
    fs.writeFileSync(abs("a.txt"), "a0");
    change(writer(), "run-1", "a.txt", "a1", "rename");
    fs.writeFileSync(abs("a.txt"), "other");
    writer();
    expect(stored()[0]!.after).toBeUndefined();
  });

  it("an entry written before intents existed is left as it was", () => {
    fs.writeFileSync(abs("a.txt"), "a0");
    const w = writer();
    const kept = w.before({ runId: "run-1", goal: "g", path: abs("a.txt"), content: Buffer.from("a0") });
    if (!kept.ok) throw new Error(kept.error);
    fs.writeFileSync(abs("a.txt"), "a1");
    writer();
    expect(stored()).toHaveLength(1);
    expect(stored()[0]!.after).toBeUndefined();
    expect(planUndo(settled())).toBeUndefined();
  });
});
