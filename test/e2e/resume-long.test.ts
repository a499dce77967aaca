/**
 * A session longer than the context budget resumes (docs/sessions.md "Resuming a session",
 * docs/context.md "Context budget"): `-e --continue`, `--resume <id>`, `serve`'s `run {resume}`
 * and ACP `session/load` each run the new goal to its answer. The request the scripted server
 * gets fits agent.context_budget_bytes, holds the older history as one summary and ends with
 * the new goal, never compacted away. A goal larger than the budget itself fails with one line
 * whose numbers agree with each other.
 *
 * The real built CLI against the scripted server; the long session is made by a real run of
 * many long file_read turns with compaction off, so its transcript is what a long day leaves.
 */
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { collect, runCli, spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import type { ScriptItem } from "../helpers/scripted-server.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({
  home: "scoot-long-home-",
  project: "scoot-long-proj-",
  realProject: true,
  model: true,
});

/** Turns of the first run: each reads a file of FILE_BYTES, so the transcript is long. */
const TURNS = 12;
const FILE_BYTES = 6000;
/** The history budget of the resumed runs, above the system prompt (measured from the first request). */
const ROOM_BYTES = 16_000;
/** Bytes a message costs beyond its content, as the budget counts them (docs/context.md "Context budget"). */
const MESSAGE_OVERHEAD = 32;

interface Sent {
  role: string;
  content: string;
}

const final = (answer: string): ScriptItem => step("final", answer, "answering");

function messagesOf(i: number): Sent[] {
  return (scene.model.completions()[i]!.body as { messages: Sent[] }).messages;
}

function bytesOf(messages: readonly Sent[]): number {
  return messages.reduce((n, m) => n + Buffer.byteLength(m.content) + MESSAGE_OVERHEAD, 0);
}

function scoot(args: string[], budget: number) {
  return runCli(args, {
    home: scene.home,
    cwd: scene.project,
    env: {
      SCOOT_BACKEND_BASE_URL: scene.model.url,
      SCOOT_BACKEND_MAX_RETRIES: "0",
      SCOOT_AGENT_CONTEXT_BUDGET_BYTES: String(budget),
    },
  });
}

/**
 * Runs a first goal of TURNS long file_reads with compaction off; returns its session id and the
 * budget the resumed runs get (the system prompt plus ROOM_BYTES), which the transcript exceeds.
 */
async function longSession(): Promise<{ id: string; budget: number; transcriptBytes: number }> {
  const lines = Array.from(
    { length: FILE_BYTES / 60 },
    (_, i) => `line ${i} ${"of the long file ".repeat(3)}`,
  );
  for (let f = 0; f < TURNS; f++)
    fs.writeFileSync(path.join(scene.project, `part${f}.txt`), lines.map((l) => `${f}:${l}`).join("\n"));
  for (let f = 0; f < TURNS; f++)
    scene.model.push(step("file_read", { path: `part${f}.txt` }, `read part ${f}`));
  scene.model.push(final("first answer ALPHA"));
  const first = await scoot(["--json", "-e", "goal one: read every part"], 0);
  expect(first.code, first.stderr).toBe(0);
  const id = JSON.parse(first.stdout).session_id as string;
  const sent = messagesOf(TURNS);
  const system = sent[0]!;
  expect(system.role).toBe("system");
  const budget = bytesOf([system]) + ROOM_BYTES;
  const transcriptBytes = bytesOf(sent);
  // The session really is past the budget the resumed runs get.
  expect(transcriptBytes).toBeGreaterThan(2 * budget);
  return { id, budget, transcriptBytes };
}

/** The request of a resumed run: fits, summarises the older history, ends with the new goal. */
function expectResumedRequest(i: number, goal: string, budget: number): void {
  const sent = messagesOf(i);
  expect(bytesOf(sent)).toBeLessThanOrEqual(budget);
  expect(sent[0]!.role).toBe("system");
  expect(sent.at(-1)).toEqual({ role: "user", content: goal });
  const text = sent.map((m) => m.content).join("\n");
  // The older history is there as one summary, and the oldest goal is not kept verbatim.
  expect(text).toContain("[Compacted history]");
  expect(text).toContain("part0.txt");
  expect(sent.filter((m) => m.content.startsWith("[Compacted history]"))).toHaveLength(1);
}

