/** openHomeAudit (src/store/guarded-stores.ts): the home's audit log, its key now or at the first write. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { openHomeAudit } from "../../src/store/guarded-stores.js";

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-home-audit-"));
  fs.mkdirSync(path.join(home, "logs"), { mode: 0o700 });
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

function setup(keyFile?: string) {
  const config = defaultConfig();
  if (keyFile !== undefined) config.audit.hmac_key_file = keyFile;
  return { config, paths: { audit: path.join(home, "logs", "audit.jsonl") } };
}

describe("openHomeAudit", () => {
  it("opens and writes the home's log", () => {
    const { config, paths } = setup();
    const opened = openHomeAudit(config, paths);
    if (!opened.ok) throw new Error(opened.error);
    expect(opened.value.emit("s1", "run", "hello").ok).toBe(true);
    opened.value.close();
    expect(fs.readFileSync(paths.audit, "utf8")).toContain("hello");
  });

  it("a missing key refuses now, or fails the first write when loaded then", () => {
    const { config, paths } = setup(path.join(home, "no-such-key"));
    expect(openHomeAudit(config, paths).ok).toBe(false);
    const lazy = openHomeAudit(config, paths, "at first write");
    expect(lazy.emit("s1", "run", "x").ok).toBe(false);
    lazy.close();
  });

  it("is guarded: a symlink planted at the log fails the write, in both ways of loading the key", () => {
    const { config, paths } = setup();
    const elsewhere = path.join(home, "elsewhere.jsonl");
    fs.writeFileSync(elsewhere, "");
    fs.symlinkSync(elsewhere, paths.audit);
    const opened = openHomeAudit(config, paths);
    if (!opened.ok) throw new Error(opened.error);
    for (const log of [opened.value, openHomeAudit(config, paths, "at first write")]) {
      const r = log.emit("s1", "run", "x");
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/^cannot write the audit log/);
      log.close();
    }
    expect(fs.readFileSync(elsewhere, "utf8")).toBe("");
  });
});
