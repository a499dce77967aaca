/**
 * Smaller things a person sees at a real terminal (tmux) against the scripted server, at 120x40
 * and 80x24: a call a saved rule allowed is marked so and `/status` lists a rule saved in the
 * session; `doctor --model NAME` checks that model; `undo` after a run that changed nothing names
 * the run that did; hints name `sessions list --all`; a resize leaves no stale spinner line; the
 * bash question shows the command once; a new file's hunk starts at `-0,0`; `/diff` folds a long
 * change; plan mode shows in the prompt; near misses of commands and options are named; a model
 * the server does not have lists the models it has.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { saveApprovalRule } from "../../src/agent/save-rule.js";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import {
  type RecordedRequest,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal, type TerminalOptions } from "../helpers/terminal.js";

if (!hasTmux) console.warn("smaller terminal tests skipped: tmux is not installed (apt-get install tmux)");

const scene = useScene({ home: "scoot-small-home-", project: "scoot-small-project-", realProject: true });
let term: Terminal | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

const SIZES = [
  { width: 120, height: 40 },
  { width: 80, height: 24 },
];
const BIG = SIZES[0]!;
const SMALL = SIZES[1]!;
const QUESTION = /\[y\/a\/n\] $/m;
const PROMPT = /scoot> $/m;

const final = (answer: string): ScriptItem => step("final", answer, "t");

/** The screen's text with every run of white space one space: lines a terminal or Scoot wrapped read whole. */
const flat = (text: string) => text.replace(/\s+/g, " ");

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    SCOOT_BACKEND_BASE_URL: scene.server!.url,
    SCOOT_BACKEND_STREAM: "false",
    NO_COLOR: "1",
    ...extra,
  };
}

async function open(
  args: string[],
  size: { width: number; height: number },
  more: Partial<TerminalOptions> = {},
) {
  term = await openTerminal(args, { ...size, home: scene.home, cwd: scene.project, ...more });
  return term;
}

async function repl(items: ScriptItem[], size: { width: number; height: number }, args: string[] = []) {
  scene.server = await startScriptedServer(items);
  const t = await open(["repl", ...args], size, { env: env() });
  await t.waitFor(PROMPT);
  return t;
}

/** What the screen shows after the last line that ends with `marker`. */
function after(screen: string, marker: string): string {
  return screen.slice(screen.lastIndexOf(marker) + marker.length);
}

describe.skipIf(!hasTmux).each(SIZES)("rules at $width x $height", (size) => {
  it("a call a saved rule allowed is marked with the rule in the live view", async () => {
    expect(
      saveApprovalRule(scene.home, {
        tool: "bash",
        match: "touch made.txt",
        decision: "allow",
        project: scene.project,
      }).ok,
    ).toBe(true);
    const t = await repl([step("bash", "touch made.txt"), final("made it")], size);
    await t.line("make the file");
    const screen = await t.waitFor(/made it/);
    expect(screen).not.toMatch(QUESTION);
    expect(screen).toMatch(/^● bash {2}touch made\.txt {2}\(allowed by rule tools\.rules\[0\]\)$/m);
  });

  it("/status lists a rule saved in this session, as applying from the next session", async () => {
    const t = await repl([step("bash", "touch first.txt"), final("first")], size);
    await t.line("/status");
    await t.waitFor(/rules\s+none/);
    await t.line("make the file");
    await t.waitFor(QUESTION);
    await t.type("a");
    await t.waitFor(/from the next\s+session\)\? \[y\/N\] $/m);
    await t.type("y");
    await t.waitFor(/saved as tools\.rules\[0\]/);
    await t.waitFor("first");
    await t.waitFor(PROMPT);
    await t.line("/status");
    const status = flat(after(await t.waitFor(/saved during this\s+session/), "/status"));
    expect(status).toContain(
      'rules tools.rules[0] allow bash "touch first.txt" (only this exact command; this project) — saved during this session: applies from the next session',
    );
  });
});

