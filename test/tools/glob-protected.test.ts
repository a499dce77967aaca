/**
 * glob skips protected places that lie inside the project (a project that is the user's home,
 * Scoot's home inside it, a configured secret path), as the sandbox hides them: their names
 * are not listed, and the result says how many were skipped.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { type GlobInput, globTool } from "../../src/tools/glob.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

let project: string;
beforeEach(() => {
  project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-globp-")));
  for (const f of [
    ".ssh/id_ed25519",
    ".aws/credentials",
    "scoot-home/state/sessions/x.jsonl",
    "vault/key.txt",
  ]) {
    fs.mkdirSync(path.dirname(path.join(project, f)), { recursive: true });
    fs.writeFileSync(path.join(project, f), "x\n");
  }
  fs.writeFileSync(path.join(project, "README.md"), "ok\n");
});
afterEach(() => fs.rmSync(project, { recursive: true, force: true }));

function parse(pattern: string): GlobInput {
  const r = globTool.parse(JSON.stringify({ pattern }));
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

function ctx(mode: "guarded" | "readonly" | "unrestricted") {
  const config = defaultConfig();
  config.tools.secret_paths = ["vault"];
  return makeToolContext({
    cwd: project,
    config,
    mode,
    childEnv: { ...process.env, HOME: project },
    services: {
      sandbox: {
        scootHome: path.join(project, "scoot-home"),
        tokenFile: path.join(project, "scoot-home", "token"),
        unattended: false,
      },
    },
  });
}

describe("glob and protected places inside the project", () => {
  it.each([
    ["**", "guarded"],
    ["**/*", "readonly"],
    ["{.ssh,.aws,vault,scoot-home}/**", "guarded"],
    [".ssh/id_ed25519", "guarded"],
    [".SSH/*", "guarded"],
  ] as const)("%s (%s) lists no name inside them", async (pattern, mode) => {
    // The "no paths match" line repeats the pattern itself; only what was found counts.
    const out = (await runTool(globTool, parse(pattern), ctx(mode))).replace(/^no paths match .*$/m, "");
    for (const name of ["id_ed25519", "credentials", "x.jsonl", "key.txt", "state/"])
      expect(out).not.toContain(name);
  });

  it("says how many were skipped, without names; README.md is still listed", async () => {
    const out = await runTool(globTool, parse("**"), ctx("guarded"));
    expect(out).toContain("README.md");
    expect(out).toMatch(/\[4 protected places were skipped/);
  });

  it("unrestricted lists them (the gate allows everything there)", async () => {
    const out = await runTool(globTool, parse("**"), ctx("unrestricted"));
    expect(out).toContain(".ssh/id_ed25519");
  });
});
