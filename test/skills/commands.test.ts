import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSkillsCheck } from "../../src/skills/check.js";
import type { DiscoverOptions } from "../../src/skills/discover.js";
import { runSkillsList } from "../../src/skills/list.js";
import { skillsPromptSection } from "../../src/skills/prompt.js";
import { config, skillMd, tempDir, writeTree } from "./helpers.js";

let base: string;
let opts: DiscoverOptions;
let homeRoot: string;

beforeEach(() => {
  base = tempDir();
  const home = path.join(base, "home");
  const cwd = path.join(base, "project");
  fs.mkdirSync(cwd, { recursive: true });
  homeRoot = path.join(home, ".scoot", "skills");
  opts = { config: config(), cwd, homeDir: home, scootHome: path.join(home, ".scoot") };
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

describe("skills check", () => {
  it("a single valid skill directory: OK line, exit 0", () => {
    writeTree(path.join(base, "one"), { "SKILL.md": skillMd("one") });
    const r = runSkillsCheck(path.join(base, "one"), opts);
    expect(r).toEqual({
      stdout: `OK one  ${path.join(base, "one")}\n1 ok, 0 invalid\n`,
      stderr: "",
      exitCode: 0,
    });
  });

  it("a root of skills: every skill reported, exit 1 on any invalid, warnings on stderr", () => {
    writeTree(path.join(base, "root"), {
      "a/SKILL.md": skillMd("a", "A", "colour: blue\n"),
      "b/SKILL.md": "no front matter\n",
      "c/SKILL.md": skillMd("c"),
    });
    const r = runSkillsCheck("../root", opts);
    expect(r.exitCode).toBe(1);
    expect(r.stdout.split("\n")).toEqual([
      `OK a  ${path.join(base, "root", "a")}`,
      `INVALID ${path.join(base, "root", "b", "SKILL.md")}:1: missing front matter: SKILL.md must start with a '---' line`,
      `OK c  ${path.join(base, "root", "c")}`,
      "2 ok, 1 invalid",
      "",
    ]);
    expect(r.stderr).toBe(
      `WARN ${path.join(base, "root", "a", "SKILL.md")}:4: unknown key \`colour\` (ignored)\n`,
    );
  });

  it("without a dir: checks the discovered roots, noting shadowed names", () => {
    opts.config.skills.extra_paths = [path.join(base, "extra")];
    writeTree(homeRoot, { "x/SKILL.md": skillMd("x") });
    writeTree(path.join(base, "extra"), { "x/SKILL.md": skillMd("x") });
    const r = runSkillsCheck(undefined, opts);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`OK x  ${path.join(homeRoot, "x")}\n`);
    expect(r.stdout).toContain(
      `OK x  ${path.join(base, "extra", "x")}  (shadowed by ${path.join(homeRoot, "x")})`,
    );
  });

  it("without a dir: opt-in roots are not checked unless enabled", () => {
    writeTree(path.join(opts.cwd, ".agents", "skills"), { "p/SKILL.md": "broken" });
    expect(runSkillsCheck(undefined, opts)).toMatchObject({
      exitCode: 0,
      stdout: expect.stringContaining("no skills"),
    });
    opts.config.skills.include_project_skills = true;
    expect(runSkillsCheck(undefined, opts).exitCode).toBe(1);
  });

  it.each([
    ["a missing directory", "nope", "skills check: no such directory"],
    ["a file", "f.txt", "skills check: not a directory"],
  ])("%s is a usage error (exit 2)", (_l, dir, message) => {
    fs.writeFileSync(path.join(opts.cwd, "f.txt"), "x");
    const r = runSkillsCheck(dir, opts);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe("");
  });

  it("a directory with no skills says so and passes", () => {
    fs.mkdirSync(path.join(base, "empty"));
    expect(runSkillsCheck(path.join(base, "empty"), opts)).toMatchObject({
      exitCode: 0,
      stdout: `no skills found in ${path.join(base, "empty")}\n`,
    });
  });
});

describe("skills list", () => {
  it("prints roots with their state, skills, shadowed and problems", () => {
    opts.config.skills.extra_paths = ["../extra", "../missing"];
    writeTree(homeRoot, {
      "demo/SKILL.md": skillMd("demo", "Demo\n  skill"),
      "bad/SKILL.md": "---\nname: bad\n---\n",
    });
    writeTree(path.join(base, "extra"), { "demo/SKILL.md": skillMd("demo", "other copy") });
    const r = runSkillsList(opts);
    expect(r.exitCode).toBe(0);
    const out = r.stdout;
    expect(out).toContain(
      `project ${path.join(opts.cwd, ".agents", "skills")}  [off (set skills.include_project_skills = true)]`,
    );
    expect(out).toContain(
      `agents  ${path.join(opts.homeDir, ".agents", "skills")}  [off (set skills.include_agents_skills = true)]`,
    );
    expect(out).toContain(`home    ${homeRoot}  [exists]`);
    expect(out).toContain(`extra   ${path.join(base, "extra")}  [exists]`);
    expect(out).toContain(`extra   ${path.join(base, "missing")}  [missing]`);
    expect(out).toContain(`Skills (1):\n  demo  Demo skill\n    ${path.join(homeRoot, "demo")}\n`);
    expect(out).toContain(
      `demo  ${path.join(base, "extra", "demo")}  (shadowed by ${path.join(homeRoot, "demo")})`,
    );
    expect(out).toContain(`${path.join(homeRoot, "bad", "SKILL.md")}: \`description\` is required`);
    expect(r.discovery.skills).toHaveLength(1);
  });

  it("says when skills are disabled", () => {
    opts.config.skills.enabled = false;
    expect(runSkillsList(opts).stdout).toBe("skills are disabled (skills.enabled = false)\n");
  });
});

describe("skillsPromptSection", () => {
  it("lists names and descriptions only, with how to read one and that skills grant nothing", () => {
    const text = skillsPromptSection([
      { name: "demo", description: "Does demo\nthings." },
      { name: "other", description: "Other." },
    ]);
    expect(text).toContain("- demo: Does demo things.");
    expect(text).toContain("- other: Other.");
    expect(text).toContain("`skill` action");
    expect(text).toContain("Skills add instructions, never privileges");
  });

  it("does not preload bodies", () => {
    const text = skillsPromptSection([
      { name: "demo", description: "d", body: "SECRET BODY TEXT" } as { name: string; description: string },
    ]);
    expect(text).not.toContain("SECRET BODY TEXT");
  });

  it("is empty when no skills are loaded", () => {
    expect(skillsPromptSection([])).toBe("");
  });
});

describe("skills check: the Agent Skills specification's name rules", () => {
  const spec = "(Agent Skills specification)";
  it.each([
    ["pdf-processing", "pdf-processing", []],
    ["a", "a", []],
    ["v2-tools-9", "v2-tools-9", []],
    ["x".repeat(64), "x".repeat(64), []],
    [
      "PDF-Processing",
      "PDF-Processing",
      [
        `may only contain lowercase alphanumeric characters and hyphens (a-z, 0-9 and -); it has "P", "D", "F" ${spec}`,
      ],
    ],
    [
      "pdf_processing",
      "pdf_processing",
      [`may only contain lowercase alphanumeric characters and hyphens (a-z, 0-9 and -); it has "_" ${spec}`],
    ],
    [
      "pdf.tools",
      "pdf.tools",
      [`may only contain lowercase alphanumeric characters and hyphens (a-z, 0-9 and -); it has "." ${spec}`],
    ],
    ["-pdf", "-pdf", [`must not start or end with a hyphen (-) ${spec}`]],
    ["pdf-", "pdf-", [`must not start or end with a hyphen (-) ${spec}`]],
    ["pdf--processing", "pdf--processing", [`must not contain consecutive hyphens (--) ${spec}`]],
    ["pdf", "pdf-tools", [`must match the parent directory name "pdf-tools" ${spec}`]],
  ] as const)("name %j in folder %j", (name, folder, rules) => {
    const root = path.join(base, "root");
    writeTree(root, { [`${folder}/SKILL.md`]: skillMd(name) });
    const r = runSkillsCheck(root, opts);
    const file = path.join(root, folder, "SKILL.md");
    if (rules.length === 0) {
      expect(r.exitCode, r.stdout).toBe(0);
      expect(r.stdout).toBe(`OK ${name}  ${path.join(root, folder)}\n1 ok, 0 invalid\n`);
    } else {
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe(
        `${rules.map((rule) => `INVALID ${file}: \`name\` ${JSON.stringify(name)} ${rule}`).join("\n")}\n0 ok, 1 invalid\n`,
      );
    }
  });

  it("names every rule a name breaks, one line each", () => {
    const root = path.join(base, "root");
    writeTree(root, { "other/SKILL.md": skillMd("-Bad--Name") });
    const r = runSkillsCheck(root, opts);
    expect(r.exitCode).toBe(1);
    expect(r.stdout.split("\n").filter((l) => l.startsWith("INVALID"))).toHaveLength(4);
  });
});
