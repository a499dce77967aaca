/**
 * The keyboard in a real pseudo-terminal (tmux) against the scripted server, at 120x40 and
 * 80x24 (docs/keyboard.md): keys typed during a run never answer a later question and never
 * run unseen; one key answers a question whose last line names the call; a tall diff keeps
 * the subject on screen and is shown once; hidden bytes show escaped; Ctrl-C and Esc cancel
 * cleanly; `scoot "goal"` starts with the goal.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step, stepText } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

if (!hasTmux) console.warn("keyboard-pty tests skipped: tmux is not installed (apt-get install tmux)");

const scene = useScene({ home: "scoot-keys-home-", project: "scoot-keys-project-" });
let term: Terminal | undefined;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

const final = (answer: string): ScriptItem => step("final", answer, "t");
const QUESTION = /\? \[y\/a\/n\] $/m;
const SIZES = [
  { width: 120, height: 40 },
  { width: 80, height: 24 },
];

/** The REPL (or `args`) in a terminal of `size` against a server playing `items`. */
async function open(
  items: ScriptItem[],
  size: { width: number; height: number },
  args: string[] = ["repl"],
  wait: string | RegExp | null = /scoot> $/m,
): Promise<Terminal> {
  scene.server = await startScriptedServer(items);
  term = await openTerminal(args, {
    ...size,
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, NO_COLOR: "1" },
  });
  if (wait) await term.waitFor(wait);
  return term;
}

/** What the visible screen shows now (the last `height` rows). */
async function visible(t: Terminal, height: number): Promise<string[]> {
  const rows = (await t.screen()).replace(/\n+$/, "").split("\n");
  return rows.slice(-height);
}

