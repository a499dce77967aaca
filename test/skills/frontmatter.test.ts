import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_SKILL_MD_BYTES, parseFrontMatter, readSkillFile } from "../../src/skills/frontmatter.js";
import { tempDir } from "./helpers.js";

const F = "/skills/demo/SKILL.md";

describe("front matter: valid skills", () => {
  it("reads name, description and the optional review metadata", () => {
    const r = parseFrontMatter(
      "---\nname: demo.skill_1-a\ndescription: Does a thing.\ncapabilities: [read, summarize]\n" +
        "allowed_tools:\n  - grep\n  - file_read\nscope: repo\n---\n# Demo\nBody text\n",
      F,
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.meta).toEqual({
      name: "demo.skill_1-a",
      description: "Does a thing.",
      capabilities: ["read", "summarize"],
      allowed_tools: ["grep", "file_read"],
      scope: "repo",
    });
    expect(r.body).toBe("# Demo\nBody text\n");
    expect(r.warnings).toEqual([]);
  });

  it("accepts a 64-character name, CRLF line ends and a BOM", () => {
    const name = "a".repeat(64);
    const r = parseFrontMatter(`\uFEFF---\r\nname: ${name}\r\ndescription: x\r\n---\r\nbody`, F);
    expect(r.ok && r.meta.name).toBe(name);
  });

  it("warns about an unknown key but still loads the skill, naming file and line", () => {
    const r = parseFrontMatter("---\nname: demo\ndescription: d\nversion: 3\n---\n", F);
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([{ file: F, line: 4, message: "unknown key `version` (ignored)" }]);
  });
});

describe("front matter: each rule refuses a bad skill", () => {
  it.each([
    ["missing front matter", "# Just markdown\n", "missing front matter", 1],
    ["front matter not closed", "---\nname: demo\ndescription: d\n", "not closed", 1],
    ["empty front matter", "---\n---\nbody\n", "front matter is empty", undefined],
    ["front matter is a list", "---\n- a\n- b\n---\n", "must be a mapping", undefined],
    ["missing name", "---\ndescription: d\n---\n", "`name` is required", undefined],
    ["bad name characters", "---\nname: my skill!\ndescription: d\n---\n", "must be 1-64 characters", 2],
    [
      "65-character name",
      `---\nname: ${"a".repeat(65)}\ndescription: d\n---\n`,
      "must be 1-64 characters",
      2,
    ],
    ["name that is a path component", "---\nname: '..'\ndescription: d\n---\n", 'may not be "." or ".."', 2],
    ["numeric name", "---\nname: 2048\ndescription: d\n---\n", "`name` must be a string", 2],
    ["missing description", "---\nname: demo\n---\n", "`description` is required", undefined],
    ["empty description", "---\nname: demo\ndescription: '  '\n---\n", "`description` must not be empty", 3],
    [
      "description not a string",
      "---\nname: demo\ndescription: [a]\n---\n",
      "`description` must be a string",
      3,
    ],
    [
      "capabilities not a list",
      "---\nname: demo\ndescription: d\ncapabilities: read\n---\n",
      "`capabilities` must be a list of strings",
      4,
    ],
    [
      "allowed_tools list of non-strings",
      "---\nname: demo\ndescription: d\nallowed_tools: [grep, 3, {a: b}]\n---\n",
      "`allowed_tools` must be a list of strings (item 2 is not a string)",
      4,
    ],
    [
      "scope not a string",
      "---\nname: demo\ndescription: d\nscope: [a]\n---\n",
      "`scope` must be a string",
      4,
    ],
    [
      "scoot_version present",
      "---\nname: demo\ndescription: d\nscoot_version: '>=1.0'\n---\n",
      "skills are not version-gated",
      4,
    ],
    [
      "requires_scoot present",
      "---\nname: demo\ndescription: d\nrequires_scoot: 1\n---\n",
      "skills are not version-gated",
      4,
    ],
    ["malformed YAML", "---\nname: demo\ndescription: [unclosed\n---\n", "front matter YAML", undefined],
    ["duplicate key", "---\nname: a\nname: b\ndescription: d\n---\n", "Map keys must be unique", 3],
    ["custom tag", "---\nname: !js/function demo\ndescription: d\n---\n", "Unresolved tag", 2],
    ["known non-core tag", "---\nname: demo\ndescription: !!binary aGk=\n---\n", "front matter YAML", 3],
  ])("%s", (_label, text, message, line) => {
    const r = parseFrontMatter(text, F);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const hit = r.problems.find((p) => p.message.includes(message));
    expect(hit, JSON.stringify(r.problems)).toBeDefined();
    expect(hit!.file).toBe(F);
    if (line !== undefined) expect(hit!.line).toBe(line);
  });

  it("reports every problem at once, not just the first", () => {
    const r = parseFrontMatter("---\nname: 'bad name'\ndescription: ''\nscoot_version: 1\n---\n", F);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.map((p) => p.line)).toEqual([2, 3, 4]);
  });

  it("stops an alias bomb with the alias budget instead of expanding it", () => {
    const bomb =
      "---\nname: demo\ndescription: d\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\n";
    const r = parseFrontMatter(bomb, F);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]!.message).toMatch(/alias/i);
  });
});

describe("readSkillFile", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it("refuses a SKILL.md over the size limit, naming the file", () => {
    const d = tempDir();
    dirs.push(d);
    const file = path.join(d, "SKILL.md");
    fs.writeFileSync(file, `---\nname: big\ndescription: d\n---\n${"x".repeat(MAX_SKILL_MD_BYTES)}`);
    const r = readSkillFile(file);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]).toMatchObject({ file, message: expect.stringContaining("limit") });
  });

  it("refuses a named pipe called SKILL.md without blocking on it", () => {
    const d = tempDir();
    dirs.push(d);
    const file = path.join(d, "SKILL.md");
    execFileSync("mkfifo", [file]);
    const r = readSkillFile(file);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]!.message).toContain("not a regular file");
  });

  it("reports a missing SKILL.md", () => {
    const d = tempDir();
    dirs.push(d);
    const r = readSkillFile(path.join(d, "SKILL.md"));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]!.message).toBe("no SKILL.md");
  });
});
