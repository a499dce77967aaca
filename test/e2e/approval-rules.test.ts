/**
 * `[[tools.rules]]` through the built CLI against the scripted model server (docs/safety.md
 * "Rules"): a deny rule in the home's config refuses a call and the model's next request says
 * why; an allow rule lets its call run whatever `--approval` says; rules are read from the
 * home's config file only — never from a file in the project, never from the environment; a bad
 * rule stops every command with all its problems; `scoot config` lists the rules.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { needsBuiltCli, runCli, runInProcess } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

needsBuiltCli();
const scene = useScene({ home: "scoot-rules-home-", project: "scoot-rules-project-", model: true });

function homeConfig(text: string): void {
  fs.writeFileSync(path.join(scene.home, "config.toml"), text, { mode: 0o600 });
}

function evalRun(extra: string[] = [], env: Record<string, string> = {}) {
  return runCli(["-e", "do the thing", ...extra], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url, ...env },
  });
}

const made = () => fs.existsSync(path.join(scene.project, "made.txt"));
const approvals = () =>
  auditEvents(scene.home)
    .filter((e) => e.kind === "approval")
    .map((e) => e.msg);

describe("rules in a run", () => {
  it("a deny rule refuses the call; the model's next request says which rule", async () => {
    homeConfig('[[tools.rules]]\ntool = "bash"\nmatch = "touch made.txt"\ndecision = "deny"\n');
    scene.model.push(step("bash", "touch made.txt"), step("final", "could not"));
    const r = await evalRun();
    expect(r.code, r.stderr).toBe(0);
    expect(made()).toBe(false);
    const next = JSON.stringify(scene.model.completions()[1]!.body);
    expect(next).toContain('not run: denied by rule tools.rules[0] (deny bash \\"touch made.txt\\")');
    expect(approvals()).toEqual([
      'refused: denied by rule tools.rules[0] (deny bash "touch made.txt"): bash touch made.txt',
    ]);
  });

  it.each([[[]], [["--approval", "ask"]], [["--approval", "never"]]])(
    "an allow rule lets its call run, audited, whatever --approval says (%j)",
    async (flags) => {
      homeConfig('[[tools.rules]]\ntool = "bash"\nmatch = "touch made.txt"\ndecision = "allow"\n');
      scene.model.push(step("bash", "touch made.txt"), step("final", "made"));
      const r = await evalRun(flags);
      expect(r.code, r.stderr).toBe(0);
      expect(made()).toBe(true);
      expect(approvals()).toEqual([
        'allowed by rule tools.rules[0] (allow bash "touch made.txt"): bash touch made.txt',
      ]);
    },
  );

  it("an ask rule where nobody can answer (-e) refuses, saying a rule asks", async () => {
    homeConfig('[[tools.rules]]\ntool = "bash"\nmatch = "touch"\ndecision = "ask"\n');
    scene.model.push(step("bash", "touch made.txt"), step("final", "could not"));
    const r = await evalRun();
    expect(r.code, r.stderr).toBe(0);
    expect(made()).toBe(false);
    expect(JSON.stringify(scene.model.completions()[1]!.body)).toContain(
      "asks the user about this call, and nobody can answer in this run",
    );
  });
});

describe("rules come from Scoot's own config file only", () => {
  const deny = '[[tools.rules]]\ntool = "bash"\nmatch = "touch made.txt"\ndecision = "deny"\n';

  it("a config file in the project (.scoot/config.toml, scoot.toml, .scoot.toml, config.toml) adds no rule", async () => {
    fs.mkdirSync(path.join(scene.project, ".scoot"));
    for (const name of [
      ".scoot/config.toml",
      "scoot.toml",
      ".scoot.toml",
      "config.toml",
      ".scoot/config.json",
    ])
      fs.writeFileSync(
        path.join(scene.project, name),
        name.endsWith(".json")
          ? JSON.stringify({
              tools: { rules: [{ tool: "bash", match: "touch made.txt", decision: "deny" }] },
            })
          : deny,
      );
    scene.model.push(step("bash", "touch made.txt"), step("final", "made"));
    const r = await evalRun();
    expect(r.code, r.stderr).toBe(0);
    expect(made()).toBe(true);
    expect(approvals()).toEqual([]);
    const config = await runInProcess(["config"], { home: scene.home, cwd: scene.project });
    expect(config.stdout).toContain("rules = []");
    expect(config.stdout).not.toContain("[[tools.rules]]");
  });

  it("SCOOT_TOOLS_RULES is ignored with a warning that says why", async () => {
    scene.model.push(step("bash", "touch made.txt"), step("final", "made"));
    const rules = JSON.stringify([{ tool: "bash", match: "touch made.txt", decision: "deny" }]);
    const r = await evalRun([], { SCOOT_TOOLS_RULES: rules });
    expect(r.code, r.stderr).toBe(0);
    expect(made()).toBe(true);
    expect(r.stderr).toContain(
      "scoot: warning: SCOOT_TOOLS_RULES ignored: rules are read only from the config file in Scoot's home",
    );
  });
});

describe("scoot config and bad rules", () => {
  it("lists each rule with what it covers", async () => {
    homeConfig(
      [
        '[[tools.rules]]\ntool = "bash"\nmatch = "npm test"\ndecision = "allow"',
        `[[tools.rules]]\ntool = "file_write"\nmatch = "notes.txt"\ndecision = "ask"\nproject = "${scene.project}"`,
      ].join("\n\n"),
    );
    const r = await runInProcess(["config"], { home: scene.home, cwd: scene.project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      '[[tools.rules]]\n# tools.rules[0]: allow — every "npm test …" command, in every project\ntool = "bash"\nmatch = "npm test"\ndecision = "allow"',
    );
    expect(r.stdout).toContain(`# tools.rules[1]: ask — writes to notes.txt, in ${scene.project} only`);
  });

  it("a bad rule stops the command with exit 2 and every problem named", async () => {
    homeConfig(
      '[[tools.rules]]\ntool = "bsh"\nmatch = "npm test"\ndecision = "allow"\n\n[[tools.rules]]\ntool = "bash"\nmatch = ""\ndecision = "sometimes"\nproject = "relative"\n',
    );
    scene.model.push(step("final", "never asked"));
    const r = await evalRun();
    expect(r.code).toBe(2);
    const file = path.join(scene.home, "config.toml");
    expect(r.stderr).toContain(`scoot: configuration error: ${file}: 4 problems in tools.rules:\n`);
    for (const field of [
      "tools.rules[0].tool",
      "tools.rules[1].decision",
      "tools.rules[1].match",
      "tools.rules[1].project",
    ])
      expect(r.stderr).toContain(`  ${field}: `);
    expect(scene.model.completions()).toEqual([]);
    const doctor = await runInProcess(["doctor"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
    });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/FAIL\s+config\s+tools\.rules\[0\]\.tool: "bsh" is not a tool/);
    // A command that runs no tool checks the rules too (the registry is loaded only for them).
    const listing = await runInProcess(["sessions", "list"], { home: scene.home, cwd: scene.project });
    expect(listing.code).toBe(2);
    expect(listing.stderr).toContain(`scoot: configuration error: ${file}: 4 problems in tools.rules:\n`);
    expect(listing.stdout).toBe("");
  });
});
