/** Which skill folders are refused: those that would open a protected place to the file tools. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unsafeSkillDir } from "../../src/skills/discover.js";

let home: string;
beforeAll(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-unsafe-")));
  for (const d of ["proj/sub", ".scoot/skills/ok", ".scoot/state", ".ssh/k", "elsewhere/ok"])
    fs.mkdirSync(path.join(home, d), { recursive: true });
  fs.symlinkSync(home, path.join(home, "elsewhere", "link-home"));
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const opts = () => ({
  config: { skills: {} } as never,
  cwd: path.join(home, "proj"),
  homeDir: home,
  scootHome: path.join(home, ".scoot"),
});

describe("unsafeSkillDir", () => {
  it.each([
    ["", /contains (the project root|the user.s home)/],
    ["elsewhere/link-home", /contains (the project root|the user.s home)/],
    ["elsewhere/link-home/", /contains (the project root|the user.s home)/],
    ["proj/sub/..", /the project root/],
    [".scoot", /Scoot's home/],
    [".scoot/state", /inside Scoot's home outside its skills/],
    [".ssh", /credential store/],
    [".ssh/k", /inside a credential store/],
  ])("%s is refused", (rel, why) => {
    expect(unsafeSkillDir(path.join(home, rel), opts())).toMatch(why);
  });
  it.each([".scoot/skills/ok", "elsewhere/ok", "proj/sub"])("%s is allowed", (rel) => {
    expect(unsafeSkillDir(path.join(home, rel), opts())).toBeUndefined();
  });
});
