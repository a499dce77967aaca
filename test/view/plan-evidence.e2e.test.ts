/**
 * The checklist shows a step done only with evidence (docs/safety.md "Plan mode"), at 80x24 in a
 * real pseudo-terminal: `scoot --execute-plan plan.json -e …` against the scripted server, where
 * the model says every step is done. A step whose only call was denied, one whose command exited
 * 1 and one whose call only read what it names stay claimed (`[?]`); the step whose file was
 * written is done; the closing line says so; the audit keeps each claim and its evidence apart.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step, stepText } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

if (!hasTmux) console.warn("plan-evidence tests skipped: tmux is not installed (apt-get install tmux)");

const scene = useScene({ home: "scoot-evidence-home-", project: "scoot-evidence-project-" });
let term: Terminal | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

const PLAN = {
  steps: [
    { title: "Write the notes", files: ["NOTES.md"] },
    { title: "Run the check", commands: ["sh check.sh"] },
    { title: "Update the config", files: ["config.txt"] },
    { title: "Write the summary", files: ["SUMMARY.md"] },
  ],
};

function claiming(action: string, input: unknown, planStep: number): ScriptItem {
  return { reply: { ...JSON.parse(stepText(action, input)), plan_step: planStep, plan_status: "done" } };
}

describe.skipIf(!hasTmux)("progress from evidence, at 80x24", () => {
  it("denied, failed and read-only steps stay claimed; the written one is done; the closing line is true", async () => {
    fs.writeFileSync(path.join(scene.project, "plan.json"), JSON.stringify({ plan: PLAN }));
    fs.writeFileSync(path.join(scene.project, "check.sh"), "echo checking; exit 1\n");
    fs.writeFileSync(path.join(scene.project, "config.txt"), "level = 1\n");
    scene.server = await startScriptedServer([
      // Not a file the plan names: the binding plan denies it.
      claiming("file_write", { path: "OTHER.md", content: "notes\n" }, 1),
      claiming("bash", "sh check.sh", 2),
      claiming("file_read", { path: "config.txt" }, 3),
      claiming("file_write", { path: "SUMMARY.md", content: "summary\n" }, 4),
      step("final", "all four steps are done"),
    ]);
    term = await openTerminal(["--execute-plan", "plan.json", "-e", "carry out the plan"], {
      width: 80,
      height: 24,
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, NO_COLOR: "1" },
    });
    const shown = await term.waitFor("plan: 1 of 4 steps done, 3 claimed without evidence");
    expect(shown).toContain("[?] 1 Write the notes (claimed, no evidence)");
    expect(shown).toContain("[?] 2 Run the check (claimed, no evidence)");
    expect(shown).toContain("[?] 3 Update the config (claimed, no evidence)");
    expect(shown).toContain("[x] 4 Write the summary");
    expect(shown).not.toContain("[x] 1");
    expect(fs.existsSync(path.join(scene.project, "OTHER.md"))).toBe(false);
    expect(fs.readFileSync(path.join(scene.project, "SUMMARY.md"), "utf8")).toBe("summary\n");
    // Nothing on screen is wider than the terminal.
    for (const line of shown.split("\n")) expect(line.length).toBeLessThanOrEqual(80);

    const plan = auditEvents(scene.home)
      .filter((e) => e.kind === "plan")
      .map((e) => String(e.msg));
    expect(plan).toEqual([
      "step 1 evidence: file_write denied: not evidence",
      "step 1 done (claimed without evidence)",
      "step 2 evidence: bash exited 1: not evidence",
      "step 2 done (claimed without evidence)",
      "step 3 evidence: file_read succeeded but touched nothing step 3 names: not evidence",
      "step 3 done (claimed without evidence)",
      "step 4 evidence: file_write succeeded and wrote SUMMARY.md, which the step names",
      "step 4 done",
    ]);
  });
});
