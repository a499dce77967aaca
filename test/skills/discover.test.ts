import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DiscoverOptions, discoverSkills, expandPath, skillRoots } from "../../src/skills/discover.js";
import { config, skillMd, tempDir, writeTree } from "./helpers.js";

let base: string;
let opts: DiscoverOptions;
let cwd: string;
let home: string;
let scootHome: string;

beforeEach(() => {
  base = tempDir();
  cwd = path.join(base, "project");
  home = path.join(base, "home");
  scootHome = path.join(home, ".scoot");
  fs.mkdirSync(cwd, { recursive: true });
  fs.mkdirSync(scootHome, { recursive: true });
  opts = { config: config(), cwd, homeDir: home, scootHome };
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

const projectRoot = () => path.join(cwd, ".agents", "skills");
const agentsRoot = () => path.join(home, ".agents", "skills");
const homeRoot = () => path.join(scootHome, "skills");

describe("search roots", () => {
  it("lists project, agents, home then extra paths, with opt-in roots off by default", () => {
    opts.config.skills.extra_paths = ["rel/skills", "~/more", "/abs/skills", ""];
    writeTree(homeRoot(), { "a/SKILL.md": skillMd("a") });
    const roots = skillRoots(opts);
    expect(roots.map((r) => [r.source, r.path, r.enabled, r.exists])).toEqual([
      ["project", projectRoot(), false, false],
      ["agents", agentsRoot(), false, false],
      ["home", homeRoot(), true, true],
      ["extra", path.join(cwd, "rel/skills"), true, false],
      ["extra", path.join(home, "more"), true, false],
      ["extra", "/abs/skills", true, false],
    ]);
  });

  it.each([
    ["~", "/h"],
    ["~/x/y", "/h/x/y"],
    ["rel", "/c/rel"],
    ["/abs", "/abs"],
    ["~user/x", "/c/~user/x"],
  ])("expandPath(%s) = %s", (p, want) => {
    expect(expandPath(p, "/c", "/h")).toBe(want);
  });
});

describe("discovery", () => {
  it("loads valid skills with realpath dirs and reports invalid ones without loading them", () => {
    writeTree(homeRoot(), {
      "good/SKILL.md": skillMd("good", "Good skill", "capabilities: [read]\n"),
      "bad/SKILL.md": "---\nname: bad name\ndescription: d\n---\n",
      "notes/README.md": "not a skill",
      ".hidden/SKILL.md": skillMd("hidden"),
      "loose-file.md": "ignored",
    });
    const d = discoverSkills(opts);
    expect(d.skills.map((s) => s.name)).toEqual(["good"]);
    const good = d.skills[0]!;
    expect(good).toMatchObject({
      description: "Good skill",
      dir: path.join(homeRoot(), "good"),
      file: path.join(homeRoot(), "good", "SKILL.md"),
      source: "home",
      meta: { capabilities: ["read"] },
    });
    expect(d.problems).toEqual([
      {
        file: path.join(homeRoot(), "bad", "SKILL.md"),
        line: 2,
        message: expect.stringContaining("must be 1-64 characters"),
      },
    ]);
    expect(d.warnings).toEqual([
      { file: path.join(homeRoot(), "notes"), message: "no SKILL.md; not a skill" },
    ]);
  });

  it("ignores opt-in roots unless their switches are on", () => {
    writeTree(projectRoot(), { "p/SKILL.md": skillMd("p") });
    writeTree(agentsRoot(), { "g/SKILL.md": skillMd("g") });
    expect(discoverSkills(opts).skills).toEqual([]);

    opts.config.skills.include_project_skills = true;
    expect(discoverSkills(opts).skills.map((s) => s.name)).toEqual(["p"]);

    opts.config.skills.include_agents_skills = true;
    expect(discoverSkills(opts).skills.map((s) => [s.name, s.source])).toEqual([
      ["p", "project"],
      ["g", "agents"],
    ]);
  });

  it("first root wins a name clash; the later one is reported as shadowed", () => {
    opts.config.skills.include_project_skills = true;
    opts.config.skills.include_agents_skills = true;
    opts.config.skills.extra_paths = ["extra"];
    writeTree(projectRoot(), { "one/SKILL.md": skillMd("dup", "from project") });
    writeTree(agentsRoot(), { "two/SKILL.md": skillMd("dup", "from agents") });
    writeTree(homeRoot(), {
      "three/SKILL.md": skillMd("dup", "from home"),
      "solo/SKILL.md": skillMd("solo"),
    });
    writeTree(path.join(cwd, "extra"), { "four/SKILL.md": skillMd("solo", "from extra") });
    const d = discoverSkills(opts);
    expect(d.skills.map((s) => [s.name, s.description])).toEqual([
      ["dup", "from project"],
      ["solo", "does solo things"],
    ]);
    expect(d.shadowed).toEqual([
      { name: "dup", dir: path.join(agentsRoot(), "two"), by: path.join(projectRoot(), "one") },
      { name: "dup", dir: path.join(homeRoot(), "three"), by: path.join(projectRoot(), "one") },
      { name: "solo", dir: path.join(cwd, "extra", "four"), by: path.join(homeRoot(), "solo") },
    ]);
  });

  it("an invalid skill does not take a name from a later valid one", () => {
    opts.config.skills.extra_paths = ["extra"];
    writeTree(homeRoot(), { "x/SKILL.md": "---\nname: x\ndescription: ''\n---\n" });
    writeTree(path.join(cwd, "extra"), { "x/SKILL.md": skillMd("x", "the valid one") });
    const d = discoverSkills(opts);
    expect(d.skills.map((s) => s.description)).toEqual(["the valid one"]);
    expect(d.shadowed).toEqual([]);
    expect(d.problems).toHaveLength(1);
  });

  it("skills.enabled = false finds nothing and searches nothing", () => {
    writeTree(homeRoot(), { "a/SKILL.md": skillMd("a") });
    opts.config.skills.enabled = false;
    const d = discoverSkills(opts);
    expect(d).toMatchObject({ enabled: false, skills: [], roots: [], problems: [] });
  });

  it("an extra path that is itself a skill directory is loaded as one skill", () => {
    writeTree(path.join(base, "single"), { "SKILL.md": skillMd("single") });
    opts.config.skills.extra_paths = [path.join(base, "single")];
    expect(discoverSkills(opts).skills.map((s) => s.name)).toEqual(["single"]);
  });

  it("searches a directory listed twice only once, so nothing shadows itself", () => {
    writeTree(homeRoot(), { "a/SKILL.md": skillMd("a") });
    opts.config.skills.extra_paths = [homeRoot()];
    const d = discoverSkills(opts);
    expect(d.skills.map((s) => s.name)).toEqual(["a"]);
    expect(d.shadowed).toEqual([]);
    expect(d.roots[3]).toMatchObject({ source: "extra", duplicateOf: homeRoot() });
  });

  it("a symlinked skill directory is loaded with its real path", () => {
    writeTree(path.join(base, "elsewhere", "linked"), { "SKILL.md": skillMd("linked") });
    fs.mkdirSync(homeRoot(), { recursive: true });
    fs.symlinkSync(path.join(base, "elsewhere", "linked"), path.join(homeRoot(), "linked"));
    expect(discoverSkills(opts).skills[0]?.dir).toBe(path.join(base, "elsewhere", "linked"));
  });

  it("refuses a SKILL.md that is a symlink to a file outside the skill", () => {
    writeTree(base, { "outside.md": skillMd("sneaky") });
    fs.mkdirSync(path.join(homeRoot(), "sneaky"), { recursive: true });
    fs.symlinkSync(path.join(base, "outside.md"), path.join(homeRoot(), "sneaky", "SKILL.md"));
    const d = discoverSkills(opts);
    expect(d.skills).toEqual([]);
    expect(d.problems[0]?.message).toContain("resolves outside the skill directory");
  });
});