describe.skipIf(!hasTmux)("scoot doctor --model NAME", () => {
  it("runs the model checks with that model, at 80x24", async () => {
    const models: string[] = [];
    const answer = (req: RecordedRequest): ScriptItem => {
      const body = req.body as { model: string; messages: { role: string; content: string }[] };
      models.push(body.model);
      const goal = body.messages.find((m) => m.role === "user")?.content ?? "";
      const turn = body.messages.filter((m) => m.role === "assistant").length;
      if (goal.includes("the single word ready")) return final("ready");
      if (goal.includes("notes.txt"))
        return turn === 0 ? step("file_read", { path: "notes.txt" }) : final("apple");
      if (goal.includes(".txt files")) return turn === 0 ? step("glob", { pattern: "*.txt" }) : final("2");
      return final("ok");
    };
    scene.server = await startScriptedServer(
      Array.from({ length: 20 }, () => answer),
      { models: ["qwen2.5", "other-model"] },
    );
    const t = await open(["doctor", "--model", "other-model"], SMALL, { env: env() });
    const screen = flat(await t.waitFor("[exit "));
    expect(screen).toContain("[exit 0]");
    expect(screen).toMatch(/OK model answer answered "ready"/);
    expect(screen).toMatch(/OK model other-model: 5 of 5 replies were valid steps at the first try/);
    expect(screen).toContain("other-model among them");
    expect(models.length).toBe(5);
    expect(new Set(models)).toEqual(new Set(["other-model"]));
  });
});

describe.skipIf(!hasTmux)("scoot undo after a run that changed nothing", () => {
  it("names the latest run that changed files and how to undo it, at 80x24", async () => {
    scene.server = await startScriptedServer([
      step("file_write", { path: "notes.txt", content: "kept\n" }),
      final("wrote the notes"),
      final("nothing to change"),
    ]);
    const cli = (id: string, goal: string) =>
      runCli(["--session-id", id, "-e", goal], { home: scene.home, cwd: scene.project, env: env() });
    expect((await cli("changed-files", "write the notes")).code).toBe(0);
    expect((await cli("changed-nothing", "look around")).code).toBe(0);
    expect(fs.existsSync(path.join(scene.project, "notes.txt"))).toBe(true);

    let t = await open(["undo"], SMALL, { env: env() });
    const screen = flat(await t.waitFor("[exit "));
    expect(screen).toContain("[exit 1]");
    expect(screen).toContain("scoot undo: session changed-nothing has no file changes to undo");
    expect(screen).toMatch(
      /the latest run here that changed files: run \S+ of session changed-files \(goal: write the notes\), just now/,
    );
    expect(screen).toContain("undo it with: scoot undo changed-files");
    expect(fs.existsSync(path.join(scene.project, "notes.txt"))).toBe(true);
    await t.close();

    t = await open(["undo", "changed-files"], SMALL, { env: env() });
    const undone = flat(await t.waitFor("[exit "));
    expect(undone).toContain("[exit 0]");
    expect(undone).toContain("removed notes.txt");
    expect(fs.existsSync(path.join(scene.project, "notes.txt"))).toBe(false);
  });
});

describe.skipIf(!hasTmux)("hints that point at the listing of every session", () => {
  it.each([
    [["--resume", "nope", "-e", "hi"], 'scoot: no session "nope" to resume in', 2],
    [["session", "show", "nope"], 'scoot session show: no session "nope" in', 1],
    [["diff", "nope"], 'scoot diff: no session "nope" in', 2],
  ])("scoot %j says scoot sessions list --all, at 80x24", async (args, start, code) => {
    const t = await open(args, SMALL);
    const screen = flat(await t.waitFor("[exit "));
    expect(screen).toContain(`[exit ${code}]`);
    expect(screen).toContain(start);
    expect(screen).toContain("(see scoot sessions list --all)");
  });
});

