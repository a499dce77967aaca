/**
 * Hostile inputs round two, item 13, through the built CLI: the `skill` action (readonly, the
 * mode in which nothing else may read) refuses hidden and secret-named files and hard links,
 * and `skills pack` refuses a hard link to a file outside the skill and writes nothing.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-h2-sk-" });
let outside: string;
let skill: string;
const SECRET = "sk-outside-secret-0123456789";

beforeEach(() => {
  outside = tempDir("scoot-h2-out-");
  skill = path.join(scene.home, "skills", "demo");
  fs.mkdirSync(path.join(skill, "conf"), { recursive: true });
  fs.writeFileSync(path.join(skill, "SKILL.md"), "---\nname: demo\ndescription: a demo\n---\nBody\n");
  fs.writeFileSync(path.join(skill, "notes.md"), "ordinary notes\n");
  for (const f of [".env", ".hidden/x.md", "secrets.yaml", "conf/token", "server.key", ".envrc"]) {
    fs.mkdirSync(path.dirname(path.join(skill, f)), { recursive: true });
    fs.writeFileSync(path.join(skill, f), `${SECRET}\n`);
  }
  fs.symlinkSync(".env", path.join(skill, "innocent.md"));
  fs.writeFileSync(path.join(outside, "private.txt"), `${SECRET}\n`);
});
afterEach(async () => {
  removeDir(outside);
});

function skillStep(p: string): ScriptItem {
  return step("skill", { name: "demo", path: p }, "read");
}

describe("item 13: skill reads", () => {
  const PRIVATE = [
    ".env",
    ".hidden/x.md",
    "secrets.yaml",
    "conf/token",
    "server.key",
    ".envrc",
    "innocent.md",
    "SECRETS.YAML",
  ];

  it("hidden, secret-named and hard-linked files are refused in readonly; ordinary files read", async () => {
    fs.linkSync(path.join(outside, "private.txt"), path.join(skill, "linked.md"));
    const script = [...PRIVATE, "linked.md", "notes.md"].map(skillStep);
    script.push({ reply: { thought: "done", action: "final", action_input: "ok" } });
    scene.server = await startScriptedServer(script);
    const r = await runCli(["-e", "read the skill", "--policy", "readonly"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code).toBe(0);
    const bodies = scene.server.completions().map((c) => JSON.stringify(c.body));
    for (const b of bodies) expect(b).not.toContain(SECRET);
    const last = scene.server.completions().at(-1)!.body as { messages: { content: string }[] };
    const observations = last.messages
      .map((m) => m.content)
      .filter((c) => c.startsWith("Observation from skill"));
    expect(observations).toHaveLength(PRIVATE.length + 2);
    for (const o of observations.slice(0, PRIVATE.length)) {
      expect(o).toMatch(/skill error: .* is refused: .*(is hidden|looks like a secret)/);
    }
    expect(observations[PRIVATE.length]).toMatch(
      /skill error: "linked.md" in skill "demo" has 2 hard links; refused/,
    );
    expect(observations[PRIVATE.length + 1]).toContain("ordinary notes");
  });
});

describe("item 13: skills pack", () => {
  it("a hard link to a file outside the skill is refused and nothing is written", async () => {
    for (const f of [
      ".env",
      ".hidden/x.md",
      ".envrc",
      "innocent.md",
      "secrets.yaml",
      "conf/token",
      "server.key",
    ]) {
      fs.rmSync(path.join(skill, f), { force: true });
    }
    fs.linkSync(path.join(outside, "private.txt"), path.join(skill, "linked.md"));
    const out = path.join(outside, "demo.tar");
    const r = await runCli(["skills", "pack", skill, out], { home: scene.home });
    expect(r.code).not.toBe(0);
    expect(r.stderr + r.stdout).toMatch(/linked\.md \(has 2 hard links; refused/);
    expect(fs.existsSync(out)).toBe(false);

    fs.rmSync(path.join(skill, "linked.md"));
    const ok = await runCli(["skills", "pack", skill, out], { home: scene.home });
    expect(ok.code).toBe(0);
    expect(fs.readFileSync(out).includes(SECRET)).toBe(false);
  });
});
