import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MANIFEST_FILE, PACK_NOTE, runSkillsPack, type SkillManifest } from "../../src/skills/pack.js";
import { splitUstarPath, ustarHeader } from "../../src/skills/tar.js";
import { skillMd, tempDir, writeTree } from "./helpers.js";

let base: string;
let skill: string;
let cwd: string;

beforeEach(() => {
  base = tempDir();
  skill = path.join(base, "src", "demo");
  cwd = path.join(base, "work");
  fs.mkdirSync(cwd, { recursive: true });
  writeTree(skill, {
    "SKILL.md": skillMd("demo", "Demo skill", "capabilities: [review]\nallowed_tools: [grep]\nscope: repo\n"),
    "references/guide.md": "guide\n",
    "scripts/run.sh": "#!/bin/sh\necho hi\n",
    "data/empty.txt": "",
    "data/block.bin": Buffer.alloc(1024, 7),
    ".env": "SECRET=1\n",
    ".git/config": "[core]\n",
    "references/.draft.md": "draft\n",
  });
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

function tarList(file: string): string[] {
  return execFileSync("tar", ["-tf", file], { encoding: "utf8" }).trim().split("\n").sort();
}

function sha256(file: string): string {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

function writtenFiles(dir: string): string[] {
  return fs.readdirSync(dir).sort();
}

describe("skills pack: a valid skill", () => {
  it("writes <name>.tar in cwd that GNU tar lists and extracts, with a verifiable manifest", () => {
    const r = runSkillsPack(skill, undefined, { cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = path.join(cwd, "demo.tar");
    expect(r.stdout).toContain(`packed demo: 5 files`);
    expect(r.stdout).toContain(out);
    expect(r.stderr).toContain("skipped hidden: .env, .git, references/.draft.md");
    expect(fs.statSync(out).size % 10240).toBe(0);

    expect(tarList(out)).toEqual(
      [
        "demo/.scoot-skill.json",
        "demo/SKILL.md",
        "demo/data/block.bin",
        "demo/data/empty.txt",
        "demo/references/guide.md",
        "demo/scripts/run.sh",
      ].sort(),
    );

    const x = path.join(base, "extract");
    fs.mkdirSync(x);
    execFileSync("tar", ["-xf", out, "-C", x]);
    const manifest = JSON.parse(
      fs.readFileSync(path.join(x, "demo", MANIFEST_FILE), "utf8"),
    ) as SkillManifest;
    expect(manifest).toMatchObject({
      name: "demo",
      description: "Demo skill",
      metadata: { capabilities: ["review"], allowed_tools: ["grep"], scope: "repo" },
      note: PACK_NOTE,
    });
    expect(manifest.note).toMatch(/^Skills add instructions, never privileges: /);
    expect(manifest.files.map((f) => f.path)).toEqual([
      "SKILL.md",
      "data/block.bin",
      "data/empty.txt",
      "references/guide.md",
      "scripts/run.sh",
    ]);
    for (const f of manifest.files) {
      const extracted = path.join(x, "demo", f.path);
      expect(sha256(extracted)).toBe(f.sha256);
      expect(fs.statSync(extracted).size).toBe(f.size);
      expect(fs.readFileSync(extracted)).toEqual(fs.readFileSync(path.join(skill, f.path)));
    }
    expect((fs.statSync(path.join(x, "demo", "SKILL.md")).mode & 0o777).toString(8)).toBe("644");
    expect(fs.existsSync(path.join(x, "demo", ".env"))).toBe(false);
  });

  it("honours an explicit output path and an output directory, relative to cwd", () => {
    const missingParent = runSkillsPack("../src/demo", "out/x.tar", { cwd });
    expect(missingParent).toMatchObject({
      exitCode: 1,
      stderr: expect.stringContaining("no such directory"),
    });
    fs.mkdirSync(path.join(cwd, "out"));
    expect(runSkillsPack("../src/demo", "out/x.tar", { cwd }).exitCode).toBe(0);
    expect(tarList(path.join(cwd, "out", "x.tar"))).toContain("demo/SKILL.md");
    expect(runSkillsPack("../src/demo", "out", { cwd }).exitCode).toBe(0);
    expect(writtenFiles(path.join(cwd, "out"))).toEqual(["demo.tar", "x.tar"]);
  });

  it("packs an unchanged skill to identical bytes", () => {
    runSkillsPack(skill, "a.tar", { cwd });
    runSkillsPack(skill, "b.tar", { cwd });
    expect(fs.readFileSync(path.join(cwd, "a.tar"))).toEqual(fs.readFileSync(path.join(cwd, "b.tar")));
  });

  it("does not pack its own default output when run inside the skill", () => {
    expect(runSkillsPack(".", undefined, { cwd: skill }).exitCode).toBe(0);
    expect(runSkillsPack(".", undefined, { cwd: skill }).exitCode).toBe(0);
    expect(tarList(path.join(skill, "demo.tar"))).not.toContain("demo/demo.tar");
  });

  it("stores long paths with the ustar prefix field, readable by GNU tar", () => {
    const deep = `${"d".repeat(60)}/${"e".repeat(60)}/${"f".repeat(60)}/file.md`;
    writeTree(skill, { [deep]: "deep\n" });
    expect(runSkillsPack(skill, "long.tar", { cwd }).exitCode).toBe(0);
    expect(tarList(path.join(cwd, "long.tar"))).toContain(`demo/${deep}`);
  });
});

describe("skills pack: refusals write nothing", () => {
  it.each([
    [
      "a symlink",
      (d: string) => fs.symlinkSync("/etc/passwd", path.join(d, "references", "passwd.md")),
      "references/passwd.md (symlink)",
    ],
    [
      "a symlink to a file inside",
      (d: string) => fs.symlinkSync("guide.md", path.join(d, "references", "alias.md")),
      "references/alias.md (symlink)",
    ],
    ["a symlinked directory", (d: string) => fs.symlinkSync(base, path.join(d, "up")), "up (symlink)"],
    [
      "a named pipe",
      (d: string) => execFileSync("mkfifo", [path.join(d, "data", "pipe")]),
      "data/pipe (named pipe)",
    ],
  ])("refuses %s and names it", (_label, make, named) => {
    make(skill);
    const r = runSkillsPack(skill, undefined, { cwd });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("symlinks and special files cannot be packed; nothing written");
    expect(r.stderr).toContain(named);
    expect(writtenFiles(cwd)).toEqual([]);
  });

  it("refuses an invalid skill with the problem and writes nothing", () => {
    fs.writeFileSync(path.join(skill, "SKILL.md"), "---\nname: demo\ndescription: ''\n---\n");
    const r = runSkillsPack(skill, undefined, { cwd });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      `INVALID ${path.join(skill, "SKILL.md")}:3: \`description\` must not be empty`,
    );
    expect(writtenFiles(cwd)).toEqual([]);
  });

  it("refuses a directory without SKILL.md", () => {
    const r = runSkillsPack(path.join(skill, "references"), undefined, { cwd });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("no SKILL.md");
    expect(writtenFiles(cwd)).toEqual([]);
  });

  it("a missing directory is a usage error (exit 2)", () => {
    const r = runSkillsPack("nope", undefined, { cwd });
    expect(r).toMatchObject({
      exitCode: 2,
      stderr: `skills pack: no such directory: ${path.join(cwd, "nope")}\n`,
    });
  });

  it("a path too long for ustar is a clear error, and an existing tar is left untouched", () => {
    fs.writeFileSync(path.join(cwd, "demo.tar"), "previous");
    writeTree(skill, { [`${"a".repeat(200)}/${"b".repeat(60)}.md`]: "x" });
    const r = runSkillsPack(skill, undefined, { cwd });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/at most 256|cannot be split/);
    expect(fs.readFileSync(path.join(cwd, "demo.tar"), "utf8")).toBe("previous");
    expect(writtenFiles(cwd)).toEqual(["demo.tar"]);
  });
});

describe("ustar headers", () => {
  it.each([
    ["short", "a/b.md", { prefix: "", name: "a/b.md" }],
    ["prefix split", `${"p".repeat(120)}/n.md`, { prefix: "p".repeat(120), name: "n.md" }],
  ])("splits a %s path", (_l, p, want) => {
    expect(splitUstarPath(p)).toEqual({ ok: true, value: want });
  });

  it.each([
    ["over 256 bytes", "x".repeat(257)],
    ["no usable slash", "y".repeat(150)],
    ["name part over 100", `p/${"n".repeat(101)}`],
  ])("refuses a path %s", (_l, p) => {
    expect(splitUstarPath(p).ok).toBe(false);
  });

  it("has a checksum that matches the header bytes", () => {
    const h = ustarHeader({ path: "demo/SKILL.md", size: 5, mtime: 0 });
    expect(h.ok).toBe(true);
    if (!h.ok) return;
    const stored = Number.parseInt(h.value.subarray(148, 154).toString("latin1"), 8);
    const copy = Buffer.from(h.value);
    copy.fill(0x20, 148, 156);
    expect(stored).toBe(copy.reduce((a, b) => a + b, 0));
    expect(h.value.subarray(257, 263).toString("latin1")).toBe("ustar\0");
    expect(h.value.subarray(100, 107).toString("latin1")).toBe("0000644");
  });
});
