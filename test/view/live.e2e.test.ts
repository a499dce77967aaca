/**
 * The live view on a real pseudo-terminal (tmux) against the scripted server, and the same
 * run piped: what a person sees, and what a script reads.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
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
  root = tempDir("scoot-view-");
  home = path.join(root, "home");
  project = path.join(root, "project");
  fs.mkdirSync(project, { recursive: true });
  fs.writeFileSync(path.join(project, "calc.py"), "def add(a, b):\n    return a - b\n");
});
afterEach(async () => {
  await term?.close();
  term = undefined;
  await server?.close();
  server = undefined;
  removeDir(root);
});

const ESC = "\x1b";

/** A slow first reply, a bash call with a long result, a file_edit, then the answer. */
function script(): ScriptItem[] {
  return [
    { reply: { thought: "look", action: "bash", action_input: "seq 1 12" }, delayMs: 1500 },
    step("file_edit", { path: "calc.py", old: "return a - b", new: "return a + b" }),
    { reply: { thought: "done", action: "final", action_input: "fixed the sign" } },
  ];
}

describe.skipIf(!hasTmux)("the live view on a terminal", () => {
  it("shows a spinner, tool lines with previews, the diff and a usage line; the answer once", async () => {
    server = await startScriptedServer(script());
    term = await openTerminal(["-e", "fix calc.py"], {
      cwd: project,
      env: { SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: server.url },
    });
    // The spinner is on screen while the first (slow) reply is still outstanding.
    const early = await term.waitFor(/thinking · turn 1 · \d+\.\ds/);
    expect(server.completions().length).toBeLessThanOrEqual(1);
    expect(early).not.toContain("bash  seq");
    const screen = await term.waitFor("[exit ");
    expect(screen).toContain("[exit 0]");
    expect(screen).toMatch(/● bash {2}seq 1 12/);
    // The preview: the count of the rest, then the last lines (the model saw all 12: no size).
    expect(screen).toMatch(/^ {2}… 9 more lines\n {2}10\n {2}11\n {2}12$/m);
    expect(screen).toMatch(/● file_edit {2}calc\.py/);
    expect(screen).toContain("--- a/calc.py");
    expect(screen).toContain("+++ b/calc.py");
    expect(screen).toMatch(/^- {4}return a - b$/m);
    expect(screen).toMatch(/^\+ {4}return a \+ b$/m);
    expect(screen).toMatch(/3 turns · 2 tool calls · \d+ tokens \(\d+ in, \d+ out\) · context .+ · \d+\.\ds/);
    expect(screen.split("fixed the sign").length - 1).toBe(1);
    // Colour: the removed line is red, the added green.
    const coloured = await term.screenWithEscapes();
    expect(coloured).toContain(`${ESC}[31m-    return a - b`);
    expect(coloured).toContain(`${ESC}[32m+    return a + b`);
    expect(fs.readFileSync(path.join(project, "calc.py"), "utf8")).toContain("return a + b");
  });

  it("NO_COLOR and --no-color keep the view but drop the colour", async () => {
    for (const extra of [
      { args: [] as string[], env: { NO_COLOR: "1" } },
      { args: ["--no-color"], env: {} },
    ]) {
      server = await startScriptedServer(script());
      fs.writeFileSync(path.join(project, "calc.py"), "def add(a, b):\n    return a - b\n");
      term = await openTerminal([...extra.args, "-e", "fix calc.py"], {
        cwd: project,
        env: { SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: server.url, ...extra.env },
      });
      await term.waitFor("[exit ");
      const coloured = await term.screenWithEscapes();
      expect(coloured).toContain("+    return a + b");
      expect(coloured).not.toMatch(/\x1b\[3[12]m/);
      await term.close();
      term = undefined;
      await server.close();
      server = undefined;
    }
  });

  it("a denial is shown with the gate's reason, a corrected step briefly", async () => {
    server = await startScriptedServer([
      { reply: "this is not a step" },
      step("file_write", { path: "/etc/scoot-view-test", content: "x" }),
      { reply: { thought: "ok", action: "final", action_input: "could not" } },
    ]);
    term = await openTerminal(["-e", "write outside"], {
      cwd: project,
      env: { SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: server.url },
    });
    const screen = await term.waitFor("[exit ");
    expect(screen).toContain("↻ invalid step, asking again:");
    expect(screen).toMatch(/✗ denied {2}file_write {2}\/etc\/scoot-view-test\n {2}\S.+/);
  });
});

describe.skipIf(!hasTmux)("--trace on a terminal", () => {
  it("never splits the streamed answer line and shows the answer once", async () => {
    server = await startScriptedServer(
      [{ reply: { thought: "t", action: "final", action_input: "streamed answer in pieces" } }],
      { streaming: "sse", ssePieces: 8 },
    );
    term = await openTerminal(["--trace", "-e", "hi"], {
      cwd: project,
      env: { SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: server.url },
    });
    const screen = await term.waitFor("[exit ");
    expect(screen).toContain("[exit 0]");
    expect(screen).toMatch(/^streamed answer in pieces$/m);
    expect(screen.split("streamed answer in pieces").length - 1).toBe(1);
    expect(screen).toContain("[trace] done: status=final");
  });
});

describe("piped", () => {
  it("stdout carries the answer alone, with no escape sequence anywhere", async () => {
    server = await startScriptedServer(script());
    const r = await runCli(["-e", "fix calc.py"], {
      cwd: project,
      home,
      env: { SCOOT_BACKEND_BASE_URL: server.url },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("fixed the sign\n");
    expect(r.stdout + r.stderr).not.toContain(ESC);
  });
});
