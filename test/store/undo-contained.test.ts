/**
 * The containment table of undo (docs/sessions.md "Undo"): a recorded entry is restored only
 * below the recorded root, through directories opened one at a time; every other shape is
 * refused, named, and leaves the outside untouched.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Before, openCheckpointWriter, readCheckpoints } from "../../src/store/checkpoints.js";
import { Refused, readContained, writeContained } from "../../src/store/contained.js";
import { applyUndo, planUndo, type UndoPlan, uncontained } from "../../src/store/undo.js";

let base: string;
let root: string;
let outside: string;
let state: string;
beforeEach(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-undo-table-")));
  root = path.join(base, "project");
  outside = path.join(base, "outside");
  state = path.join(base, "state");
  for (const d of [root, outside, state]) fs.mkdirSync(d);
  fs.writeFileSync(path.join(outside, "f.txt"), "outside\n");
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

const content = (text: string): Before => ({
  kind: "content",
  b64: Buffer.from(text).toString("base64"),
  sha256: "x",
  mode: 0o644,
});

function planFor(file: string, restore: Before): UndoPlan {
  return { runId: "r", goal: "g", files: [{ path: file, restore, left: null }], seqs: [] };
}

describe("undo containment", () => {
  const cases: { name: string; setup: () => string }[] = [
    {
      name: "symlinked parent",
      setup: () => {
        fs.symlinkSync(outside, path.join(root, "sub"));
        return path.join(root, "sub", "f.txt");
      },
    },
    {
      name: "symlinked final component",
      setup: () => {
        fs.symlinkSync(path.join(outside, "f.txt"), path.join(root, "f.txt"));
        return path.join(root, "f.txt");
      },
    },
    { name: "'..' in the recorded path", setup: () => `${root}/../outside/f.txt` },
    { name: "absolute recorded path outside the root", setup: () => path.join(outside, "f.txt") },
  ];
  for (const c of cases) {
    it(`refuses a ${c.name} for content and for absent, --force or not`, () => {
      const file = c.setup();
      for (const restore of [content("attacker\n"), { kind: "absent" } as Before]) {
        const plan = planFor(file, restore);
        expect(uncontained(plan, root).map((f) => f.path)).toEqual([file]);
        const out = applyUndo(state, "s", plan, root);
        expect(out.restored).toEqual([]);
        expect(out.removed).toEqual([]);
        expect(out.failed[0]?.error).toMatch(/refused/);
        expect(fs.readFileSync(path.join(outside, "f.txt"), "utf8")).toBe("outside\n");
      }
      expect(readContained(root, file)).toBeInstanceOf(Refused);
    });
  }

  it("a parent replaced by a symlink after it was opened: the walk checks each opened directory", () => {
    fs.mkdirSync(path.join(root, "a"));
    expect(writeContained(root, path.join(root, "a", "f.txt"), Buffer.from("ok\n"), 0o644)).toEqual({
      ok: true,
      value: undefined,
    });
    fs.rmSync(path.join(root, "a"), { recursive: true });
    fs.symlinkSync(outside, path.join(root, "a"));
    expect(writeContained(root, path.join(root, "a", "f.txt"), Buffer.from("x\n"), 0o644)).toBeInstanceOf(
      Refused,
    );
    expect(fs.readFileSync(path.join(outside, "f.txt"), "utf8")).toBe("outside\n");
  });

  it("a normal restore creates missing directories inside the root", () => {
    const file = path.join(root, "new", "deep", "f.txt");
    const out = applyUndo(state, "s", planFor(file, content("back\n")), root);
    expect(out.failed).toEqual([]);
    expect(fs.readFileSync(file, "utf8")).toBe("back\n");
  });

  it("a parent replaced by another directory of the same name is refused; a removed one is made again", () => {
    const sessions = path.join(base, "sessions");
    fs.mkdirSync(sessions);
    fs.writeFileSync(path.join(sessions, "s.jsonl"), "");
    const change = (file: string) => {
      const writer = openCheckpointWriter(state, "s", sessions, undefined, root);
      const entry = writer.before({ runId: "r1", goal: "g", path: file, content: Buffer.from("before\n") });
      if (!entry.ok) throw new Error(entry.error);
      fs.writeFileSync(file, "after\n");
      writer.after(entry.value, Buffer.from("after\n"));
    };
    const sub = path.join(root, "sub");
    fs.mkdirSync(sub);
    const file = path.join(sub, "f.txt");
    fs.writeFileSync(file, "before\n");
    change(file);
    // The directory swapped for another real one that holds what Scoot left: same path, other inode.
    fs.renameSync(sub, path.join(root, "sub-old"));
    fs.mkdirSync(sub);
    fs.writeFileSync(file, "after\n");
    const plan = planUndo(readCheckpoints(state, "s").entries)!;
    expect(plan.files[0]?.parentId).toMatch(/^\d+:\d+$/);
    expect(uncontained(plan, root)).toEqual([
      { path: file, why: expect.stringMatching(/no longer the directory Scoot changed the file in/) },
    ]);
    const out = applyUndo(state, "s", plan, root);
    expect(out.failed[0]?.error).toMatch(/refused/);
    expect(fs.readFileSync(file, "utf8")).toBe("after\n");
    // Removed altogether: undo makes the directory again and puts the file back.
    fs.rmSync(sub, { recursive: true });
    const again = applyUndo(state, "s", plan, root);
    expect(again.failed).toEqual([]);
    expect(fs.readFileSync(file, "utf8")).toBe("before\n");
  });
});
