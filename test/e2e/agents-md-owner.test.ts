/**
 * AGENTS.md is text for the model, so only a directory (and a file) of the user running Scoot
 * or of root may supply it: a `.git` planted in a shared directory owned by someone else
 * would otherwise make that directory the "repository root" of every project below it, and a
 * file below the root that another user wrote would reach the model when a path beside it is
 * first touched. Run as root, the test hands a temporary directory (and files) to another uid;
 * without root it cannot, and says so.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

/** Any uid that is neither root nor the test's user. */
const OTHER_UID = 12345;
const isRoot = process.getuid?.() === 0;
if (!isRoot) console.log("agents-md-owner: skipped, chown to another uid needs root");

const scene = useScene({ home: "scoot-home-" });
let shared: string;
beforeEach(() => {
  shared = tempDir("scoot-shared-");
});
afterEach(async () => {
  removeDir(shared);
});

async function firstPrompt(cwd: string) {
  scene.server = await startScriptedServer([step("final", "done")]);
  const r = await runCli(["-e", "g", "--trace"], {
    home: scene.home,
    cwd,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
  });
  expect(r.code, r.stderr).toBe(0);
  const body = scene.server.completions()[0]!.body as { messages: { content: string }[] };
  return { prompt: body.messages[0]!.content, stderr: r.stderr };
}

/** A run of `script` in `cwd`; every request body's messages, as text. */
async function requestsOf(cwd: string, script: ScriptItem[]) {
  scene.server = await startScriptedServer(script);
  const r = await runCli(["-e", "g", "--trace"], {
    home: scene.home,
    cwd,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
  });
  expect(r.code, r.stderr).toBe(0);
  return { sent: scene.server.completions().map((c) => JSON.stringify(c.body)), stderr: r.stderr };
}

describe.skipIf(!isRoot)("AGENTS.md only from the user's or root's directories", () => {
  it("a directory owned by another uid is not read and the walk stops there", async () => {
    const foreign = path.join(shared, "foreign");
    const project = path.join(foreign, "project");
    fs.mkdirSync(project, { recursive: true });
    fs.mkdirSync(path.join(foreign, ".git"));
    fs.writeFileSync(path.join(foreign, "AGENTS.md"), "INJECTED-FROM-FOREIGN-DIR\n");
    fs.writeFileSync(path.join(shared, "AGENTS.md"), "ABOVE-THE-FOREIGN-DIR\n");
    fs.mkdirSync(path.join(shared, ".git"));
    fs.writeFileSync(path.join(project, "AGENTS.md"), "OWN-PROJECT-GUIDANCE\n");
    fs.chownSync(foreign, OTHER_UID, OTHER_UID);

    const { prompt, stderr } = await firstPrompt(project);
    expect(prompt).toContain("OWN-PROJECT-GUIDANCE");
    expect(prompt).not.toContain("INJECTED-FROM-FOREIGN-DIR");
    expect(prompt).not.toContain("ABOVE-THE-FOREIGN-DIR");
    expect(stderr).toContain(`${foreign} is owned by uid ${OTHER_UID}`);
  }, 60_000);

  it("a .git and an AGENTS.md planted by another uid in a root-owned shared directory are ignored", async () => {
    const project = path.join(shared, "project");
    fs.mkdirSync(project);
    fs.mkdirSync(path.join(shared, ".git"));
    fs.writeFileSync(path.join(shared, "AGENTS.md"), "PLANTED-IN-SHARED-DIR\n");
    fs.chownSync(path.join(shared, ".git"), OTHER_UID, OTHER_UID);
    fs.chownSync(path.join(shared, "AGENTS.md"), OTHER_UID, OTHER_UID);
    fs.writeFileSync(path.join(project, "AGENTS.md"), "OWN-PROJECT-GUIDANCE\n");

    const { prompt } = await firstPrompt(project);
    expect(prompt).toContain("OWN-PROJECT-GUIDANCE");
    expect(prompt).not.toContain("PLANTED-IN-SHARED-DIR");
  }, 60_000);

  it("below the root, touching a path does not pull in another uid's AGENTS.md, nor one in another uid's directory", async () => {
    const repo = path.join(shared, "repo");
    fs.mkdirSync(path.join(repo, ".git"), { recursive: true });
    const vendor = path.join(repo, "vendor");
    const foreignDir = path.join(repo, "foreign");
    for (const dir of [vendor, foreignDir]) {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, "lib.txt"), "library\n");
    }
    fs.writeFileSync(path.join(vendor, "AGENTS.md"), "FOREIGN-FILE-GUIDANCE\n");
    fs.chownSync(path.join(vendor, "AGENTS.md"), OTHER_UID, OTHER_UID);
    fs.writeFileSync(path.join(foreignDir, "AGENTS.md"), "FOREIGN-DIR-GUIDANCE\n");
    fs.chownSync(foreignDir, OTHER_UID, OTHER_UID);

    const { sent, stderr } = await requestsOf(repo, [
      step("file_read", { path: "vendor/lib.txt" }),
      step("file_read", { path: "foreign/lib.txt" }),
      step("final", "done"),
    ]);
    // Both reads ran (their content came back), and neither AGENTS.md came with them.
    expect(sent[2]).toContain("library");
    expect(sent.join("")).not.toContain("FOREIGN-FILE-GUIDANCE");
    expect(sent.join("")).not.toContain("FOREIGN-DIR-GUIDANCE");
    expect(stderr).toContain(
      `[trace] project instructions: ${path.join(fs.realpathSync(vendor), "AGENTS.md")} is owned by uid ${OTHER_UID}`,
    );
    expect(stderr).toContain(
      `[trace] project instructions: ${fs.realpathSync(foreignDir)} is owned by uid ${OTHER_UID}`,
    );
  }, 60_000);
});
