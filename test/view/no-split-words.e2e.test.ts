/**
 * No word cut at the edge of an 80×24 terminal (docs/keyboard.md "Lines on a terminal"): the
 * built CLI in tmux, each screen the docs show that a run reaches without a model or with the
 * scripted server — help, `sessions list` with long goals (the table fits instead), a
 * configuration error, `doctor`, `setup`, the REPL's commands and its plan review — scanned row
 * by row for a word the terminal's own wrap split (test/helpers/word-split.ts). Each screen's
 * text is first shown to be wider than the terminal when piped, so the scan has lines to catch.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { textWidth } from "../../src/cli/view/width.js";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";
import { splitWords } from "../helpers/word-split.js";

const WIDTH = 80;
const HEIGHT = 24;

const scene = useScene({ home: "scoot-scan-home-", project: "scoot-scan-project-", model: true });
let term: Terminal | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

const env = () => ({ SCOOT_BACKEND_BASE_URL: scene.model.url, NO_COLOR: "1" });

async function open(args: string[]): Promise<Terminal> {
  term = await openTerminal(args, {
    width: WIDTH,
    height: HEIGHT,
    home: scene.home,
    cwd: scene.project,
    env: env(),
  });
  return term;
}

/** The rows of the screen and its scroll-back, with no word cut at the edge. */
async function scanned(t: Terminal, what: string): Promise<string[]> {
  const rows = await t.rows();
  expect(splitWords(rows, WIDTH), `${what}: a word cut at the edge of\n${rows.join("\n")}`).toEqual([]);
  return rows;
}

function widest(text: string): number {
  return Math.max(...text.split("\n").map(textWidth));
}

/** The same command piped: its lines are wider than the terminal, so the screen had to wrap them. */
async function widerThanTheScreen(args: string[]): Promise<void> {
  const piped = await runCli(args, { home: scene.home, cwd: scene.project, env: env() });
  expect(widest(`${piped.stdout}\n${piped.stderr}`)).toBeGreaterThan(WIDTH);
}

const LONG_GOALS = [
  "find every place in the calculator module where a division by zero is not handled and add a test for each one",
  "rename the configuration loader so that its name says what it does, and update every import across the project",
  "explain why the integration tests take four minutes on the build server and two on a laptop, with numbers",
];

describe.skipIf(!hasTmux)(`lines at ${WIDTH} x ${HEIGHT}`, () => {
  it.each([[["--help"]], [["help", "audit"]], [["sessions", "--help"]]])("help: scoot %j", async (args) => {
    await widerThanTheScreen(args);
    const t = await open(args);
    await t.waitFor("[exit 0]");
    await scanned(t, args.join(" "));
  });

  it("sessions list with long goals fits the width; --all too", async () => {
    for (const goal of LONG_GOALS) {
      scene.model.push(step("final", "done"));
      const r = await runCli(["-e", goal], { home: scene.home, cwd: scene.project, env: env() });
      expect(r.code, r.stderr).toBe(0);
    }
    await widerThanTheScreen(["sessions", "list"]);
    for (const args of [
      ["sessions", "list"],
      ["sessions", "list", "--all"],
    ]) {
      const t = await open(args);
      const screen = await t.waitFor("[exit 0]");
      const rows = await scanned(t, args.join(" "));
      // A table does not wrap: one row per session, each within the width, the goal cut.
      const table = rows.filter((r) => /^\d\s/.test(r) || r.startsWith("#"));
      expect(table).toHaveLength(LONG_GOALS.length + 1);
      for (const r of table) expect(textWidth(r), r).toBeLessThan(WIDTH);
      expect(table[0]).toMatch(/first goal$/);
      expect(screen).toMatch(/ {2}explain why the [^\n]*…\n/);
      await t.close();
    }
  });

  it("a configuration error", async () => {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      '[agent]\nmax_turns = "many"\n\n[backend]\nbase_url = 5\n\n[[tools.rules]]\ntool = "bash"\n',
    );
    await widerThanTheScreen(["sessions", "list"]);
    const t = await open(["sessions", "list"]);
    const screen = await t.waitFor("[exit 2]");
    expect(screen).toContain("configuration error");
    await scanned(t, "configuration error");
  });

  it("doctor, with the scripted server as its backend", async () => {
    await widerThanTheScreen(["doctor"]);
    const t = await open(["doctor"]);
    const screen = await t.waitFor(/\[exit \d\]/);
    expect(screen).toMatch(/^\w+ +backend +http:\/\/127\.0\.0\.1/m);
    await scanned(t, "doctor");
  });

  it("setup's questions, notes and result", async () => {
    const t = await open(["setup"]);
    await t.waitFor("base URL");
    await t.line(scene.model.url);
    for (const question of ["Wire API", "Model name", "Token source", "Tool policy", "Write "]) {
      await t.waitFor(question);
      await t.keys("Enter");
    }
    const screen = await t.waitFor("[exit 0]");
    expect(screen).toContain("next: scoot doctor");
    const rows = await scanned(t, "setup");
    // The first note names the home's config file: wider than the screen, so it was wrapped.
    const first = rows.findIndex((r) => r.startsWith("Scoot setup — writes"));
    expect(rows[first]).not.toContain("[defaults]");
    expect(rows[first + 1]).toContain("[defaults]");
  });

  it("the REPL: its banner, /help, an unknown command and the plan review", async () => {
    const plan = {
      steps: [
        {
          title:
            "Read the calculator module and its tests to find each division that is not guarded against a zero divisor",
          detail:
            "Look at every function that divides, including the helpers that compute averages and ratios for the report",
          files: ["src/calculator/divide.ts", "src/calculator/report.ts", "test/calculator/divide.test.ts"],
        },
        { title: "Add a failing test for each unguarded division, then guard it and watch the test pass" },
      ],
    };
    scene.model.push(step("plan", plan));
    const t = await open(["repl"]);
    await t.waitFor(/scoot> $/m);
    await t.line("/help");
    await t.waitFor("/exit");
    await t.line("/nonsense with words");
    await t.waitFor("unknown command /nonsense");
    await t.line("/plan guard every division against zero in the calculator module");
    await t.waitFor(/run this plan \(2 steps\)\? \[y\/n\/e\] $/m);
    const rows = await scanned(t, "plan review");
    expect(rows.join("\n")).toContain("files: src/calculator/divide.ts");
    await t.type("n");
    await t.waitFor("nothing of it was run");
    await t.line("/exit");
    await t.waitFor("[exit 0]");
    await scanned(t, "the REPL");
  });

  // The offer and the `✓ … · always: …` line before it (src/cli/approve-keyboard.ts).
  it("the rule offer after an always answer", async () => {
    scene.model.push(
      step("bash", { command: "touch the-release-notes-for-the-next-version-2.md" }),
      step("final", "made it"),
    );
    const t = await open(["repl"]);
    await t.waitFor(/scoot> $/m);
    await t.line("make the release notes file");
    await t.waitFor(/\[y\/a\/n\]/);
    await t.type("a");
    await t.waitFor(/\[y\/N\] $/m);
    await scanned(t, "rule offer");
    await t.type("n");
    await t.waitFor("made it");
  });
});
