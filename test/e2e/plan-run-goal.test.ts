/**
 * A plan run's goal as the person gave it (docs/sessions.md "Sessions and audit"): the run sends
 * the model its goal with the approved plan beside it, and records the person's own words as the
 * transcript line's `goal`. `sessions list`, `--continue` (the goals replayed before the REPL's
 * prompt), the REPL's `/resume` and ACP `session/load` show those words, never Scoot's note.
 * The built CLI against the scripted model server; ACP through the SDK's own client.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { needsBuiltCli, runCli, spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

needsBuiltCli();
const scene = useScene({
  home: "scoot-goal-home-",
  project: "scoot-goal-project-",
  realProject: true,
  model: true,
});

const GOAL = "write the release notes for 2.1";
const NOTE = "[scoot: this run carries out an approved plan";
const PLAN = { steps: [{ title: "Write the notes", files: ["NOTES.md"] }] };

function scoot(args: string[], input?: string) {
  return runCli(args, {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
    ...(input !== undefined ? { input } : {}),
  });
}

/** Runs GOAL bound to PLAN; returns its session id. */
async function planRun(): Promise<string> {
  fs.writeFileSync(path.join(scene.project, "plan.json"), JSON.stringify({ plan: PLAN }));
  scene.model.push(
    step("file_write", { path: "NOTES.md", content: "notes\n" }),
    step("final", "notes written"),
  );
  const r = await scoot(["--execute-plan", "plan.json", "--policy", "unrestricted", "--json", "-e", GOAL]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).session_id as string;
}

function transcriptLines(id: string): Record<string, unknown>[] {
  const file = path.join(scene.home, "state", "sessions", `${id}.jsonl`);
  return fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("a plan run's goal", () => {
  it("is recorded as the person's words beside what the model was given", async () => {
    const id = await planRun();
    // The model got the plan with the goal.
    expect(JSON.stringify(scene.model.completions()[0]!.body)).toContain(NOTE);
    const goalLine = transcriptLines(id).find((l) => l.role === "user")!;
    expect(goalLine.goal).toBe(GOAL);
    expect(goalLine.content).toContain(GOAL);
    expect(goalLine.content).toContain(NOTE);
    // A goal the run added nothing to carries no second copy.
    scene.model.push(step("final", "plain"));
    const plain = await scoot(["--json", "-e", "just a question"]);
    const plainId = JSON.parse(plain.stdout).session_id as string;
    expect(transcriptLines(plainId).find((l) => l.role === "user")).toEqual({
      role: "user",
      content: "just a question",
    });
  });

  it("sessions list shows it, as text and as JSON", async () => {
    const id = await planRun();
    const list = await scoot(["sessions", "list"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^1 +${id} +.+ ${GOAL}$`, "m"));
    expect(list.stdout).not.toContain("[scoot:");
    const json = await scoot(["sessions", "list", "--json"]);
    const rows = JSON.parse(json.stdout) as { id: string; first_user_message: string }[];
    expect(rows.find((r) => r.id === id)?.first_user_message).toBe(GOAL);
  });

  it("--continue replays it as the goal; the model is still given the plan", async () => {
    await planRun();
    scene.model.push(step("final", "it was about the notes"));
    const r = await scoot(["--continue"], "what did we do?\n");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`› ${GOAL}\n  notes written\n`);
    expect(r.stderr).not.toContain("[scoot:");
    // The resumed history sent to the model is what the model was given before.
    const resumed = JSON.stringify(scene.model.completions().at(-1)!.body);
    expect(resumed).toContain(NOTE);
  });

  it("the REPL's /resume replays it as the goal", async () => {
    const id = await planRun();
    const r = await scoot(["repl"], `/resume ${id}\n/exit\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`resumed session ${id}`);
    expect(r.stderr).toContain(`› ${GOAL}\n`);
    expect(r.stderr).not.toContain("[scoot:");
  });

  it("ACP session/load replays it as the user's message", async () => {
    const id = await planRun();
    const updates: acp.SessionUpdate[] = [];
    let child: ChildProcess | undefined;
    let connection: acp.ClientConnection | undefined;
    try {
      child = spawnCli(["acp"], {
        home: scene.home,
        cwd: scene.project,
        env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_BACKEND_MAX_RETRIES: "0" },
      });
      connection = acp
        .client({ name: "scoot-test" })
        .onNotification(acp.methods.client.session.update, ({ params }) => {
          updates.push(params.update);
        })
        .connect(agentStream(child));
      await connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      await connection.agent.request(acp.methods.agent.session.load, {
        sessionId: id,
        cwd: scene.project,
        mcpServers: [],
      });
    } finally {
      await closeAgent(connection, child);
    }
    const chunks = updates
      .filter((u) => u.sessionUpdate === "user_message_chunk" || u.sessionUpdate === "agent_message_chunk")
      .map((u) => [u.sessionUpdate, "content" in u && u.content.type === "text" ? u.content.text : ""]);
    expect(chunks).toEqual([
      ["user_message_chunk", GOAL],
      ["agent_message_chunk", "notes written"],
    ]);
  });
});
