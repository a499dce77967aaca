/**
 * Plan mode in the REPL, in a real pseudo-terminal (tmux) against the scripted server, at
 * 120x40 and 80x24 (docs/keyboard.md "Plan mode"): `/plan` shows the numbered plan and one key
 * decides; `e` sends typed feedback in a second planning request and the new plan is shown;
 * `y` runs it with the plan beside the goal and the checklist marks a step done; `n` drops it
 * and nothing runs; with `agent.plan_binding = "strict"` the run is narrowed to the plan.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step, stepText } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

if (!hasTmux) console.warn("plan-repl tests skipped: tmux is not installed (apt-get install tmux)");

const scene = useScene({ home: "scoot-planrepl-home-", project: "scoot-planrepl-project-" });
let term: Terminal | undefined;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

const SIZES = [
  { width: 120, height: 40 },
  { width: 80, height: 24 },
];
const REVIEW = /run this plan \(\d+ steps?\)\? \[y\/n\/e\] $/m;
const APPROVE = /\? \[y\/a\/n\] $/m;

const FIRST = { steps: [{ title: "Write the notes", files: ["NOTES.md"] }] };
const SECOND = {
  steps: [
    { title: "Write the notes", files: ["NOTES.md"] },
    { title: "Add a README", files: ["README.md"] },
  ],
};

/** A model step carrying the plan progress keys beside its own. */
function progressing(action: string, input: unknown, planStep: number, status: string): ScriptItem {
  return { reply: { ...JSON.parse(stepText(action, input)), plan_step: planStep, plan_status: status } };
}

async function open(items: ScriptItem[], size: { width: number; height: number }, args = ["repl"]) {
  scene.server = await startScriptedServer(items);
  term = await openTerminal(args, {
    ...size,
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, NO_COLOR: "1" },
  });
  // In plan mode (`--plan`) the prompt says so.
  await term.waitFor(/scoot(?: \(plan\))?> $/m);
  return term;
}

function bodies(): string[] {
  return scene.server!.completions().map((c) => JSON.stringify(c.body));
}

function auditMessages(kind: string): string[] {
  return auditEvents(scene.home)
    .filter((e) => e.kind === kind)
    .map((e) => e.msg);
}

describe.skipIf(!hasTmux).each(SIZES)("plan mode in the REPL at $width x $height", (size) => {
  it("/plan shows the plan; e sends feedback for a second plan; y runs it; the checklist marks a step done", async () => {
    const t = await open(
      [
        step("plan", FIRST),
        step("plan", SECOND),
        progressing("file_write", { path: "NOTES.md", content: "notes\n" }, 1, "done"),
        progressing("file_write", { path: "README.md", content: "readme\n" }, 2, "done"),
        step("final", "notes and readme written"),
      ],
      size,
    );
    await t.line("/plan add notes");
    let shown = await t.waitFor(REVIEW);
    expect(shown).toContain("1. Write the notes");
    expect(shown).toMatch(/run this plan \(1 step\)\? \[y\/n\/e\] $/m);
    // The planning request offered the plan action; nothing has been written yet.
    expect(bodies()[0]).toContain('"plan"');
    expect(fs.existsSync(path.join(scene.project, "NOTES.md"))).toBe(false);

    await t.type("e");
    await t.waitFor("feedback for a new plan (Enter sends, Esc goes back): ");
    await t.type("also add a README");
    await t.keys("Enter");
    shown = await t.waitFor(/run this plan \(2 steps\)\? \[y\/n\/e\] $/m);
    expect(shown).toContain("2. Add a README");
    // The second planning request carries the person's feedback.
    expect(bodies()).toHaveLength(2);
    expect(bodies()[1]).toContain("also add a README");

    await t.type("y");
    await t.waitFor(APPROVE);
    await t.type("y");
    await t.waitFor("[x] 1 Write the notes");
    await t.waitFor(APPROVE);
    await t.type("y");
    const end = await t.waitFor("notes and readme written");
    expect(end).toContain("[x] 2 Add a README");
    await t.waitFor(/plan: 2 of 2 steps done/);
    expect(fs.readFileSync(path.join(scene.project, "NOTES.md"), "utf8")).toBe("notes\n");
    // The run was given the approved plan beside the goal.
    const run = bodies()[2]!;
    expect(run).toContain("carries out an approved plan");
    expect(run).toContain("Add a README");
    const approved = auditMessages("approval").find((m) => m.startsWith("plan approved"));
    expect(approved).toMatch(/^plan approved sha256=[0-9a-f]{64} steps=2 by=user via=repl binding=off$/);
    // The plan approved is the plan shown: the hash on the screen begins the audited one.
    const shownHash = /● plan · 2 steps · sha256 ([0-9a-f]{12})/.exec(await t.screen())?.[1];
    expect(shownHash).toBeDefined();
    expect(approved).toContain(`sha256=${shownHash}`);
    expect(auditMessages("approval")).toContainEqual(expect.stringMatching(/^plan revision asked sha256=/));
    expect(auditMessages("plan")).toEqual(expect.arrayContaining(["step 1 done", "step 2 done"]));
  });

  it("a y typed while the plan is being made does not approve it", async () => {
    const t = await open(
      [{ reply: JSON.parse(stepText("plan", FIRST)), delayMs: 1500 }, step("final", "never asked for")],
      size,
    );
    await t.line("/plan add notes");
    await t.waitFor("thinking");
    await t.type("y");
    await t.waitFor("› y");
    await t.waitFor(REVIEW);
    await new Promise((r) => setTimeout(r, 400));
    // Still asking: the typed-ahead y answered nothing, and no run of the plan began.
    expect(bodies()).toHaveLength(1);
    expect(auditMessages("approval")).toEqual([]);
    // With a line open, keys go on into it (docs/keyboard.md "Questions answered on purpose"):
    // an n typed now joins the y; Esc answers the review on purpose.
    await t.type("n");
    await t.waitFor("› yn▏");
    expect(bodies()).toHaveLength(1);
    await t.keys("BSpace");
    await t.keys("Escape");
    await t.waitFor("✗ dropped this plan");
    await t.waitFor(/scoot> y$/m);
    expect(bodies()).toHaveLength(1);
  });

  it("n drops the plan: nothing runs, and the next goal's request says it was dropped", async () => {
    const t = await open([step("plan", FIRST), step("final", "answered after the drop")], size);
    await t.line("/plan add notes");
    await t.waitFor(REVIEW);
    await t.type("n");
    await t.waitFor("✗ dropped this plan (1 step): nothing of it was run");
    await t.waitFor(/scoot> $/m);
    expect(bodies()).toHaveLength(1);
    expect(fs.existsSync(path.join(scene.project, "NOTES.md"))).toBe(false);
    await t.line("what now");
    await t.waitFor("answered after the drop");
    expect(bodies()[1]).toContain("the plan above was not run: the user dropped it");
    expect(auditMessages("approval")).toContainEqual(
      expect.stringMatching(/^plan not run sha256=[0-9a-f]{64} steps=1 via=repl: the user dropped it$/),
    );
  });
});

