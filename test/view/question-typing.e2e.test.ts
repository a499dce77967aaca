/**
 * A question is answered only on purpose, at a real terminal (docs/keyboard.md "Questions
 * answered on purpose"): the REPL in tmux at 120x40 and 80x24 against the scripted server, a
 * person typing the next goal at 8 keys a second while the model works. The question appears
 * mid-word (the server holds its reply), the keys go on into the typed-ahead line shown on the
 * question's prompt line, nothing is answered and nothing runs until the person answers on
 * purpose; `yes`⏎ answers and queues nothing; a paste never answers.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

if (!hasTmux) console.warn("question-typing tests skipped: tmux is not installed (apt-get install tmux)");

const scene = useScene({ home: "scoot-qtype-home-", project: "scoot-qtype-project-" });
let term: Terminal | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

const SIZES = [
  { width: 120, height: 40 },
  { width: 80, height: 24 },
];
/** 8 keys a second. */
const KEY_MS = 125;
/** The model's first reply comes this long after the goal: the question appears while typing. */
const HELD_MS = 700;
const QUESTION = /\[y\/a\/n\] /;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function repl(items: ScriptItem[], size: { width: number; height: number }): Promise<Terminal> {
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

/** Types `text` one key at a time, at a person's speed. */
async function typeSlowly(t: Terminal, text: string): Promise<void> {
  for (const ch of text) {
    await t.type(ch);
    await pause(KEY_MS);
  }
}

const held = (item: ScriptItem): ScriptItem => ({ ...(item as object), delayMs: HELD_MS }) as ScriptItem;
const answers = () =>
  auditEvents(scene.home, { missingOk: true })
    .filter((e) => e.kind === "approval")
    .map((e) => String(e.msg));
/** Every user message the model was sent, by request. */
const goalsSent = () =>
  scene
    .server!.completions()
    .map((c) =>
      (c.body as { messages: { role: string; content: string }[] }).messages
        .filter((m) => m.role === "user")
        .map((m) => m.content),
    );

describe.skipIf(!hasTmux)("typing across a question", () => {
  for (const size of SIZES) {
    const at = `${size.width}x${size.height}`;

    it(`${at}: a write asked mid-word — "summarise" and "linter" answer nothing; the line is queued intact`, async () => {
      const t = await repl(
        [
          held(step("file_write", { path: "NOTES.md", content: "notes\n" })),
          step("final", "left it"),
          step("final", "summary done"),
        ],
        size,
      );
      await t.line("update the notes");
      const next = "summarise the linter output";
      await typeSlowly(t, next);
      const shown = await t.waitFor(QUESTION);
      if (process.env.DEBUG_Q) console.log(shown);
      // The question is open, unanswered, and the line typed so far shows on its prompt line.
      expect(shown).toMatch(/linter output▏/);
      expect(shown).toContain("Enter queues it");
      expect(answers().filter((a) => a.startsWith("answer="))).toEqual([]);
      expect(fs.existsSync(path.join(scene.project, "NOTES.md"))).toBe(false);
      // Enter queues the line; then a deliberate n refuses (its reason skipped with Enter).
      await t.keys("Enter");
      await pause(800);
      await t.type("n");
      await t.waitFor(/reason for the model/);
      await t.keys("Enter");
      await t.waitFor("summary done");
      expect(answers()).toContain('answer=refuse: file_write {"path":"NOTES.md","content":"notes\\n"}');
      expect(fs.existsSync(path.join(scene.project, "NOTES.md"))).toBe(false);
      // The queued goal reached the model whole, as the next goal.
      expect(goalsSent().at(-1)?.at(-1)).toBe(next);
    }, 60_000);

    it(`${at}: a bash command asked while typing; yes⏎ answers it and queues nothing`, async () => {
      const t = await repl([held(step("bash", "echo ran > ran.txt")), step("final", "ran it")], size);
      await t.line("run the script");
      await typeSlowly(t, "any");
      await t.waitFor(QUESTION);
      // Clear the line typed ahead, wait, then answer with a word.
      await t.keys("C-u");
      await pause(800);
      await typeSlowly(t, "yes");
      await t.keys("Enter");
      await t.waitFor("ran it");
      expect(fs.readFileSync(path.join(scene.project, "ran.txt"), "utf8")).toBe("ran\n");
      expect(answers().some((a) => a.startsWith("answer=once: bash"))).toBe(true);
      if (process.env.DEBUG_Q) console.log(JSON.stringify(goalsSent()), await t.screen());
      // Nothing more reached the model: one goal, two requests (the step and the answer).
      expect(scene.server!.completions()).toHaveLength(2);
      await pause(300);
      expect(await t.screen()).not.toMatch(/\(queued\)/);
    }, 60_000);

    it(`${at}: an edit asked, then a paste — the paste answers nothing and stays a line`, async () => {
      fs.writeFileSync(path.join(scene.project, "calc.py"), "return a - b\n");
      const t = await repl(
        [held(step("file_edit", { path: "calc.py", old: "a - b", new: "a + b" })), step("final", "fixed")],
        size,
      );
      await t.line("fix calc");
      await t.waitFor(QUESTION);
      await pause(800);
      await t.paste("yes always n");
      await pause(400);
      const shown = await t.screen();
      expect(shown).toContain("yes always n▏");
      expect(answers().filter((a) => a.startsWith("answer="))).toEqual([]);
      expect(fs.readFileSync(path.join(scene.project, "calc.py"), "utf8")).toBe("return a - b\n");
      // The person clears it and answers on purpose.
      await t.keys("C-u");
      await pause(800);
      await t.type("y");
      await t.waitFor("fixed");
      expect(fs.readFileSync(path.join(scene.project, "calc.py"), "utf8")).toBe("return a + b\n");
    }, 60_000);
  }
});

describe.skipIf(!hasTmux)("the typed-ahead line and Esc", () => {
  it("80x24: a line wider than the screen keeps its end in view; Esc puts the queued goal back in the input", async () => {
    const t = await repl([{ hang: true }], { width: 80, height: 24 });
    await t.line("wait for me");
    await t.waitFor(/thinking/);
    const long = `queued goal ${"x".repeat(20)}`;
    await t.type(long);
    await t.keys("Enter");
    await t.waitFor("(queued)");
    const wide = `start ${"y".repeat(100)} THE-END`;
    await t.type(wide);
    const shown = await t.waitFor("THE-END▏");
    expect(shown).toMatch(/› …y+ THE-END▏/);
    for (const row of shown.split("\n")) expect(row.length).toBeLessThanOrEqual(80);
    await t.keys("C-u");
    await t.keys("Escape");
    // The queued goal did not start: it waits in the input, editable.
    const back = await t.waitFor(/scoot> queued goal x+$/m);
    expect(back).not.toMatch(/\(queued\)\s*$/m);
    expect(scene.server!.completions()).toHaveLength(1);
  }, 30_000);
});