describe.skipIf(!hasTmux)("a resize while a command runs", () => {
  it("leaves no stale spinner line: the status block is drawn again at the new width", async () => {
    const long = "x".repeat(100);
    scene.server = await startScriptedServer([
      step("bash", `echo ${long}; while [ ! -e go ]; do sleep 0.05; done; echo finished`),
      final("all done"),
    ]);
    const t = await open(["-e", "wait for go"], BIG, { env: env() });
    // The command's line under the spinner is wider than the terminal will be.
    await t.waitFor(new RegExp(`running bash · turn 1 · [^\\n]*\\n {2}${long}\\n`));
    await t.resize(SMALL.width, SMALL.height);
    // Drawn again at the new width: the command's line is cut to it.
    const redrawn = await t.waitFor(/running bash · turn 1 · [^\n]*\n {2}x+…\n/);
    expect(redrawn.match(/running bash/g)).toHaveLength(1);
    fs.writeFileSync(path.join(scene.project, "go"), "");
    const end = await t.waitFor("[exit ");
    expect(end).toContain("[exit 0]");
    expect(end).toContain("all done");
    expect(end).not.toContain("running bash");
  });
});

describe.skipIf(!hasTmux).each(SIZES)("the bash question at $width x $height", (size) => {
  it("shows the command once above its prompt", async () => {
    const t = await repl([step("bash", "touch shown-once.txt"), final("touched")], size);
    await t.line("touch it");
    const screen = after(await t.waitFor(QUESTION), "scoot> touch it");
    const block = screen.slice(0, screen.lastIndexOf("approve bash"));
    expect(block).toMatch(/^● bash\n {2}touch shown-once\.txt\n {2}a = always: only this exact command/m);
    expect(block.match(/shown-once/g)).toHaveLength(1);
    expect(screen).toMatch(/^approve bash touch shown-once\.txt\? \[y\/a\/n\] $/m);
    await t.type("y");
    await t.waitFor("touched");
  });

  it("a command of several lines is shown whole, its line count on the first line", async () => {
    const t = await repl([step("bash", "echo one\necho two"), final("echoed")], size);
    await t.line("echo them");
    const screen = after(await t.waitFor(QUESTION), "scoot> echo them");
    const block = screen.slice(0, screen.lastIndexOf("approve bash"));
    expect(block).toMatch(/^● bash \(2 lines\)\n {2}echo one\n {2}echo two$/m);
    await t.type("n");
    // The Enter that skips the reason goes to the reason prompt, once it is there.
    await t.waitFor("reason for the model");
    await t.keys("Enter");
    await t.waitFor("echoed");
  });
});

describe.skipIf(!hasTmux)("a new file's diff", () => {
  it("starts its hunk at -0,0, in the live view and in the question, at 80x24", async () => {
    scene.server = await startScriptedServer([
      step("file_write", { path: "new.txt", content: "one\ntwo\n" }),
      final("written"),
    ]);
    let t = await open(["-e", "write it"], SMALL, { env: env() });
    const live = await t.waitFor("[exit ");
    expect(live).toMatch(/^--- \/dev\/null\n\+\+\+ b\/new\.txt\n@@ -0,0 \+1,2 @@\n\+one\n\+two$/m);
    await t.close();
    fs.rmSync(path.join(scene.project, "new.txt"));
    t = await repl([step("file_write", { path: "new.txt", content: "one\ntwo\n" }), final("written")], SMALL);
    await t.line("write it");
    const asked = await t.waitFor(QUESTION);
    expect(asked).toMatch(/^@@ -0,0 \+1,2 @@$/m);
    await t.type("y");
    await t.waitFor("written");
  });
});

