/** The session settings sidecar (docs/editors.md "Editors (ACP)"): written whole, read field by field, never trusted. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  MAX_FAILED_CALL_PRINTS,
  MAX_REMEMBERED_APPROVALS,
  MAX_REMEMBERED_PROJECTS,
  readSessionSettings,
  rememberedIn,
  settingsPath,
  writeSessionSettings,
} from "../../src/store/session-settings.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-settings-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("session settings", () => {
  it("round-trips mode, both kinds of always answers and the project root, 0600", () => {
    const r = writeSessionSettings(dir, "s1", {
      mode: "readonly",
      approvals: ["file_write", "bash:npm"],
      refusals: ["http_request"],
      project_root: "/p",
    });
    expect(r.ok).toBe(true);
    expect(readSessionSettings(dir, "s1")).toEqual({
      mode: "readonly",
      approvals: ["file_write", "bash:npm"],
      refusals: ["http_request"],
      project_root: "/p",
    });
    expect(fs.statSync(settingsPath(dir, "s1")).mode & 0o777).toBe(0o600);
  });

  it.each([
    ["not JSON", "{mode: readonly"],
    ["an array", '["readonly"]'],
    ["null", "null"],
    ["too large", `{"mode":"readonly","pad":"${"x".repeat(70 * 1024)}"}`],
  ])("a sidecar that is %s is ignored", (_what, body) => {
    fs.writeFileSync(settingsPath(dir, "s2"), body);
    expect(readSessionSettings(dir, "s2")).toBeUndefined();
  });

  it("fields of the wrong type are dropped one by one", () => {
    fs.writeFileSync(
      settingsPath(dir, "s3"),
      JSON.stringify({
        mode: 7,
        approvals: ["bash", 3, null, "file_edit"],
        refusals: "all",
        project_root: {},
      }),
    );
    expect(readSessionSettings(dir, "s3")).toEqual({ approvals: ["bash", "file_edit"] });
  });

  it("the model and the failed calls' fingerprints round-trip; anything else in them is dropped", () => {
    writeSessionSettings(dir, "s7", { model: "beta", failed_calls: ["0123456789abcdef0123"] });
    expect(readSessionSettings(dir, "s7")).toEqual({ model: "beta", failed_calls: ["0123456789abcdef0123"] });
    fs.writeFileSync(
      settingsPath(dir, "s8"),
      JSON.stringify({
        model: "",
        failed_calls: ["abc", "../../etc", 7, "0123456789abcdef0123", "ABCDEF0123456789"],
      }),
    );
    expect(readSessionSettings(dir, "s8")).toEqual({ failed_calls: ["0123456789abcdef0123"] });
    const many = Array.from({ length: MAX_FAILED_CALL_PRINTS + 3 }, (_, i) =>
      i.toString(16).padStart(20, "0"),
    );
    writeSessionSettings(dir, "s9", { failed_calls: many });
    const back = readSessionSettings(dir, "s9")!.failed_calls!;
    expect(back).toHaveLength(MAX_FAILED_CALL_PRINTS);
    expect(back.at(-1)).toBe(many.at(-1));
  });

  it("a symlink planted as the sidecar is not followed", () => {
    const target = path.join(dir, "elsewhere.json");
    fs.writeFileSync(target, JSON.stringify({ mode: "unrestricted" }));
    fs.symlinkSync(target, settingsPath(dir, "s4"));
    expect(readSessionSettings(dir, "s4")).toBeUndefined();
  });

  it("keeps at most MAX_REMEMBERED_APPROVALS answers, the newest", () => {
    const many = Array.from({ length: MAX_REMEMBERED_APPROVALS + 5 }, (_, i) => `k${i}`);
    writeSessionSettings(dir, "s5", { approvals: many });
    const back = readSessionSettings(dir, "s5")!.approvals!;
    expect(back).toHaveLength(MAX_REMEMBERED_APPROVALS);
    expect(back.at(-1)).toBe(`k${MAX_REMEMBERED_APPROVALS + 4}`);
  });

  it("answers are kept by project: each project gets its own, the others are kept as they are", () => {
    writeSessionSettings(dir, "p1", {
      remembered: [
        { project_root: "/a", approvals: ["file_write:notes.txt"], refusals: [] },
        { project_root: "/b", approvals: [], refusals: ["bash:rm build"] },
        { project_root: "/empty", approvals: [], refusals: [] },
      ],
      project_root: "/b",
    });
    const back = readSessionSettings(dir, "p1");
    // A project with no answers is not stored.
    expect(back?.remembered?.map((e) => e.project_root)).toEqual(["/a", "/b"]);
    expect(rememberedIn(back, "/a")).toEqual({
      here: { project_root: "/a", approvals: ["file_write:notes.txt"], refusals: [] },
      others: [{ project_root: "/b", approvals: [], refusals: ["bash:rm build"] }],
    });
    expect(rememberedIn(back, "/c").here).toEqual({ project_root: "/c", approvals: [], refusals: [] });
    expect(rememberedIn(back, "/c").others).toHaveLength(2);
    expect(rememberedIn(undefined, "/a").here.approvals).toEqual([]);
  });

  it("an older sidecar's answers hold in the project it recorded (resolved), none recorded: dropped", () => {
    const real = fs.realpathSync(dir);
    const link = path.join(dir, "link");
    fs.symlinkSync(real, link);
    const legacy = { approvals: ["file_write:notes.txt"], refusals: ["bash:git push"] };
    expect(rememberedIn({ ...legacy, project_root: link }, real).here).toEqual({
      project_root: real,
      ...legacy,
    });
    expect(rememberedIn({ ...legacy, project_root: link }, "/elsewhere").here.approvals).toEqual([]);
    expect(rememberedIn({ ...legacy, project_root: link }, "/elsewhere").others).toEqual([
      { project_root: real, ...legacy },
    ]);
    expect(rememberedIn(legacy, real).here.approvals).toEqual([]);
    expect(rememberedIn(legacy, real).others).toEqual([]);
    // Once answers are stored by project, the flat lists are not read.
    expect(rememberedIn({ ...legacy, project_root: real, remembered: [] }, real).here.approvals).toEqual([]);
  });

  it("entries of the wrong shape are dropped; at most MAX_REMEMBERED_PROJECTS projects, the newest", () => {
    fs.writeFileSync(
      settingsPath(dir, "p2"),
      JSON.stringify({
        remembered: [
          null,
          "x",
          { project_root: "relative", approvals: ["a"] },
          { project_root: "/ok", approvals: ["a", 7], refusals: "all" },
        ],
      }),
    );
    expect(readSessionSettings(dir, "p2")?.remembered).toEqual([
      { project_root: "/ok", approvals: ["a"], refusals: [] },
    ]);
    const many = Array.from({ length: MAX_REMEMBERED_PROJECTS + 2 }, (_, i) => ({
      project_root: `/p${i}`,
      approvals: ["k"],
      refusals: [],
    }));
    writeSessionSettings(dir, "p3", { remembered: many });
    const kept = readSessionSettings(dir, "p3")!.remembered!;
    expect(kept).toHaveLength(MAX_REMEMBERED_PROJECTS);
    expect(kept.at(-1)!.project_root).toBe(`/p${MAX_REMEMBERED_PROJECTS + 1}`);
  });

  it("answers that would make the sidecar too large to read back lose other projects first, then the oldest", () => {
    const long = (p: string, i: number) => `bash:${p} ${"x".repeat(200)} ${i}`;
    const entry = (p: string) => ({
      project_root: `/${p}`,
      approvals: Array.from({ length: MAX_REMEMBERED_APPROVALS }, (_, i) => long(p, i)),
      refusals: [],
    });
    expect(
      writeSessionSettings(dir, "p4", { mode: "guarded", remembered: [entry("old"), entry("new")] }).ok,
    ).toBe(true);
    const back = readSessionSettings(dir, "p4");
    expect(back?.mode).toBe("guarded");
    const kept = back!.remembered!;
    expect(kept.map((e) => e.project_root)).toEqual(["/new"]);
    expect(kept[0]!.approvals.length).toBeGreaterThan(100);
    expect(kept[0]!.approvals.at(-1)).toBe(long("new", MAX_REMEMBERED_APPROVALS - 1));
  });

  it("a write that cannot happen says where, and leaves the old sidecar whole", () => {
    writeSessionSettings(dir, "s6", { mode: "guarded" });
    const r = writeSessionSettings(path.join(dir, "missing-dir"), "s6", { mode: "readonly" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/cannot record the session's settings in .*missing-dir/);
    expect(readSessionSettings(dir, "s6")?.mode).toBe("guarded");
  });
});
