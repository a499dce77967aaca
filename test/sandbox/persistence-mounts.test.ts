/**
 * The sandbox's binds for persistence places (the project's git dir pinned, its hooks and
 * config read-only, module git dirs too, home startup files when the home is inside the
 * project, nothing inside a hidden place shown again) and the config check run after a call.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configIsPlain, persistenceMountArgs } from "../../src/sandbox/persistence-mounts.js";

let root: string;
beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-pm-")));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function pairs(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 3) out.push(`${args[i]} ${path.relative(root, args[i + 1]!)}`);
  return out;
}

describe("persistenceMountArgs", () => {
  it("pins .git and module git dirs, binds their hooks and config read-only", () => {
    fs.mkdirSync(path.join(root, ".git", "hooks"), { recursive: true });
    fs.writeFileSync(path.join(root, ".git", "config"), "");
    fs.mkdirSync(path.join(root, ".git", "modules", "lib", "x", "hooks"), { recursive: true });
    fs.writeFileSync(path.join(root, ".git", "modules", "lib", "x", "HEAD"), "ref: refs/heads/main\n");
    const got = pairs(persistenceMountArgs(root, "/nonexistent-home", []));
    expect(got).toEqual([
      "--bind .git",
      "--bind .git/modules/lib/x",
      "--ro-bind .git/hooks",
      "--ro-bind .git/config",
      "--ro-bind .git/modules/lib/x/hooks",
    ]);
  });
  it("a .git file is bound read-only; a home inside the project has its startup files bound, hidden ones skipped", () => {
    fs.writeFileSync(path.join(root, ".git"), "gitdir: /elsewhere\n");
    const home = path.join(root, "u");
    fs.mkdirSync(path.join(home, ".config", "fish"), { recursive: true });
    fs.mkdirSync(path.join(home, ".ssh"), { recursive: true });
    fs.writeFileSync(path.join(home, ".bashrc"), "");
    fs.writeFileSync(path.join(home, ".ssh", "rc"), "");
    const got = pairs(persistenceMountArgs(root, home, [{ path: path.join(home, ".ssh") }]));
    expect(got).toEqual([
      "--bind u",
      "--bind u/.config",
      "--ro-bind .git",
      "--ro-bind u/.bashrc",
      "--ro-bind u/.config/fish",
    ]);
  });
  it("nothing when there is no repository and the home is elsewhere", () => {
    expect(persistenceMountArgs(root, "/nonexistent-home", [])).toEqual([]);
  });
});

describe("configIsPlain", () => {
  it.each([
    [
      "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
      true,
    ],
    [
      '[remote "origin"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
      true,
    ],
    ["[user]\n\tname = A\n\temail = a@b\n", true],
    ["[core]\n\tfsmonitor = touch /tmp/x\n", false],
    ["[core]\n\thooksPath = /x\n", false],
    ["[core]\n\tsshCommand = evil\n", false],
    ['[remote "o"]\n\tuploadpack = evil\n', false],
    ["[include]\n\tpath = ../x\n", false],
    ["[alias]\n\tst = !evil\n", false],
    ["[core]\n\tpager = evil\\\n\tx\n", false],
    ["bare = 1\n", false],
  ])("%j -> %s", (text, plain) => {
    expect(configIsPlain(text)).toBe(plain);
  });
});