describe.skipIf(!hasTmux)("/diff of a long change", () => {
  it("is folded to the screen like the approval question, naming the command that shows it all, at 80x24", async () => {
    const content = Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join("\n");
    const t = await repl(
      [step("file_write", { path: "long.txt", content: `${content}\n` }), final("written")],
      SMALL,
      ["--approval", "never"],
    );
    await t.line("write the long file");
    await t.waitFor("written");
    await t.waitFor(PROMPT);
    await t.line("/diff");
    const screen = await t.waitFor(/lines folded · all of them: scoot diff repl-\S+ ┄┄[\s\S]*scoot> $/m);
    const shown = after(screen, "scoot> /diff");
    // From the command's line to the prompt, in the terminal's rows: it all fits the screen.
    const rows = shown
      .replace(/\n+$/, "")
      .split("\n")
      .reduce((n, l) => n + Math.max(1, Math.ceil([...l].length / SMALL.width)), 0);
    expect(rows).toBeLessThanOrEqual(SMALL.height);
    expect(shown).toContain("+++ b/long.txt");
    expect(shown).toContain("@@ -0,0 +1,60 @@");
    expect(shown).toMatch(/^\+line 1$/m);
    expect(shown).toMatch(/^\+line 60$/m);
    expect(shown).not.toMatch(/^\+line 30$/m);
    expect(shown).toMatch(/┄┄ \d+ of 63 lines folded/);
  });
});

describe.skipIf(!hasTmux)("plan mode in the prompt", () => {
  it("/plan alone turns the prompt to scoot (plan)> and back, at 80x24", async () => {
    const t = await repl([], SMALL);
    await t.line("/plan");
    await t.waitFor(/the plan\nscoot \(plan\)> $/m);
    await t.line("/plan");
    const off = await t.waitFor(/plan mode off: goals run at once\nscoot> $/m);
    expect(off).toMatch(/^scoot \(plan\)> \/plan$/m);
  });

  it("--plan starts with the plan prompt, at 120x40", async () => {
    scene.server = await startScriptedServer([]);
    const t = await open(["repl", "--plan"], BIG, { env: env() });
    await t.waitFor(/^scoot \(plan\)> $/m);
  });
});

describe.skipIf(!hasTmux)("near misses", () => {
  it.each([
    [["help", "sesions"], 'scoot help: no command "sesions"; did you mean scoot help sessions?'],
    [["help", "bogus"], 'scoot help: no command "bogus"; the commands: repl, config, doctor,'],
    [["undo", "--forse"], "scoot: unknown option --forse; did you mean --force? (see scoot undo --help)"],
    [["undo", "--bogus"], "scoot: unknown option --bogus (see scoot undo --help)"],
    [["--polcy", "x"], "scoot: unknown option --polcy; did you mean --policy? (see scoot --help)"],
  ])("scoot %j names it, at 80x24", async (args, message) => {
    const t = await open(args, SMALL);
    const screen = flat(await t.waitFor("[exit "));
    expect(screen).toContain("[exit 2]");
    expect(screen).toContain(message);
  });
});

describe.skipIf(!hasTmux)("a model the server does not have", () => {
  it("the error lists the models the server has, at 80x24", async () => {
    const known = ["scripted-model", "other-model"];
    const answer = (req: RecordedRequest): ScriptItem => {
      const model = (req.body as { model: string }).model;
      return known.includes(model)
        ? final("hello")
        : {
            status: 404,
            body: {
              error: {
                message: `The model \`${model}\` does not exist.`,
                type: "invalid_request_error",
                code: "model_not_found",
              },
            },
          };
    };
    scene.server = await startScriptedServer([answer], { models: known });
    const t = await open(["repl", "--model", "wrong-model"], SMALL, { env: env() });
    await t.waitFor(PROMPT);
    await t.line("say hello");
    const screen = flat(await t.waitFor(/one of them/));
    expect(screen).toContain("answered 404 Not Found: The model `wrong-model` does not exist.");
    expect(screen).toContain(
      'backend.model "wrong-model" is not among the models the server lists: scripted-model, other-model; set backend.model (or --model) to one of them',
    );
    expect(scene.server.requests.map((r) => `${r.method} ${r.path}`)).toContain("GET /v1/models");
  });
});
