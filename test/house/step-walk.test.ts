/**
 * How much of Scoot one more step walks, in the real CLI (docs/architecture.md "A step, file by
 * file"): test/helpers/step-walk.ts runs each scenario with the step once and twice under V8's
 * coverage and keeps the source files whose code ran more often the second time — backend,
 * stores and front end included. Three walks: a file_read step of `scoot -e`, a bash step a
 * person approves at the REPL (a real pseudo-terminal), and an edit through an ACP editor that
 * writes the file itself. A change that drags more of the house into every step shows up here as
 * a longer list; work a step does not need (nested AGENTS.md readers when none is committed, the
 * plan checklist without a plan, the native-call readers for a plain step) must stay off it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, describe, expect, it } from "vitest";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { cleanEnv, collect, removeDir, tempDir } from "../helpers/cli.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";
import { MAIN, stepWalk, type Walk } from "../helpers/step-walk.js";
import { hasTmux, openTerminal } from "../helpers/terminal.js";

if (!hasTmux)
  console.warn("step-walk: the REPL walk is skipped: tmux is not installed (apt-get install tmux)");

/**
 * The aims, in files a step runs code in (docs/architecture.md "A step, file by file" shows the
 * lists). Measured 2026-12-04: read 57, REPL bash 89 (88 before the question read keys on purpose), ACP edit 77; each aim leaves a few files of room.
 */
const READ_STEP_MAX_FILES = 60;
const REPL_BASH_STEP_MAX_FILES = 92;
const ACP_EDIT_STEP_MAX_FILES = 80;

/** Files no step may run when the run has no plan, no committed nested AGENTS.md and plain replies. */
const NOT_PER_STEP = [
  "src/agent/git-index.ts",
  "src/agent/plan-narrow.ts",
  "src/agent/plan-review.ts",
  "src/agent/reply-calls.ts",
  "src/agent/vendor-calls.ts",
  "src/agent/call-shapes.ts",
  "src/agent/python-call.ts",
  "src/backend/tool-calls.ts",
  "src/tools/plan.ts",
];

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) removeDir(d);
});
function scene(): { home: string; project: string } {
  const home = tempDir("scoot-walk-home-");
  const project = fs.realpathSync(tempDir("scoot-walk-project-"));
  dirs.push(home, project);
  return { home, project };
}

/** The phases every walk passes, or the measure is broken. */
function expectPhases(walk: Walk, tool: string, max: number): void {
  for (const phase of [
    "src/agent/loop.ts",
    "src/agent/calls.ts",
    "src/agent/decide.ts",
    "src/policy/gate.ts",
    `src/tools/${tool}.ts`,
    "src/backend/transport.ts",
    "src/store/audit-writer.ts",
    "src/store/session.ts",
  ])
    expect(walk.perStep).toContain(phase);
  for (const idle of NOT_PER_STEP) expect(walk.perStep).not.toContain(idle);
  expect(walk.perStep.length, walk.perStep.join("\n")).toBeLessThanOrEqual(max);
}

/** Logged so a run of the suite shows the numbers the docs quote (SCOOT_STEP_WALK_LIST=1: the files too). */
function report(name: string, walk: Walk): void {
  console.log(`step-walk ${name}: ${walk.perStep.length} files per step (${walk.loaded.length} loaded)`);
  if (process.env.SCOOT_STEP_WALK_LIST) console.log(walk.perStep.join("\n"));
}

