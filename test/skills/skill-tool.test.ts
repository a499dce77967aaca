import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { discoverSkills } from "../../src/skills/discover.js";
import { makeSkillRegistry, type SkillRegistry } from "../../src/skills/registry.js";
import { CLIP } from "../../src/tools/clip.js";
import { skillTool } from "../../src/tools/skill.js";
import type { ToolContext } from "../../src/tools/types.js";
import { runTool } from "../helpers/tool-context.js";
import { config, skillMd, tempDir, writeTree } from "./helpers.js";

let base: string;
let root: string;
let registry: SkillRegistry;

function ctx(skills: unknown): ToolContext {
  return {
    cwd: base,
    config: defaultConfig(),
    mode: "readonly",
    signal: new AbortController().signal,
    timeoutMs: 30_000,
    gate: () => ({ allow: true }),
    call: async () => "no derived calls in this test",
    childEnv: {},
    services: { skills },
  };
}

async function call(raw: string, c: ToolContext = ctx(registry)): Promise<string> {
  const parsed = skillTool.parse(raw);
  if (!parsed.ok) return `parse error: ${parsed.error}`;
  return runTool(skillTool, parsed.value, c);
}

beforeEach(() => {
  base = tempDir();
  root = path.join(base, "home", "skills");
  writeTree(root, {
    "demo/SKILL.md": skillMd("demo", "Demo skill", "", "# Demo\nRead references/guide.md.\n"),
    "demo/references/guide.md": "The guide.\n",
    "demo/big.txt": "B".repeat(100 * 1024),
    "demo/blob.bin": Buffer.from([1, 2, 0, 3]),
    "other/SKILL.md": skillMd("other"),
  });
  writeTree(base, { "secret.txt": "TOP SECRET\n" });
  fs.symlinkSync(path.join(base, "secret.txt"), path.join(root, "demo", "escape.md"));
  fs.symlinkSync(path.join(base), path.join(root, "demo", "escape-dir"));
  fs.symlinkSync("references/guide.md", path.join(root, "demo", "alias.md"));
  const d = discoverSkills({
    config: config(),
    cwd: base,
    homeDir: path.join(base, "home"),
    scootHome: path.join(base, "home"),
  });
  registry = makeSkillRegistry(d);
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

describe("skill tool: declaration", () => {
  it("is a native capability with the skill clip size", () => {
    const p = skillTool.parse('{"name":"demo"}');
    expect(p).toEqual({ ok: true, value: { name: "demo", path: "SKILL.md" } });
    if (p.ok) expect(skillTool.effects(p.value)).toEqual({ capability: "native" });
    expect(skillTool.clipBytes).toBe(CLIP.skill);
    expect(skillTool.name).toBe("skill");
  });

  it.each([
    ["not JSON", "demo", "must be a JSON object"],
    ["array", '["demo"]', "must be a JSON object"],
    ["missing name", '{"path":"SKILL.md"}', 'skill: "name" is required'],
    ["empty name", '{"name":" "}', 'skill: "name" must be a non-empty string'],
    ["path not a string", '{"name":"demo","path":3}', 'skill: "path" must be a string, got the number 3'],
    ["unknown key", '{"name":"demo","mode":"x"}', 'skill: unknown field "mode"; allowed: name, path'],
    ["absolute path", '{"name":"demo","path":"/etc/passwd"}', "must be relative"],
    ["windows absolute path", '{"name":"demo","path":"C:\\\\x"}', "must be relative"],
    ["dot-dot segment", '{"name":"demo","path":"../other/SKILL.md"}', "`..`"],
    ["inner dot-dot", '{"name":"demo","path":"references/../../x"}', "`..`"],
    ["backslash dot-dot", '{"name":"demo","path":"references\\\\..\\\\x"}', "`..`"],
  ])("parse refuses %s", (_label, raw, message) => {
    const r = skillTool.parse(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });
});

describe("skill tool: reads", () => {
  it("reads SKILL.md by default", async () => {
    const out = await call('{"name":"demo"}');
    expect(out).toContain("[skill demo: SKILL.md,");
    expect(out).toContain("# Demo\nRead references/guide.md.");
    expect(out).toContain("name: demo");
  });

  it("reads a nested reference file", async () => {
    expect(await call('{"name":"demo","path":"references/guide.md"}')).toContain("The guide.");
  });

  it("follows a symlink that stays inside the skill", async () => {
    expect(await call('{"name":"demo","path":"alias.md"}')).toContain("The guide.");
  });

  it("clips a large file to the skill clip size", async () => {
    const out = await call('{"name":"demo","path":"big.txt"}');
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(CLIP.skill);
    expect(out).toContain("bytes clipped");
  });

  it("reports a binary file by size instead of dumping it", async () => {
    expect(await call('{"name":"demo","path":"blob.bin"}')).toContain("binary file, 4 bytes");
  });
});

describe("skill tool: confinement", () => {
  it.each([
    ["a symlink to a file outside", "escape.md"],
    ["a path through a symlinked directory outside", "escape-dir/secret.txt"],
  ])("refuses %s", async (_label, p) => {
    const out = await call(JSON.stringify({ name: "demo", path: p }));
    expect(out).toMatch(/^skill error: .*resolves outside skill "demo"; refused/);
    expect(out).not.toContain("TOP SECRET");
  });

  it("refuses `..` and absolute paths before touching the filesystem", async () => {
    expect(await call('{"name":"demo","path":"../other/SKILL.md"}')).toMatch(/^parse error: .*`\.\.`/);
    expect(await call(`{"name":"demo","path":${JSON.stringify(path.join(base, "secret.txt"))}}`)).toMatch(
      /^parse error: .*must be relative/,
    );
  });

  it("a directory is a clear error listing the skill's files", async () => {
    const out = await call('{"name":"demo","path":"references"}');
    expect(out).toMatch(/^skill error: "references" is a directory/);
    expect(out).toContain("SKILL.md");
    expect(out).toContain("references/guide.md");
  });

  it("a missing file is a clear error listing the skill's files", async () => {
    const out = await call('{"name":"demo","path":"nope.md"}');
    expect(out).toMatch(
      /^skill error: no file "nope.md" in skill "demo"; its files: .*references\/guide\.md/,
    );
  });
});

describe("skill tool: names", () => {
  it("an unknown name is a recoverable observation listing the available skills", async () => {
    const out = await call('{"name":"nope"}');
    expect(out).toBe('skill error: unknown skill "nope"; available skills: demo, other');
  });

  it("says so when no skills are loaded", async () => {
    expect(await call('{"name":"demo"}', ctx(undefined))).toBe(
      'skill error: unknown skill "demo"; no skills are loaded',
    );
    expect(await call('{"name":"demo"}', ctx(makeSkillRegistry([])))).toContain("no skills are loaded");
    expect(await call('{"name":"demo"}', ctx({}))).toContain("no skills are loaded");
  });
});
