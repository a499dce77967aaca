/**
 * The library API's edges (docs/editors.md "Library API"), in process against the scripted model
 * server with real homes and projects: one goal at a time per session, a project root that
 * does not exist, a refused createScoot that leaves no home behind, the exported version.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createScoot, type PolicyChoice, version } from "../../src/lib/index.js";
import { REPO_ROOT, removeDir, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

let base: string;
let project: string;
let server: ScriptedServer;

beforeEach(async () => {
  base = tempDir("scoot-lib-api-");
  project = fs.realpathSync(tempDir("scoot-lib-api-project-"));
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
  removeDir(base);
  removeDir(project);
});

const envFor = () => ({ ...process.env, SCOOT_BACKEND_BASE_URL: server.url, SCOOT_BACKEND_MAX_RETRIES: "0" });
const final = (answer: string, delayMs = 0) => ({
  reply: { thought: "t", action: "final", action_input: answer },
  ...(delayMs ? { delayMs } : {}),
});

describe("one goal at a time per session", () => {
  it("a second run() on a running sessionId is refused at once; the first finishes alone", async () => {
    const home = path.join(base, "home");
    const scoot = createScoot({ home, env: envFor(), cwd: project, onWarning: () => {} });
    server.push(final("first answer", 800), final("later answer"));
    const first = scoot.run("first goal", { sessionId: "shared" });
    await expect(scoot.run("second goal", { sessionId: "shared" })).rejects.toThrow(
      /session shared is running a goal \(one at a time per session/,
    );
    expect((await first).answer).toBe("first answer");
    // Only the first goal reached the model and the transcript.
    expect(server.completions()).toHaveLength(1);
    const transcript = fs.readFileSync(path.join(home, "state", "sessions", "shared.jsonl"), "utf8");
    expect(transcript).toContain("first goal");
    expect(transcript).not.toContain("second goal");
    // Once it is done, the session takes the next goal.
    expect((await scoot.run("later goal", { sessionId: "shared" })).answer).toBe("later answer");
    await scoot.close();
  });

  it("runs on different sessions still go together", async () => {
    const scoot = createScoot({ home: path.join(base, "home"), env: envFor(), cwd: project });
    server.push(final("a", 300), final("b", 300));
    const [a, b] = await Promise.all([
      scoot.run("one", { sessionId: "s-a" }),
      scoot.run("two", { sessionId: "s-b" }),
    ]);
    expect([a.status, b.status]).toEqual(["final", "final"]);
    await scoot.close();
  });
});

describe("createScoot refuses bad options before anything is written", () => {
  it("a cwd that does not exist is refused at creation, naming it; the home is not created", () => {
    const home = path.join(base, "never-home");
    const missing = path.join(project, "no-such-dir");
    expect(() => createScoot({ home, env: envFor(), cwd: missing })).toThrow(
      new RegExp(`cwd ${missing} does not exist: pass an existing directory`),
    );
    expect(fs.existsSync(home)).toBe(false);
  });

  it("a cwd that is a file is refused", () => {
    const file = path.join(project, "a-file");
    fs.writeFileSync(file, "x");
    expect(() => createScoot({ home: path.join(base, "h"), env: envFor(), cwd: file })).toThrow(
      /is not a directory/,
    );
  });

  it.each([
    // A JavaScript caller's typo (TypeScript refuses it: test/lib/library.e2e.test.ts).
    ["an unknown policy", { policy: "root" as PolicyChoice }, /unknown policy "root"/],
    ["a missing config file", { configFile: "/nonexistent/scoot.toml" }, /does not exist/],
  ])("%s: throws, and the home is not created", (_what, extra, error) => {
    const home = path.join(base, "never-home");
    expect(() => createScoot({ home, env: envFor(), ...extra })).toThrow(error);
    expect(fs.existsSync(home)).toBe(false);
  });
});

describe("the package's version", () => {
  it("is exported and is package.json's", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    expect(version).toBe(pkg.version);
  });
});
