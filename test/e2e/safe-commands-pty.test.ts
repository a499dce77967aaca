/**
 * Known-safe commands at a real terminal (docs/safety.md "Known-safe commands"): the REPL runs in
 * a tmux pseudo-terminal at 120x40 and 80x24 against the scripted server, in guarded mode with
 * approval asked. `ls` runs without a question and is shown and audited; `rm x` still asks; with
 * `tools.approval_safe_commands = false` in the configuration, `ls` asks too.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

if (!hasTmux) console.warn("safe-commands-pty tests skipped: tmux is not installed (apt-get install tmux)");

const scene = useScene({ home: "scoot-safe-home-", project: "scoot-safe-project-" });
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

async function repl(items: ScriptItem[], size: { width: number; height: number }): Promise<Terminal> {
  scene.server = await startScriptedServer(items);
  term = await openTerminal(["repl", "--policy", "guarded"], {
    ...size,
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_STREAM: "false", NO_COLOR: "1" },
  });
  await term.waitFor(/scoot> $/m);
  return term;
}

/** The `approval` audit records: message and fields. */
const approvals = () =>
  auditEvents(scene.home)
    .filter((e) => e.kind === "approval")
    .map((e) => [e.msg, e.call]);

describe.skipIf(!hasTmux).each(SIZES)("known-safe commands at $width x $height", (size) => {
  it("ls runs without a question and is shown; rm x still asks", async () => {
    fs.writeFileSync(path.join(scene.project, "x"), "keep me\n");
    fs.writeFileSync(path.join(scene.project, "listed-by-ls.txt"), "");
    const t = await repl([step("bash", "ls"), step("bash", "rm x"), final("looked around")], size);
    await t.line("look around");
    const asked = await t.waitFor(QUESTION);
    // The question is about rm; ls was shown as a call that ran, never asked about.
    expect(asked).toMatch(/approve bash rm x\? \[y\/a\/n\] $/m);
    expect(asked).toContain("● bash  ls");
    expect(asked).not.toContain("approve bash ls");
    expect(asked.match(/\? \[y\/a\/n\] /g)).toHaveLength(1);
    await t.type("n");
    await t.waitFor(/reason for the model/);
    await t.line("");
    await t.waitFor("looked around");
    expect(fs.existsSync(path.join(scene.project, "x"))).toBe(true);
    // The model saw what ls listed.
    expect(JSON.stringify(scene.server!.completions()[1]!.body)).toContain("listed-by-ls.txt");
    expect(approvals()).toEqual([
      ["allowed as a known-safe command: bash ls", { tool: "bash", decision: "run" }],
      ["asked: bash rm x", { tool: "bash", decision: "ask" }],
      ["answer=refuse: bash rm x", { tool: "bash", decision: "refuse", outcome: "refused" }],
    ]);
    expect(
      auditEvents(scene.home)
        .filter((e) => e.kind === "tool_call")
        .map((e) => e.msg),
    ).toEqual(["bash ls"]);
  });

  it("with tools.approval_safe_commands = false, ls asks", async () => {
    fs.mkdirSync(scene.home, { recursive: true });
    fs.writeFileSync(path.join(scene.home, "config.toml"), "[tools]\napproval_safe_commands = false\n", {
      mode: 0o600,
    });
    const t = await repl([step("bash", "ls"), final("listed")], size);
    await t.line("list");
    const asked = await t.waitFor(QUESTION);
    expect(asked).toMatch(/approve bash ls\? \[y\/a\/n\] $/m);
    await t.type("y");
    await t.waitFor("listed");
    expect(approvals().map(([msg]) => msg)).toEqual(["asked: bash ls", "answer=once: bash ls"]);
  });
});