describe("one more step, in the real CLI", () => {
  it(`a file_read step of scoot -e runs code in at most ${READ_STEP_MAX_FILES} files`, async () => {
    const { home, project } = scene();
    fs.writeFileSync(path.join(project, "a.txt"), "hello\n");
    const walk = await stepWalk(async (steps, env) => {
      const items: ScriptItem[] = Array.from({ length: steps }, () => step("file_read", { path: "a.txt" }));
      const server = await startScriptedServer([...items, step("final", "done")]);
      try {
        const child = spawn(process.execPath, [MAIN, "-e", "read a.txt"], {
          cwd: project,
          env: cleanEnv({ SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: server.url, ...env }),
        });
        const r = await collect(child);
        expect(r.code, r.stderr).toBe(0);
      } finally {
        await server.close();
      }
    });
    report("read", walk);
    expectPhases(walk, "file_read", READ_STEP_MAX_FILES);
    // A plain run's front end: the answer printer, not the REPL's live view.
    expect(walk.perStep).not.toContain("src/cli/view/live.ts");
  }, 60_000);

  it.skipIf(!hasTmux)(
    `a bash step approved at the REPL runs code in at most ${REPL_BASH_STEP_MAX_FILES} files`,
    async () => {
      const { home, project } = scene();
      const walk = await stepWalk(async (steps, env) => {
        const items: ScriptItem[] = Array.from({ length: steps }, (_, i) =>
          step("bash", `echo step${i + 1} > out${i + 1}.txt`),
        );
        const server = await startScriptedServer([...items, step("final", "all written")]);
        const term = await openTerminal(["repl"], {
          script: MAIN,
          width: 120,
          height: 40,
          home,
          cwd: project,
          env: { SCOOT_BACKEND_BASE_URL: server.url, NO_COLOR: "1", ...env },
        });
        try {
          await term.waitFor(/scoot> $/m);
          await term.line("write the files");
          for (let i = 0; i < steps; i++) {
            // Each question is answered once it is on screen.
            const before = (await term.screen()).length;
            await term.waitFor(/\? \[y\/a\/n\] $/m, undefined, i === 0 ? 0 : before - 200);
            await term.type("y");
            // The answer taken, not the call's own line (which names the file before any answer):
            // the next "y" must not reach the REPL in the same read as this one, or the two read
            // as a paste, which never answers (docs/keyboard.md "Questions answered on purpose").
            await term.waitFor(new RegExp(`out${i + 1}\\.txt · run once`));
          }
          await term.waitFor(/all written/);
          await term.waitFor(/scoot> $/m);
          await term.line("/exit");
          await term.waitFor(/\[exit 0\]/);
        } finally {
          await term.close();
          await server.close();
        }
        for (let i = 1; i <= steps; i++)
          expect(fs.readFileSync(path.join(project, `out${i}.txt`), "utf8")).toBe(`step${i}\n`);
      });
      report("REPL bash", walk);
      expectPhases(walk, "bash", REPL_BASH_STEP_MAX_FILES);
      expect(walk.perStep).toContain("src/cli/view/live.ts");
    },
    90_000,
  );

  it(`an edit through an ACP editor runs code in at most ${ACP_EDIT_STEP_MAX_FILES} files`, async () => {
    const { home, project } = scene();
    const file = path.join(project, "notes.txt");
    const walk = await stepWalk(async (steps, env) => {
      fs.writeFileSync(file, "v0\n");
      const items: ScriptItem[] = Array.from({ length: steps }, (_, i) =>
        step("file_edit", { path: "notes.txt", old: `v${i}`, new: `v${i + 1}` }),
      );
      const server = await startScriptedServer([...items, step("final", "edited")]);
      let child: ChildProcess | undefined;
      let connection: acp.ClientConnection | undefined;
      const writes: string[] = [];
      try {
        child = spawn(process.execPath, [MAIN, "acp"], {
          cwd: project,
          env: cleanEnv({ SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: server.url, ...env }),
          stdio: ["pipe", "pipe", "pipe"],
        });
        child.stderr!.resume();
        connection = acp
          .client({ name: "scoot-step-walk" })
          .onNotification(acp.methods.client.session.update, () => {})
          .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => ({
            content: fs.readFileSync(params.path, "utf8"),
          }))
          .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
            writes.push(params.path);
            fs.writeFileSync(params.path, params.content);
            return {};
          })
          .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
            outcome: {
              outcome: "selected",
              optionId: params.options.find((o) => o.kind === "allow_once")!.optionId,
            },
          }))
          .connect(agentStream(child));
        await connection.agent.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
        });
        const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, {
          cwd: project,
          mcpServers: [],
        });
        const r = await connection.agent.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "bump the version" }],
        });
        expect(r.stopReason).toBe("end_turn");
      } finally {
        await closeAgent(connection, child);
        await server.close();
      }
      // The editor wrote each change: the walk includes Scoot's write through it.
      expect(writes).toEqual(Array.from({ length: steps }, () => file));
      expect(fs.readFileSync(file, "utf8")).toBe(`v${steps}\n`);
    });
    report("ACP edit", walk);
    expectPhases(walk, "file_edit", ACP_EDIT_STEP_MAX_FILES);
    expect(walk.perStep).toContain("src/acp/updates.ts");
    expect(walk.perStep).toContain("src/tools/editor-write.ts");
  }, 60_000);
});
