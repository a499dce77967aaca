/** The session settings sidecar (docs/editors.md "Editors (ACP)"): written whole, read field by field, never trusted. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  MAX_FAILED_CALL_PRINTS,
  MAX_REMEMBERED_APPROVALS,
  readSessionSettings,
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

  it("a write that cannot happen says where, and leaves the old sidecar whole", () => {
    writeSessionSettings(dir, "s6", { mode: "guarded" });
    const r = writeSessionSettings(path.join(dir, "missing-dir"), "s6", { mode: "readonly" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/cannot record the session's settings in .*missing-dir/);
    expect(readSessionSettings(dir, "s6")?.mode).toBe("guarded");
  });
});
