/**
 * The protected identities are collected just before a run's first call that can touch the
 * filesystem, not at start (src/policy/identity.ts `lazyIdentities`, primed in
 * src/agent/execute.ts): a run that only answers stats none of the files a long history leaves
 * under `state/`, and a run that calls tools still refuses a transcript by its identity, one
 * renamed by a command after the collection included (test/e2e/sandbox-edges.test.ts drives
 * that attack through the real CLI).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { identityKey, isProtectedIdentity } from "../../src/policy/identity.js";
import { buildGateSettings } from "../../src/policy/settings.js";

const TRANSCRIPTS = 40;
let base: string;
let home: string;
let project: string;

beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-identity-lazy-"));
  home = path.join(base, "home");
  project = path.join(base, "project");
  fs.mkdirSync(path.join(home, "state", "sessions"), { recursive: true });
  fs.mkdirSync(project);
  for (let i = 0; i < TRANSCRIPTS; i++)
    fs.writeFileSync(path.join(home, "state", "sessions", `cli-${i}.jsonl`), `{"n":${i}}\n`);
});
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(base, { recursive: true, force: true });
});

/** The gate's settings for a run in `project` with the home `home`. */
function settingsFor(mode: "guarded" | "unrestricted") {
  return buildGateSettings(defaultConfig(), project, { mode, scootHome: home, env: {} });
}

/** Stats of paths under the home's state/, counted from here on. */
function countStateStats(): () => number {
  const state = path.join(home, "state");
  const stat = vi.spyOn(fs, "statSync");
  return () => stat.mock.calls.filter(([p]) => String(p).startsWith(state)).length;
}

describe("protected identities, collected on first use", () => {
  it("building the gate's settings stats nothing under state/", () => {
    const stats = countStateStats();
    settingsFor("guarded");
    expect(stats()).toBe(0);
  });

  it("the first question collects them once: a hard link to a transcript is refused, an ordinary file is not", () => {
    const settings = settingsFor("guarded");
    const linked = path.join(project, "notes.txt");
    fs.linkSync(path.join(home, "state", "sessions", "cli-7.jsonl"), linked);
    const plain = path.join(project, "plain.txt");
    fs.writeFileSync(plain, "x\n");
    const stats = countStateStats();
    expect(isProtectedIdentity(settings, fs.statSync(linked))).toBe(true);
    const afterFirst = stats();
    expect(afterFirst).toBeGreaterThanOrEqual(TRANSCRIPTS);
    expect(isProtectedIdentity(settings, fs.statSync(plain))).toBe(false);
    expect(stats()).toBe(afterFirst);
  });

  it("a transcript made after the settings were built, before the first question, counts", () => {
    const settings = settingsFor("guarded");
    const late = path.join(home, "state", "sessions", "cli-late.jsonl");
    fs.writeFileSync(late, "{}\n");
    expect(settings.protectedIdentities.has(identityKey(fs.statSync(late)))).toBe(true);
  });

  it("primed, a transcript renamed away afterwards is still known under its new name", () => {
    const settings = settingsFor("guarded");
    settings.protectedIdentities.prime?.();
    const moved = path.join(project, "moved.txt");
    fs.renameSync(path.join(home, "state", "sessions", "cli-3.jsonl"), moved);
    expect(isProtectedIdentity(settings, fs.statSync(moved))).toBe(true);
  });

  it("unrestricted asks nothing and collects nothing", () => {
    const settings = settingsFor("unrestricted");
    const transcript = fs.statSync(path.join(home, "state", "sessions", "cli-1.jsonl"));
    const stats = countStateStats();
    expect(isProtectedIdentity(settings, transcript)).toBe(false);
    expect(stats()).toBe(0);
  });
});