const settle = (ms = 400) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!hasTmux).each(SIZES)("the keyboard at $width x $height", (size) => {
  it("a y typed while thinking does not answer the later question, and is not run as a goal", async () => {
    const t = await open(
      [
        { reply: JSON.parse(stepText("file_write", { path: "a.txt", content: "a\n" })), delayMs: 1500 },
        final("ok"),
      ],
      size,
    );
    await t.line("write a");
    await t.waitFor("thinking");
    await t.type("y");
    // Echoed under the live view, not hidden.
    await t.waitFor("› y");
    await t.waitFor(QUESTION);
    await settle();
    expect(fs.existsSync(path.join(scene.project, "a.txt"))).toBe(false);
    // The y is an open line: an n typed now joins it (docs/keyboard.md "Questions answered on
    // purpose"), and Esc answers on purpose.
    await t.type("n");
    await t.waitFor("› yn▏");
    expect(fs.existsSync(path.join(scene.project, "a.txt"))).toBe(false);
    await t.keys("BSpace");
    await t.keys("Escape");
    await t.waitFor("✗ refused by you");
    await t.waitFor("ok");
    // The typed-ahead y waits on the prompt, visible and unsent.
    await t.waitFor(/scoot> y$/m);
    await settle();
    expect(scene.server!.completions()).toHaveLength(2);
    expect(JSON.stringify(scene.server!.completions().map((c) => c.body))).not.toContain('"content":"y"');
  });

  it("a goal typed and sent during a run is queued, shown, then run", async () => {
    const t = await open(
      [{ reply: JSON.parse(stepText("final", "first done")), delayMs: 1200 }, final("second done")],
      size,
    );
    await t.line("first goal");
    await t.waitFor("thinking");
    await t.line("second goal");
    await t.waitFor("(queued) second goal");
    await t.waitFor("second done");
    const screen = await t.screen();
    expect(screen).toMatch(/scoot> second goal {3}\(queued\)/);
    expect(scene.server!.completions()).toHaveLength(2);
  });

  it("y alone runs the call; the prompt line names the file; the diff is shown once", async () => {
    const t = await open(
      [step("file_write", { path: "notes.md", content: "hello\n" }), final("written")],
      size,
    );
    await t.line("write notes");
    const shown = await t.waitFor(QUESTION);
    expect(shown).toMatch(/approve file_write notes\.md \(\+1 lines?, new file\)\? \[y\/a\/n\] $/m);
    await t.type("y");
    const after = await t.waitFor("written");
    expect(after).toContain("✓ file_write notes.md");
    expect(after.match(/\+hello/g)).toHaveLength(1);
    expect(fs.readFileSync(path.join(scene.project, "notes.md"), "utf8")).toBe("hello\n");
  });

  it("a 60-line write keeps the subject on screen, its first and last lines shown", async () => {
    const content = `${Array.from({ length: 60 }, (_, i) => `row ${i + 1}`).join("\n")}\n`;
    const t = await open([step("file_write", { path: "BIG.md", content }), final("big written")], size);
    await t.line("write big");
    await t.waitFor(QUESTION);
    const rows = await visible(t, size.height);
    const text = rows.join("\n");
    expect(text).toContain("approve file_write BIG.md (+60 lines, new file)? [y/a/n]");
    expect(text).toContain("+row 1");
    expect(text).toContain("+row 60");
    if (size.height < 60) expect(text).toMatch(/┄┄ \d+ of 63 lines folded/);
    await t.type("y");
    await t.waitFor("big written");
    expect((await t.screen()).match(/\+row 60/g)).toHaveLength(1);
  });

  // `git status` itself is a known-safe command (docs/safety.md "Known-safe commands"), never asked.
  it("after a on npm test, git clean -fdx still asks", async () => {
    const t = await open(
      [
        step("bash", "npm test"),
        step("bash", "npm test -- --silent"),
        step("bash", "git clean -fdx"),
        final("cleaned?"),
      ],
      size,
    );
    await t.line("tidy up");
    const first = await t.waitFor(QUESTION);
    expect(first).toContain('a = always: every "npm test …" command, for this session');
    await t.type("a");
    // Wrapped between words at 80 columns: the offer may take two rows.
    await t.waitFor(/keep it as a rule for this project [\s\S]*\[y\/N\] $/m);
    await t.type("n");
    // `npm test -- --silent` rides on the "always"; `git clean -fdx` is asked about.
    const third = await t.waitFor(/approve bash git clean -fdx\? \[y\/a\/n\] $/m);
    expect(third).not.toContain("approve bash npm test -- --silent");
    await t.keys("Escape");
    await t.waitFor("cleaned?");
  });

  it("a refusal by a rule is marked on screen, naming the rule", async () => {
    fs.mkdirSync(scene.home, { recursive: true });
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      '[[tools.rules]]\ntool = "bash"\nmatch = "npm publish"\ndecision = "deny"\n',
    );
    const t = await open([step("bash", "npm publish"), final("not published")], size);
    await t.line("publish");
    const shown = await t.waitFor("not published");
    expect(shown).toContain("✗ refused by rule tools.rules[0]  bash  npm publish");
    expect(shown).not.toMatch(QUESTION);
  });

  it("a write holding a NUL shows \\x00 and a warning", async () => {
    const content = "#!/bin/sh\nprintf 'a\u0000b'\n";
    const t = await open([step("file_write", { path: "run.sh", content }), final("done")], size);
    await t.line("write the script");
    const shown = await t.waitFor(QUESTION);
    expect(shown).toContain("+printf 'a\\x00b'");
    expect(shown).toContain("⚠ this holds 1 NUL byte");
    await t.keys("Escape");
    await t.waitFor("✗ refused by you");
    await t.waitFor("done");
    expect(fs.existsSync(path.join(scene.project, "run.sh"))).toBe(false);
  });

  it("Ctrl-C during a streamed answer: nothing prints after the cancel line, the spinner is gone", async () => {
    const answer = `${"word ".repeat(40)}END-OF-ANSWER`;
    const text = stepText("final", answer);
    const pieces = Array.from({ length: 40 }, (_, i) =>
      text.slice((i * text.length) / 40, ((i + 1) * text.length) / 40),
    );
    const t = await open([{ stream: pieces, pauseMs: 150 }], size, ["repl"]);
    await t.line("answer slowly");
    await t.waitFor(/word word/);
    await t.keys("C-c");
    const at = await t.waitFor(/scoot: cancelled \(Ctrl-C\): stopped the answer while it streamed/);
    await t.waitFor(/scoot> $/m);
    await settle(1500);
    const screen = await t.screen();
    const tail = screen.slice(screen.indexOf("scoot: cancelled"));
    expect(tail).not.toContain("word");
    expect(screen).not.toContain("END-OF-ANSWER");
    expect(at).toContain("[interrupted]");
    expect(screen).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    // The transcript keeps what streamed, marked.
    const dir = path.join(scene.home, "state", "sessions");
    const transcript = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => fs.readFileSync(path.join(dir, f), "utf8"))
      .join("");
    expect(transcript).toMatch(/word word[^"]*\[interrupted\]/);
  });

  it("after /undo the next request carries a note naming the restored file", async () => {
    fs.writeFileSync(path.join(scene.project, "calc.py"), "x = 1\n");
    const t = await open(
      [step("file_edit", { path: "calc.py", old: "x = 1", new: "x = 2" }), final("edited"), final("noted")],
      size,
    );
    await t.line("edit calc");
    await t.waitFor(QUESTION);
    await t.type("y");
    await t.waitFor("edited");
    await t.waitFor(/scoot> $/m);
    await t.line("/undo");
    await t.waitFor(/restored calc\.py/);
    expect(fs.readFileSync(path.join(scene.project, "calc.py"), "utf8")).toBe("x = 1\n");
    await t.line("what now");
    await t.waitFor("noted");
    const third = scene.server!.completions()[2]!.body as { messages: { content: string }[] };
    expect(third.messages.map((m) => m.content).join("\n")).toMatch(
      /the user ran \/undo.*Restored.*calc\.py/s,
    );
  });

  it("-e: Ctrl-C during a streamed answer prints nothing of it after the interrupt line", async () => {
    const answer = `${"word ".repeat(40)}END-OF-ANSWER`;
    const text = stepText("final", answer);
    const pieces = Array.from({ length: 40 }, (_, i) =>
      text.slice((i * text.length) / 40, ((i + 1) * text.length) / 40),
    );
    const t = await open([{ stream: pieces, pauseMs: 150 }], size, ["-e", "answer slowly"], null);
    await t.waitFor(/word word/);
    await t.keys("C-c");
    await t.waitFor(/scoot: interrupted: stopped the answer while it streamed after \d+\.\ds/);
    const screen = await t.waitFor("[exit 130]");
    const tail = screen.slice(screen.indexOf("scoot: interrupted"));
    expect(tail).not.toContain("word");
    expect(screen).toContain("[interrupted]");
    expect(screen).not.toContain("END-OF-ANSWER");
  });

  it("Esc cancels a running command like Ctrl-C, and one line says what was stopped", async () => {
    const t = await open([step("bash", "sleep 30"), final("never")], size, [
      "repl",
      "--policy",
      "unrestricted",
    ]);
    await t.line("sleep");
    await t.waitFor(QUESTION);
    await t.type("y");
    await t.waitFor("running bash");
    await t.keys("Escape");
    const screen = await t.waitFor(/scoot: cancelled \(Esc\): stopped bash sleep 30 after \d+\.\ds/);
    await t.waitFor(/scoot> $/m);
    expect(screen).not.toContain("never");
  });

  it('scoot "goal" starts the REPL with that goal and answers it', async () => {
    const t = await open([final("answered at once")], size, ["say hello"], null);
    const shown = await t.waitFor("answered at once");
    expect(shown).toContain("scoot> say hello");
    await t.waitFor(/scoot> $/m);
    expect(scene.server!.completions()).toHaveLength(1);
  });

  it("Ctrl-D leaves with the exit line on a line of its own", async () => {
    const t = await open([final("hi")], size);
    await t.line("hello");
    await t.waitFor("hi");
    await t.waitFor(/scoot> $/m);
    await t.keys("C-d");
    const screen = await t.waitFor("[exit 0]");
    expect(screen).toMatch(/^scoot> \nresume with: scoot --resume repl-\S+$/m);
  });

  it("scoot -e --help prints help and sends nothing", async () => {
    const t = await open([final("must not be asked")], size, ["-e", "--help"], null);
    await t.waitFor("[exit 0]");
    expect(await t.screen()).toContain("Usage: scoot");
    expect(scene.server!.completions()).toHaveLength(0);
  });
});