describe.skipIf(!hasTmux)("plan mode started with --plan, bound by agent.plan_binding", () => {
  it("every goal is planned; a strict binding denies a write the plan does not name", async () => {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      '[agent]\nplan_binding = "strict"\n[tools]\napproval = "never"\npolicy = "guarded"\n',
    );
    const t = await open(
      [
        step("plan", FIRST),
        step("file_write", { path: "OTHER.md", content: "x\n" }),
        step("final", "could not write OTHER.md"),
      ],
      SIZES[1]!,
      ["--plan"],
    );
    const banner = await t.screen();
    expect(banner).toContain("plan mode");
    expect(banner).toMatch(/^scoot \(plan\)> $/m);
    await t.line("add notes");
    await t.waitFor(REVIEW);
    await t.type("y");
    const end = await t.waitFor("could not write OTHER.md");
    expect(end).toContain("not in the approved plan");
    expect(fs.existsSync(path.join(scene.project, "OTHER.md"))).toBe(false);
    expect(auditMessages("approval")).toContainEqual(expect.stringMatching(/via=repl binding=strict$/));
  });
});

describe("plan mode without a person at a terminal", () => {
  it("piped /plan prints the plan and runs nothing: nobody can approve it", async () => {
    scene.server = await startScriptedServer([step("plan", FIRST), step("final", "never asked for")]);
    const r = await runCli(["repl"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
      input: "/plan add notes\n",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("1. Write the notes\n   files: NOTES.md\n");
    expect(r.stderr).toContain("scoot: the plan is not run: no terminal to approve it on");
    expect(bodies()).toHaveLength(1);
    // On the security record as an editor's unapproved plan is (one plan loop for both).
    expect(auditMessages("approval")).toEqual([
      expect.stringMatching(
        /^plan not run sha256=[0-9a-f]{64} steps=1 via=repl: nobody can approve it here \(no terminal\)$/,
      ),
    ]);
  });
});

describe.skipIf(!hasTmux)("-e --execute-plan on a terminal", () => {
  it("draws the checklist and marks the step the model reports done, at 80x24", async () => {
    fs.writeFileSync(path.join(scene.project, "plan.json"), JSON.stringify({ plan: FIRST }));
    scene.server = await startScriptedServer([
      progressing("file_write", { path: "NOTES.md", content: "notes\n" }, 1, "done"),
      step("final", "the notes are written"),
    ]);
    term = await openTerminal(["--execute-plan", "plan.json", "-e", "add notes"], {
      ...SIZES[1]!,
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, NO_COLOR: "1" },
    });
    const shown = await term.waitFor("plan: 1 of 1 step done");
    expect(shown).toMatch(/plan · 1 step · sha256 [0-9a-f]{12}\n {2}\[ \] 1 Write the notes/);
    expect(shown).toContain("  [x] 1 Write the notes");
    expect(shown).toContain("the notes are written");
  });

  it("a step with plan_step and no plan_status runs and shows that step in progress", async () => {
    fs.writeFileSync(path.join(scene.project, "plan.json"), JSON.stringify({ plan: FIRST }));
    scene.server = await startScriptedServer([
      {
        reply: {
          ...JSON.parse(stepText("file_write", { path: "NOTES.md", content: "notes\n" })),
          plan_step: 1,
        },
      },
      step("final", "the notes are written"),
    ]);
    term = await openTerminal(["--execute-plan", "plan.json", "-e", "add notes"], {
      ...SIZES[1]!,
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, NO_COLOR: "1" },
    });
    const shown = await term.waitFor("plan: 0 of 1 step done");
    expect(shown).toContain("  [>] 1 Write the notes");
    expect(shown).toContain("the notes are written");
    expect(fs.readFileSync(path.join(scene.project, "NOTES.md"), "utf8")).toBe("notes\n");
    // The step was taken as it came: the next request carried its observation, not a correction.
    expect(bodies()).toHaveLength(2);
    expect(bodies()[1]).not.toContain("not a valid step");
  });
});
