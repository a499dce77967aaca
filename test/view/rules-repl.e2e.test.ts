/**
 * Rules at a real terminal (docs/safety.md "Rules"): a rule saved for this project
 * (`saveApprovalRule`, what the REPL calls when the person keeps an "always") lets its command
 * run in the next session without a question, and `/status` lists it; a config file in the
 * repository adds no rule, so its command is still asked about.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { saveApprovalRule } from "../../src/agent/save-rule.js";
import { auditEvents } from "../helpers/audit-file.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

const scene = useScene({
  home: "scoot-rules-tty-home-",
  project: "scoot-rules-tty-project-",
  realProject: true,
});
let term: Terminal | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

const final = (answer: string): ScriptItem => step("final", answer, "t");
/** The approval question, in any of its layouts: it always offers y, a and n. */
const QUESTION = /\[y\/a\/n\]/;

const SIZES = [
  { width: 120, height: 40 },
  { width: 80, height: 24 },
];
let size = SIZES[0]!;

async function repl(items: ScriptItem[]): Promise<Terminal> {
  scene.server = await startScriptedServer(items);
  term = await openTerminal(["repl"], {
    ...size,
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_STREAM: "false", NO_COLOR: "1" },
  });
  await term.waitFor(/scoot> $/m);
  return term;
}

describe.skipIf(!hasTmux).each(SIZES)("rules in the REPL at $width x $height", (at) => {
  beforeEach(() => {
    size = at;
  });

  it("a rule saved for this project runs its command unasked in the next session; /status lists it", async () => {
    const saved = saveApprovalRule(scene.home, {
      tool: "bash",
      match: "touch made.txt",
      decision: "allow",
      project: scene.project,
    });
    expect(saved.ok, JSON.stringify(saved)).toBe(true);
    expect(
      saveApprovalRule(scene.home, {
        tool: "bash",
        match: "git clean",
        decision: "deny",
        project: "/elsewhere",
      }).ok,
    ).toBe(true);
    const t = await repl([step("bash", "touch made.txt"), final("made it")]);
    await t.line("make the file");
    const screen = await t.waitFor(/made it/);
    expect(screen).not.toMatch(QUESTION);
    expect(fs.existsSync(path.join(scene.project, "made.txt"))).toBe(true);
    expect(
      auditEvents(scene.home)
        .filter((e) => e.kind === "approval")
        .map((e) => e.msg),
    ).toEqual(['allowed by rule tools.rules[0] (allow bash "touch made.txt"): bash touch made.txt']);
    await t.line("/status");
    // At 80 columns the rule's line wraps, continued under its column: read it joined.
    const status = (await t.waitFor(/rules\s+tools\.rules\[0\]/)).replace(/\n {2,}/g, " ");
    expect(status).toContain(
      'tools.rules[0]  allow bash "touch made.txt" (only this exact command; this project)',
    );
    expect(status).not.toContain("tools.rules[1]");
  });

  it("after a, the REPL's offer saves the rule; the next session runs the command unasked", async () => {
    let t = await repl([
      step("bash", "touch first.txt"),
      final("first"),
      step("bash", "touch first.txt"),
      final("made once more"),
    ]);
    await t.line("make the file");
    await t.waitFor(QUESTION);
    await t.type("a");
    await t.waitFor(
      // Wrapped between words at 80 columns: the offer may take two rows.
      /keep it as a rule for this project \(bash "touch first\.txt", from the next\s+session\)\? \[y\/N\] $/m,
    );
    await t.type("y");
    const saved = await t.waitFor(/saved as tools\.rules\[0\] in \S+config\.toml/);
    expect(saved).toContain("first");
    await t.line("/exit");
    await t.waitFor("[exit 0]");
    await t.close();
    const config = fs.readFileSync(path.join(scene.home, "config.toml"), "utf8");
    expect(config).toContain('match = "touch first.txt"');
    fs.rmSync(path.join(scene.project, "first.txt"));
    // The next session: the same command runs without a question.
    term = await openTerminal(["repl"], {
      ...size,
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server!.url, SCOOT_BACKEND_STREAM: "false", NO_COLOR: "1" },
    });
    t = term;
    await t.waitFor(/scoot> $/m);
    await t.line("make it again");
    const screen = await t.waitFor(/made once more/);
    expect(screen).not.toMatch(QUESTION);
    expect(fs.existsSync(path.join(scene.project, "first.txt"))).toBe(true);
  });

  it("a config file in the repository adds no rule: its command is still asked about", async () => {
    const rule = '[[tools.rules]]\ntool = "bash"\nmatch = "touch made.txt"\ndecision = "allow"\n';
    fs.mkdirSync(path.join(scene.project, ".scoot"));
    for (const name of [".scoot/config.toml", "scoot.toml", ".scoot.toml", "config.toml"])
      fs.writeFileSync(path.join(scene.project, name), rule);
    const t = await repl([step("bash", "touch made.txt"), final("made it")]);
    await t.line("/status");
    await t.waitFor(/rules\s+none/);
    await t.line("make the file");
    await t.waitFor(QUESTION);
    // Refused (and the reason, if one is asked for, skipped): the run ends before the home goes.
    await t.type("n");
    // Enter skips the reason once it is asked for (sent earlier, it could reach the question).
    await t.waitFor(/reason for the model/);
    await t.keys("Enter");
    await t.waitFor(/made it/);
    expect(fs.existsSync(path.join(scene.project, "made.txt"))).toBe(false);
    expect(auditEvents(scene.home).some((e) => e.msg.startsWith("allowed by rule"))).toBe(false);
  });
});
