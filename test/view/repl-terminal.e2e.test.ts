/**
 * The REPL on a real pseudo-terminal (tmux) against the scripted server: Ctrl-C at the
 * prompt, slash commands, bracketed paste, history across launches, the resume hint.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, tempDir } from "../helpers/cli.js";
import {
  type ScriptedServer,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

let root: string;
let home: string;
let project: string;
let server: ScriptedServer | undefined;
let term: Terminal | undefined;
beforeEach(() => {
  root = tempDir("scoot-repl-tty-");
  home = path.join(root, "home");
  project = path.join(root, "project");
  fs.mkdirSync(project, { recursive: true });
});
afterEach(async () => {
  await term?.close();
  term = undefined;
  await server?.close();
  server = undefined;
  removeDir(root);
});

const final = (answer: string): ScriptItem => step("final", answer, "t");

/** The user messages of completion request `i`. */
function userTexts(s: ScriptedServer, i: number): string[] {
  const body = s.completions()[i]!.body as { messages: { role: string; content: string }[] };
  return body.messages.filter((m) => m.role === "user").map((m) => m.content);
}

function repl(args: string[] = []): Promise<Terminal> {
  return openTerminal(["repl", ...args], {
    cwd: project,
    env: { SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: server!.url },
  });
}

describe.skipIf(!hasTmux)("the REPL on a terminal", () => {
  it("Ctrl-C discards the half-typed line: the next goal is sent alone", async () => {
    server = await startScriptedServer([final("only the new one")]);
    term = await repl();
    await term.waitFor("scoot> ");
    await term.type("half");
    await term.waitFor("scoot> half");
    await term.keys("C-c");
    await term.waitFor("^C");
    await term.type("new goal");
    await term.keys("Enter");
    await term.waitFor("only the new one");
    expect(userTexts(server, 0)).toEqual(["new goal"]);
  });

  it("/nonsense sends nothing to the model and prints the commands; /status names tokens", async () => {
    server = await startScriptedServer([final("first answer")]);
    term = await repl();
    await term.waitFor("scoot> ");
    await term.keys("/nonsense please", "Enter");
    const screen = await term.waitFor("unknown command /nonsense");
    expect(screen).toContain("nothing was sent to the model");
    expect(screen).toMatch(/\/status\s+model, mode, approval, context use, tokens/);
    expect(screen).toMatch(/\/model <name>/);
    expect(server.completions()).toHaveLength(0);
    await term.keys("a goal", "Enter");
    await term.waitFor("first answer");
    // The live view's usage line after the goal names its tokens (drawn just after the answer).
    const after = await term.waitFor(/1 turn · 0 tool calls · \d+ tokens \(\d+ in, \d+ out\)/);
    expect(after).toContain("first answer");
    await term.keys("/status", "Enter");
    const status = await term.waitFor(/tokens\s+\d+ \(\d+ in, \d+ out\) over 1 goal/);
    expect(status).toMatch(/model\s+scoot-test-model|model\s+\S+/);
    expect(status).toMatch(/mode\s+guarded/);
    expect(status).toMatch(/approval\s+\S+/);
    expect(status).toMatch(/context\s+\S+ (of \S+ )?tokens/);
    expect(server.completions()).toHaveLength(1);
  });

  it("/model, /clear and /compact change what the next goal sends", async () => {
    // /model checks the name against the server's list: this one lists it.
    server = await startScriptedServer([final("one"), final("two"), final("three")], {
      models: ["scripted-model", "other-model"],
    });
    term = await repl();
    await term.waitFor("scoot> ");
    await term.keys("first goal", "Enter");
    await term.waitFor("one");
    await term.keys("/model other-model", "Enter");
    await term.waitFor("model other-model for the next goals");
    await term.keys("second goal", "Enter");
    await term.waitFor(/^two$/m);
    expect((server.completions()[1]!.body as { model: string }).model).toBe("other-model");
    expect(userTexts(server, 1)).toContain("first goal");
    await term.keys("/compact", "Enter");
    await term.waitFor(/compacted \d+ messages: \d+ → \d+ bytes/);
    await term.keys("/clear", "Enter");
    await term.waitFor("context cleared");
    await term.keys("third goal", "Enter");
    await term.waitFor(/^three$/m);
    expect(userTexts(server, 2)).toEqual(["third goal"]);
  });

  it("a pasted multi-line block is one goal", async () => {
    server = await startScriptedServer([final("got the block")]);
    term = await repl();
    await term.waitFor("scoot> ");
    await term.paste("line one\nline two\nline three");
    await term.waitFor("line three");
    expect(server.completions()).toHaveLength(0);
    await term.keys("Enter");
    await term.waitFor("got the block");
    expect(userTexts(server, 0)).toEqual(["line one\nline two\nline three"]);
  });

  it("history persists across launches (0600, redacted); exit names the resume command", async () => {
    server = await startScriptedServer([final("noted"), final("again")]);
    term = await repl();
    await term.waitFor("scoot> ");
    await term.keys("remember sk-historysecret0123456789", "Enter");
    await term.waitFor("noted");
    await term.keys("/exit", "Enter");
    const screen = await term.waitFor("[exit ");
    const id = /resume with: scoot --resume (repl-\d+-\d+)/.exec(screen)?.[1];
    expect(id, screen).toBeDefined();
    const file = path.join(home, "state", "repl_history");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const saved = fs.readFileSync(file, "utf8");
    expect(saved).toContain("remember");
    expect(saved).not.toContain("sk-historysecret0123456789");
    await term.close();

    // --resume replays the goal and its answer; Up (past /exit) brings the redacted line back.
    term = await repl(["--resume", id!]);
    const resumed = await term.waitFor("scoot> ");
    expect(resumed).toContain("› remember [REDACTED]\n  noted");
    await term.keys("Up");
    await term.waitFor("scoot> /exit");
    await term.keys("Up");
    await term.waitFor("scoot> remember [REDACTED]");
  });
});