describe("a session past the context budget resumes", () => {
  it("-e --continue and --resume <id>: the run completes; the request fits and ends with the new goal", async () => {
    const { id, budget } = await longSession();
    let next = scene.model.completions().length;

    scene.model.push(final("continued answer BETA"));
    const cont = await scoot(["--json", "--continue", "-e", "goal two: and now?"], budget);
    expect(cont.code, cont.stderr).toBe(0);
    expect(JSON.parse(cont.stdout)).toMatchObject({ session_id: id, answer: "continued answer BETA" });
    expectResumedRequest(next, "goal two: and now?", budget);
    next += 1;

    scene.model.push(final("resumed answer GAMMA"));
    const res = await scoot(["--json", "--resume", id, "-e", "goal three: once more"], budget);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ session_id: id, answer: "resumed answer GAMMA" });
    expectResumedRequest(next, "goal three: once more", budget);
    // The answer just before the new goal is recent enough to stay word for word.
    expect(
      messagesOf(next)
        .map((m) => m.content)
        .join("\n"),
    ).toContain("continued answer BETA");
  });

  it("a resumed run that goes on past the budget keeps its goal pinned turn after turn", async () => {
    const { id, budget } = await longSession();
    const next = scene.model.completions().length;
    for (let f = 0; f < 6; f++) scene.model.push(step("file_read", { path: `part${f}.txt` }, `again ${f}`));
    scene.model.push(final("done again"));
    const r = await scoot(["--json", "--resume", id, "-e", "goal two: read them again"], budget);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).answer).toBe("done again");
    for (let i = next; i < scene.model.completions().length; i++) {
      const sent = messagesOf(i);
      expect(bytesOf(sent), `request ${i - next}`).toBeLessThanOrEqual(budget);
      // The goal is there on every turn, as the person wrote it, and only the once.
      expect(
        sent.filter((m) => m.content === "goal two: read them again"),
        `request ${i - next}`,
      ).toHaveLength(1);
    }
  });

  it("serve's run {resume}: the run completes; the request fits and ends with the new goal", async () => {
    const { id, budget } = await longSession();
    const next = scene.model.completions().length;
    scene.model.push(final("served answer DELTA"));
    const child = spawnCli(["serve"], {
      home: scene.home,
      cwd: scene.project,
      env: {
        SCOOT_BACKEND_BASE_URL: scene.model.url,
        SCOOT_BACKEND_MAX_RETRIES: "0",
        SCOOT_AGENT_CONTEXT_BUDGET_BYTES: String(budget),
      },
    });
    const line = { id: 1, method: "run", params: { goal: "served goal: and now?", resume: id } };
    const r = await collect(child, { input: `${JSON.stringify(line)}\n` });
    const reply = JSON.parse(r.stdout.trim().split("\n")[0]!) as {
      result?: Record<string, unknown>;
      error?: unknown;
    };
    expect(reply.error, r.stderr).toBeUndefined();
    expect(reply.result).toMatchObject({ session_id: id, reply: "served answer DELTA" });
    expectResumedRequest(next, "served goal: and now?", budget);
  });

  it("ACP session/load: the prompt ends its turn; the request fits and ends with the new goal", async () => {
    const { id, budget } = await longSession();
    const next = scene.model.completions().length;
    scene.model.push(final("editor answer EPSILON"));
    const child = spawnCli(["acp"], {
      home: scene.home,
      cwd: scene.project,
      env: {
        SCOOT_BACKEND_BASE_URL: scene.model.url,
        SCOOT_BACKEND_MAX_RETRIES: "0",
        SCOOT_AGENT_CONTEXT_BUDGET_BYTES: String(budget),
      },
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const connection = acp
      .client({ name: "scoot-test" })
      .onNotification(acp.methods.client.session.update, () => {})
      .onRequest(acp.methods.client.session.requestPermission, () => ({
        outcome: { outcome: "selected", optionId: "allow_once" },
      }))
      .connect(agentStream(child));
    try {
      await connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      await connection.agent.request(acp.methods.agent.session.load, {
        sessionId: id,
        cwd: scene.project,
        mcpServers: [],
      });
      const r = await connection.agent.request(acp.methods.agent.session.prompt, {
        sessionId: id,
        prompt: [{ type: "text", text: "editor goal: and now?" }],
      });
      expect(r.stopReason, stderr).toBe("end_turn");
      expectResumedRequest(next, "editor goal: and now?", budget);
    } finally {
      await closeAgent(connection, child);
    }
  });

  it("a goal larger than the budget fails before any model call with one line whose numbers agree", async () => {
    const { id, budget } = await longSession();
    const before = scene.model.completions().length;
    const goal = `goal two: ${"far too long ".repeat(Math.ceil((budget * 1.2) / 13))}`;
    const r = await scoot(["--resume", id, "-e", goal], budget);
    expect(r.code).toBe(1);
    expect(scene.model.completions()).toHaveLength(before);
    const line = r.stderr.split("\n").find((l) => l.includes("context budget"));
    expect(line, r.stderr).toBeDefined();
    const goalBytes = Buffer.byteLength(goal);
    expect(line).toContain(`agent.context_budget_bytes = ${budget}`);
    expect(line).toContain(`the goal (${goalBytes + MESSAGE_OVERHEAD} bytes)`);
    expect(line).toContain("Shorten the goal");
    // What it says is needed is the sum of the parts it names, and more than the budget it says is too small.
    const need = Number(/need at least (\d+) bytes/.exec(line!)?.[1]);
    const parts = [...line!.matchAll(/\((\d+) bytes\)/g)].map((m) => Number(m[1]));
    expect(parts.reduce((a, b) => a + b, 0)).toBe(need);
    expect(need).toBeGreaterThan(budget);
  });
});
