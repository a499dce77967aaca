/**
 * The identity checks on the files Scoot trusts (src/config/trusted-file.ts), as an adversarial
 * table on real files: links of every kind, modes, owners, and the directories on the real path.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { untrustedFileProblem } from "../../src/config/trusted-file.js";
import { removeDir, tempDir } from "../helpers/cli.js";

const IS_ROOT = process.getuid?.() === 0;
if (!IS_ROOT) console.log("trusted-file: the foreign-owner cases need root to chown; skipped here");
/** An owner that is neither the user nor root (nobody on Debian). */
const NOBODY = 65534;

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.realpathSync(tempDir("scoot-trust-"));
  file = path.join(dir, "config.toml");
  fs.writeFileSync(file, "[agent]\n", { mode: 0o600 });
});
afterEach(() => removeDir(dir));

describe("files Scoot trusts", () => {
  it("an ordinary file of the user's, mode 0600 or 0644, is trusted", () => {
    expect(untrustedFileProblem(file, "config file")).toBeUndefined();
    fs.chmodSync(file, 0o644);
    expect(untrustedFileProblem(file, "config file")).toBeUndefined();
  });

  it("a missing file is not this check's business", () => {
    expect(untrustedFileProblem(path.join(dir, "nope.toml"), "config file")).toBeUndefined();
  });

  const refused: [string, () => string, RegExp][] = [
    ["world-writable", () => worldWritable(), /writable by every user \(mode 0646\)/],
    [
      "world-writable behind a symlink",
      () => link(file, 0o602),
      /\(really .*config\.toml\) is writable by every user/,
    ],
    [
      "behind a chain of two symlinks",
      () => chain(0o666),
      /\(really .*config\.toml\) is writable by every user/,
    ],
    ["hard-linked", () => hardLinked(), /has 2 names \(a hard link\)/],
    ["hard-linked, named through a symlink", () => hardBehindLink(), /has 2 names/],
    [
      "in a world-writable directory",
      () => inDir(0o777),
      /lies in .*shared, writable by every user \(mode 0777\)/,
    ],
    [
      "in a world-writable directory two levels up",
      () => deepDir(),
      /lies in .*open, writable by every user/,
    ],
  ];
  it.each(refused)("%s is refused, naming the real file and a fix", (_what, make, why) => {
    const named = make();
    const problem = untrustedFileProblem(named, "config file");
    expect(problem).toMatch(why);
    expect(problem).toMatch(/Fix: /);
    expect(problem!.split("\n")).toHaveLength(1);
  });

  it("a sticky world-writable directory (as /tmp) does not make its files untrusted", () => {
    const sticky = path.join(dir, "sticky");
    fs.mkdirSync(sticky);
    fs.chmodSync(sticky, 0o1777);
    const f = path.join(sticky, "key");
    fs.writeFileSync(f, "k", { mode: 0o600 });
    expect(untrustedFileProblem(f, "token file")).toBeUndefined();
  });

  it("a group-writable file of a group that is not the user's private one is refused", () => {
    fs.chmodSync(file, 0o660);
    // gid 65534 (nogroup) is nobody's private group.
    if (IS_ROOT) fs.chownSync(file, 0, NOBODY);
    const problem = untrustedFileProblem(file, "config file");
    if (IS_ROOT) expect(problem).toMatch(/writable by group 65534/);
    else expect(problem === undefined || /writable by group/.test(problem)).toBe(true);
  });

  it.skipIf(!IS_ROOT)("a file owned by another user is refused", () => {
    fs.chownSync(file, NOBODY, NOBODY);
    expect(untrustedFileProblem(file, "config file")).toMatch(/is owned by uid 65534, not by you/);
  });

  it.skipIf(!IS_ROOT)("a file in a directory owned by another user is refused", () => {
    const theirs = path.join(dir, "theirs");
    fs.mkdirSync(theirs);
    const f = path.join(theirs, "config.toml");
    fs.writeFileSync(f, "", { mode: 0o600 });
    fs.chownSync(theirs, NOBODY, NOBODY);
    expect(untrustedFileProblem(f, "config file")).toMatch(/lies in .*theirs, owned by uid 65534/);
  });
});

function link(target: string, mode: number): string {
  fs.chmodSync(target, mode);
  const l = path.join(dir, "link.toml");
  fs.symlinkSync(target, l);
  return l;
}

function chain(mode: number): string {
  fs.chmodSync(file, mode);
  fs.symlinkSync(file, path.join(dir, "one"));
  fs.symlinkSync(path.join(dir, "one"), path.join(dir, "two"));
  return path.join(dir, "two");
}

function hardBehindLink(): string {
  fs.linkSync(file, path.join(dir, "second-name"));
  fs.symlinkSync(file, path.join(dir, "named"));
  return path.join(dir, "named");
}

function inDir(mode: number): string {
  const shared = path.join(dir, "shared");
  fs.mkdirSync(shared);
  fs.chmodSync(shared, mode);
  const f = path.join(shared, "config.toml");
  fs.writeFileSync(f, "", { mode: 0o600 });
  return f;
}

function deepDir(): string {
  const deep = path.join(dir, "open", "a", "b");
  fs.mkdirSync(deep, { recursive: true });
  fs.chmodSync(path.join(dir, "open"), 0o777);
  const f = path.join(deep, "config.toml");
  fs.writeFileSync(f, "", { mode: 0o600 });
  return f;
}

function worldWritable(): string {
  fs.chmodSync(file, 0o646);
  return file;
}

function hardLinked(): string {
  fs.linkSync(file, path.join(dir, "other"));
  return file;
}
