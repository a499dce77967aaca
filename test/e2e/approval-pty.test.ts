/**
 * Approval and /undo at a real terminal (docs/safety.md "Approval", "Undo"): the REPL runs in a tmux
 * pseudo-terminal against the scripted server; the test types the person's answers.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

if (!hasTmux) console.warn("approval-pty tests skipped: tmux is not installed (apt-get install tmux)");

const scene = useScene({ home: "scoot-approval-home-", project: "scoot-approval-project-" });
let term: Terminal | undefined;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

const final = (answer: string): ScriptItem => step("final", answer, "t");

async function repl(items: ScriptItem[], args: string[] = []): Promise<Terminal> {
  scene.server = await startScriptedServer(items);
  term = await openTerminal(["repl", ...args], {
    width: 200,
    height: 50,
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_STREAM: "false", NO_COLOR: "1" },
  });
  await term.waitFor(/scoot> $/m);
  return term;
}

const QUESTION = /\? \[y\/a\/n\] $/m;

describe.skipIf(!hasTmux)("approval at the keyboard", () => {
  it("n leaves the file untouched and the model's next request carries the refusal and its reason", async () => {
    fs.writeFileSync(path.join(scene.project, "calc.py"), "def add(a, b):\n    return a - b\n");
    const t = await repl([
      step("file_edit", { path: "calc.py", old: "return a - b", new: "return a + b" }),
      final("left it alone"),
    ]);
    await t.line("fix calc");
    const shown = await t.waitFor(QUESTION);
    // The diff of the change, before it is made.
    expect(shown).toContain("file_edit calc.py");
    expect(shown).toContain("-    return a - b");
    expect(shown).toContain("+    return a + b");
    await t.type("n");
    await t.waitFor(/reason for the model/);
    await t.line("tests are frozen today");
    await t.waitFor(/left it alone/);
    expect(fs.readFileSync(path.join(scene.project, "calc.py"), "utf8")).toBe(
      "def add(a, b):\n    return a - b\n",
    );
    const second = JSON.stringify(scene.server!.completions()[1]!.body);
    expect(second).toContain("the user refused this file_edit call");
    expect(second).toContain("tests are frozen today");
    const approvals = auditEvents(scene.home).filter((e) => e.kind === "approval");
    expect(approvals.map((e) => e.msg.split(":")[0])).toEqual(["asked", "answer=refuse"]);
    expect(approvals[1]!.msg).toContain("tests are frozen today");
    expect(auditEvents(scene.home).some((e) => e.kind === "tool_call")).toBe(false);
  });

  it("a script with a NUL byte is shown as the text it is, and what is written is what was shown", async () => {
    const content = "#!/bin/sh\nrm -rf ./build\nprintf 'a\u0000b'\n";
    const t = await repl([step("file_write", { path: "run.sh", content }), final("written")]);
    await t.line("write the script");
    const shown = await t.waitFor(QUESTION);
    expect(shown).toContain("file_write run.sh");
    expect(shown).not.toContain("binary content");
    expect(shown).toContain("+rm -rf ./build");
    await t.type("y");
    await t.waitFor(/written/);
    expect(fs.readFileSync(path.join(scene.project, "run.sh"), "utf8")).toBe(content);
  });

  it("y runs the call once, and the next call of the same tool asks again", async () => {
    const t = await repl([
      step("file_write", { path: "notes.txt", content: "first\n" }),
      step("file_write", { path: "notes.txt", content: "second\n" }),
      final("wrote twice"),
    ]);
    await t.line("write notes");
    let shown = await t.waitFor(QUESTION);
    expect(shown).toContain("--- /dev/null");
    expect(shown).toContain("+first");
    await t.type("y");
    shown = await t.waitFor(/-first[\s\S]*\+second[\s\S]*\? \[y\/a\/n\] $/m);
    expect(fs.readFileSync(path.join(scene.project, "notes.txt"), "utf8")).toBe("first\n");
    await t.type("y");
    await t.waitFor(/wrote twice/);
    expect(fs.readFileSync(path.join(scene.project, "notes.txt"), "utf8")).toBe("second\n");
    const kinds = auditEvents(scene.home)
      .filter((e) => e.kind === "approval" || e.kind === "tool_call")
      .map((e) => `${e.kind} ${e.msg.split(":")[0]}`);
    expect(kinds).toEqual([
      "approval asked",
      "approval answer=once",
      'tool_call file_write {"path"',
      "approval asked",
      "approval answer=once",
      'tool_call file_write {"path"',
    ]);
  });

  it("a stops asking for that command's scope, but a compound command riding on it is asked again", async () => {
    const t = await repl([
      step("bash", "echo one"),
      step("bash", "echo one two"),
      step("bash", "echo three; touch pwned"),
      final("echoed"),
    ]);
    await t.line("echo things");
    const first = await t.waitFor(QUESTION);
    expect(first).toContain("bash echo one");
    expect(first).toContain('every "echo one …" command');
    await t.type("a");
    // The offer to keep it as a rule for this project: not this time.
    await t.waitFor(
      /keep it as a rule for this project \(bash "echo one", from the next session\)\? \[y\/N\] $/m,
    );
    await t.type("n");
    // `echo one two` runs without a question; the compound command is asked about.
    const third = await t.waitFor(/echo three; touch pwned[\s\S]*\? \[y\/a\/n\] $/m);
    expect(third).toContain("✓ bash echo one · always");
    expect(third).not.toContain("echo one two?");
    expect(third.match(/\? \[y\/a\/n\] /g)).toHaveLength(1);
    await t.type("n");
    await t.waitFor(/reason for the model/);
    await t.line("");
    await t.waitFor(/echoed/);
    expect(fs.existsSync(path.join(scene.project, "pwned"))).toBe(false);
    const approvals = auditEvents(scene.home)
      .filter((e) => e.kind === "approval")
      .map((e) => e.msg);
    expect(approvals).toEqual([
      "asked: bash echo one",
      "answer=always (bash:echo one): bash echo one",
      'allowed by an earlier "always" (bash:echo one): bash echo one two',
      "asked: bash echo three; touch pwned",
      "answer=refuse: bash echo three; touch pwned",
    ]);
  });

  it("/undo restores the file the last goal changed, and /diff showed the change", async () => {
    fs.writeFileSync(path.join(scene.project, "calc.py"), "x = 1\n");
    const t = await repl(
      [step("file_edit", { path: "calc.py", old: "x = 1", new: "x = 2" }), final("edited")],
      ["--approval", "never"],
    );
    await t.line("edit calc");
    await t.waitFor(/edited/);
    expect(fs.readFileSync(path.join(scene.project, "calc.py"), "utf8")).toBe("x = 2\n");
    let from = (await t.screen()).length;
    await t.line("/diff");
    await t.waitFor(/-x = 1\n\+x = 2/, 10_000, from);
    from = (await t.screen()).length;
    await t.line("/undo");
    const after = await t.waitFor(/restored calc\.py[\s\S]*bash commands are not reverted/, 10_000, from);
    expect(after).not.toMatch(QUESTION);
    expect(fs.readFileSync(path.join(scene.project, "calc.py"), "utf8")).toBe("x = 1\n");
    // Only one goal reached the model: /undo and /diff are not goals.
    expect(scene.server!.completions()).toHaveLength(2);
  });
});
