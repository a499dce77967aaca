/**
 * Skills of the open Agent Skills standard (issue 13, docs/skills.md "Skills"), through the built
 * CLI: every standard front-matter field is recognised (no warning) and shown by
 * `skills check`; an over-long description loads with a WARN and is clipped in the prompt;
 * `allowed-tools` grants nothing.
 *
 * The fixtures are written here in the shape of published skills (see docs/skills.md "Skills" for
 * what real published skills carry); none is copied from a third-party repository.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-home-", project: "scoot-proj-" });

function skill(dir: string, frontMatter: string, body = "# Steps\nDo the thing.\n"): string {
  const d = path.join(dir, frontMatter.match(/^name: (.+)$/m)![1]!);
  fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(d, "SKILL.md"), `---\n${frontMatter}---\n${body}`);
  return d;
}

const ALL_FIELDS = `name: pdf-forms
description: Fill PDF forms from a JSON file of field values. Use when the user asks to fill, complete or flatten a PDF form.
license: Apache-2.0
compatibility: Requires python3 with pypdf; no network access needed.
metadata:
  author: example-org
  version: 1.0
allowed-tools: Bash(python3:*) Read
`;

describe("skills check with the standard's fields", () => {
  it("every standard field: no warning, shown, exit 0", async () => {
    const root = path.join(scene.project, "skills");
    skill(root, ALL_FIELDS);
    const r = await runCli(["skills", "check", root], { home: scene.home, cwd: scene.project });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`OK pdf-forms  ${path.join(root, "pdf-forms")}\n`);
    expect(r.stdout).toContain("  license: Apache-2.0\n");
    expect(r.stdout).toContain("  compatibility: Requires python3 with pypdf; no network access needed.\n");
    expect(r.stdout).toContain("  metadata: author=example-org, version=1\n");
    expect(r.stdout).toContain("  allowed-tools: Bash(python3:*) Read (review only: grants nothing)\n");
    expect(r.stdout).toContain("1 ok, 0 invalid");
  });

  it("the list form of allowed-tools and a bundled-license name are accepted too", async () => {
    const root = path.join(scene.project, "skills");
    skill(
      root,
      "name: docs-style\ndescription: House style for docs.\nlicense: Complete terms in LICENSE.txt\nallowed-tools:\n  - Read\n  - Grep\n",
    );
    const r = await runCli(["skills", "check", root], { home: scene.home, cwd: scene.project });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("  allowed-tools: Read Grep (review only: grants nothing)");
  });

  it("an over-long description: WARN, still loads (OK, exit 0)", async () => {
    const root = path.join(scene.project, "skills");
    const long = `Start of a long description. ${"More detail about when to use it. ".repeat(40)}END-MARKER`;
    expect(long.length).toBeGreaterThan(1024);
    skill(root, `name: wordy\ndescription: ${long}\n`);
    const r = await runCli(["skills", "check", root], { home: scene.home, cwd: scene.project });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("OK wordy");
    expect(r.stderr).toMatch(
      /WARN .*SKILL\.md:3: `description` is \d+ characters, over the standard's 1024; it loads/,
    );
  });

  it.each([
    ["license: [MIT]\n", /`license` must be a string/],
    ["compatibility: 3\n", /`compatibility` must be a string/],
    ["metadata: just text\n", /`metadata` must be a mapping/],
    ["allowed-tools: {a: 1}\n", /`allowed-tools` must be a space-separated string/],
  ])("a wrong type is a clear INVALID naming the key: %j", async (extra, message) => {
    const root = path.join(scene.project, "skills");
    skill(root, `name: bad\ndescription: d\n${extra}`);
    const r = await runCli(["skills", "check", root], { home: scene.home, cwd: scene.project });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(message);
  });
});

describe("in a run", () => {
  it("the over-long description is clipped in the prompt; allowed-tools grants nothing", async () => {
    const skillsDir = path.join(scene.home, "skills");
    const long = `Start of a long description. ${"More detail about when to use it. ".repeat(40)}END-MARKER`;
    skill(skillsDir, `name: wordy\ndescription: ${long}\nallowed-tools: Bash Write\n`);
    const marker = path.join(scene.project, "made-by-bash");
    scene.server = await startScriptedServer([
      { reply: { thought: "the skill says I may", action: "bash", action_input: `touch ${marker}` } },
      { reply: { thought: "ok", action: "final", action_input: "done" } },
    ]);
    const r = await runCli(["--policy", "readonly", "-e", "use the wordy skill"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code).toBe(0);
    const system = (scene.server.completions()[0]!.body as { messages: { role: string; content: string }[] })
      .messages[0]!;
    expect(system.content).toContain("- wordy: Start of a long description.");
    expect(system.content).not.toContain("END-MARKER");
    // allowed-tools did not open bash under readonly.
    expect(fs.existsSync(marker)).toBe(false);
    const observation = (
      scene.server.completions()[1]!.body as { messages: { content: string }[] }
    ).messages.at(-1)!;
    expect(observation.content).toMatch(/denied by policy \(readonly\)/);
  });
});
