/**
 * `SCOOT_COMPILE_CACHE` (src/config/compile-cache-dir.ts): code kept in the directory it names
 * runs as the next Scoot, so the table below is what an attacker on the same machine would
 * offer first — a shared or swappable directory, a link, a relative name — with the directories
 * that must pass beside them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chosenCompileCacheDir, namedCompileCacheDir } from "../../src/config/compile-cache-dir.js";

let tmp: string;
beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-cc-dir-")));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Where the person works, inside the test's directory. */
const work = () => ({
  userHome: path.join(tmp, "user-home"),
  projectRoot: path.join(tmp, "user-home", "project"),
});
const choose = (value: string | undefined) => chosenCompileCacheDir({ SCOOT_COMPILE_CACHE: value }, work());
const named = (value: string | undefined) => namedCompileCacheDir({ SCOOT_COMPILE_CACHE: value }, work());

/** A fresh directory under the test's private one, with `mode` set past the umask. */
function dirWithMode(name: string, mode: number): string {
  const d = path.join(tmp, name);
  fs.mkdirSync(d, { recursive: true });
  fs.chmodSync(d, mode);
  return d;
}

function refusal(value: string): string {
  const r = choose(value);
  if (r === undefined || r.ok) throw new Error(`${value} was accepted`);
  return r.problem;
}

describe("SCOOT_COMPILE_CACHE", () => {
  it("unset or empty names nothing (an empty value counts as unset)", () => {
    expect(choose(undefined)).toBeUndefined();
    expect(choose("")).toBeUndefined();
    expect(namedCompileCacheDir({}, work())).toBeUndefined();
    expect(named("")).toBeUndefined();
  });

  it("a missing directory is made owner-only, parents too; an existing private one is used", () => {
    const want = path.join(tmp, "made", "deeper", "cache");
    expect(choose(want)).toEqual({ ok: true, dir: want });
    expect(fs.statSync(want).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.dirname(want)).mode & 0o077).toBe(0);
    expect(choose(want)).toEqual({ ok: true, dir: want });
    // Dot segments and a trailing separator name the same directory.
    expect(choose(`${path.join(tmp, "made", ".", "deeper")}/../deeper/cache/`)).toEqual({
      ok: true,
      dir: want,
    });
  });

  it("in a sticky directory others can write (/tmp's kind), a private directory is used", () => {
    dirWithMode("sticky", 0o1777);
    const inside = dirWithMode("sticky/mine", 0o700);
    expect(choose(inside)).toEqual({ ok: true, dir: inside });
  });

  it.each([
    [
      "a relative path",
      () => "cache",
      /is not an absolute path; fix: name the directory by its absolute path/,
    ],
    ["a dot-relative path", () => "./cache", /is not an absolute path/],
    [
      "writable by its group",
      () => dirWithMode("group-writable", 0o770),
      /can be written by other users; fix: chmod go-w/,
    ],
    ["writable by everyone", () => dirWithMode("world-writable", 0o777), /can be written by other users/],
    [
      "inside a directory everyone can write, without the sticky bit",
      () => {
        dirWithMode("open-parent", 0o777);
        return dirWithMode("open-parent/cache", 0o700);
      },
      /lies in .*open-parent, which other users can write; fix: name a directory inside your own home/,
    ],
    [
      "made inside a directory everyone can write",
      () => {
        dirWithMode("open-parent-2", 0o777);
        return path.join(tmp, "open-parent-2", "new-cache");
      },
      /which other users can write/,
    ],
    [
      "a symbolic link to a private directory",
      () => {
        const target = dirWithMode("link-target", 0o700);
        const link = path.join(tmp, "link");
        fs.symlinkSync(target, link);
        return link;
      },
      /is a symbolic link; fix: name the directory it leads to, .*link-target/,
    ],
    [
      "a file",
      () => {
        const f = path.join(tmp, "a-file");
        fs.writeFileSync(f, "x");
        return f;
      },
      /cannot be made \(EEXIST\)|is not a directory/,
    ],
    [
      "under a file",
      () => {
        const f = path.join(tmp, "b-file");
        fs.writeFileSync(f, "x");
        return path.join(f, "cache");
      },
      /cannot be made \(ENOTDIR\)/,
    ],
  ])("refuses %s, naming it and the fix", (_what, make, message) => {
    const value = make();
    const problem = refusal(value);
    expect(problem).toMatch(/^SCOOT_COMPILE_CACHE ignored: /);
    expect(problem).toContain(JSON.stringify(value));
    expect(problem).toMatch(message);
    expect(problem).toContain("the home's state/compile-cache is used meanwhile");
  });

  it("a directory reached through a linked parent is judged and used by its real path", () => {
    const real = dirWithMode("real-parent/cache", 0o700);
    const linkParent = path.join(tmp, "linked-parent");
    fs.symlinkSync(path.dirname(real), linkParent);
    expect(choose(path.join(linkParent, "cache"))).toEqual({ ok: true, dir: real });
  });

  it("names the directory for the gate whenever it is absolute, accepted or not", () => {
    expect(named("/srv/ci/../cache/")).toBe("/srv/cache");
    expect(named("relative")).toBeUndefined();
  });

  it.each([
    ["the filesystem root", () => "/"],
    ["the user's home", () => work().userHome],
    ["the user's home, with a trailing separator", () => `${work().userHome}/`],
    ["a directory holding the user's home", () => tmp],
    ["the project", () => work().projectRoot],
    ["the project through a dot segment", () => path.join(work().projectRoot, ".")],
  ])(
    "refuses %s, and the gate is not told to protect it (it would refuse the model every file)",
    (_what, make) => {
      const value = make();
      expect(refusal(value)).toMatch(
        /holds your home or the project, which the gate would then refuse to the model whole; fix: name a directory of its own, such as ~\/\.cache\/scoot/,
      );
      expect(named(value)).toBeUndefined();
    },
  );

  it("a directory inside the project or the home is its own: used and protected", () => {
    for (const inside of [
      path.join(work().projectRoot, ".scoot-cache"),
      path.join(work().userHome, ".cache", "scoot"),
    ]) {
      expect(choose(inside)).toEqual({ ok: true, dir: inside });
      expect(named(inside)).toBe(inside);
    }
  });

  const asRoot = process.getuid?.() === 0;
  if (!asRoot)
    console.log("skipped: a directory owned by another user needs root to make (chown); CI runs as root");
  it.skipIf(!asRoot)("refuses a directory, or a parent, owned by another user", () => {
    const theirs = dirWithMode("theirs", 0o700);
    fs.chownSync(theirs, 65534, 65534);
    expect(refusal(theirs)).toMatch(
      /is owned by uid 65534, not by you \(uid 0\); fix: name a directory of your own/,
    );
    const theirParent = dirWithMode("their-parent", 0o755);
    const mine = dirWithMode("their-parent/mine", 0o700);
    fs.chownSync(theirParent, 65534, 65534);
    expect(refusal(mine)).toMatch(/lies in .*their-parent, owned by uid 65534/);
  });
});
