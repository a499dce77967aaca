/**
 * Registered secrets split across stream pieces (docs/context.md "Streaming"): the backend token, an
 * MCP header value and a secret with spaces in it arrive one character per event inside the
 * thought and the answer. None may appear on stdout, on stderr (--trace thoughts), on the
 * REPL's screen or in ACP agent_thought_chunk / agent_message_chunk notifications.
 */
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { agentStream } from "../helpers/acp-agent.js";
import { collect, spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

const TOKEN = "scoottoken-5f1e2d3c4b";
const HEADER = "hdrcred-8c7b6a5d4e";
const SPACED = "correct horse battery staple";
const SECRETS = [TOKEN, HEADER, SPACED];
/** Every secret sits in the middle of ordinary words, so a cut at white space is tempting. */
const THOUGHT = `thinking: the token ${TOKEN} and header ${HEADER} and the phrase ${SPACED} ok`;
const ANSWER = `answer: token ${TOKEN} header ${HEADER} phrase ${SPACED} done`;

const scene = useScene({
  home: "scoot-stream-secret-",
  project: "scoot-stream-secret-p-",
  realProject: true,
});

beforeEach(() => {
  fs.writeFileSync(
    path.join(scene.home, "config.toml"),
    [
      "[[mcp.servers]]",
      'name = "never"',
      'transport = "http"',
      'url = "http://127.0.0.1:9/mcp"',
      'allowed_tools = ["t"]',
      `headers = [{ name = "X-Api-Key", value = "${HEADER}" }]`,
      "",
    ].join("\n"),
  );
});

/**
 * The step in pieces cut inside every secret (the spaced one right after a space, where a cut
 * at white space would release its first half), each its own SSE event with a pause between,
 * so each reaches Scoot as its own read.
 */
function splitSecrets(): { stream: string[]; pauseMs: number } {
  const text = JSON.stringify({ thought: THOUGHT, action: "final", action_input: ANSWER });
  const cuts: number[] = [];
  for (const s of SECRETS) {
    const mid = s === SPACED ? s.indexOf(" ") + 1 : Math.floor(s.length / 2);
    for (let i = text.indexOf(s); i >= 0; i = text.indexOf(s, i + 1)) cuts.push(i + mid);
  }
  cuts.sort((a, b) => a - b);
  const stream: string[] = [];
  let from = 0;
  for (const c of cuts) {
    stream.push(text.slice(from, c));
    from = c;
  }
  stream.push(text.slice(from));
  return { stream, pauseMs: PAUSE_MS };
}
/** Between pieces, so they arrive apart (not a timing assertion: only what is printed is checked). */
const PAUSE_MS = 60;

const env = () => ({
  SCOOT_BACKEND_BASE_URL: scene.server!.url,
  OPENAI_API_KEY: TOKEN,
  DEPLOY_PASSWORD: SPACED,
});

function expectNoSecret(text: string): void {
  for (const s of SECRETS) expect(text).not.toContain(s);
  // Not even the halves of the spaced one on one line.
  expect(text).not.toMatch(/correct horse/);
}

describe("registered secrets split across stream pieces", () => {
  it("-e --trace: neither stdout nor the thought on stderr shows one", async () => {
    scene.server = await startScriptedServer([splitSecrets()]);
    const r = await collect(
      spawnCli(["--trace", "-e", "go"], { home: scene.home, cwd: scene.project, env: env() }),
    );
    expect(r.code).toBe(0);
    expectNoSecret(r.stdout);
    expectNoSecret(r.stderr);
    expect(r.stdout).toBe("answer: token [REDACTED] header [REDACTED] phrase [REDACTED] done\n");
    expect(r.stderr).toContain(
      "thought: thinking: the token [REDACTED] and header [REDACTED] and the phrase [REDACTED] ok",
    );
  });

  it("the REPL screen shows none", async () => {
    scene.server = await startScriptedServer([splitSecrets()]);
    const r = await collect(spawnCli(["repl"], { home: scene.home, cwd: scene.project, env: env() }), {
      input: "go\n",
    });
    expect(r.code).toBe(0);
    expectNoSecret(r.stdout + r.stderr);
    expect(r.stdout).toContain("answer: token [REDACTED] header [REDACTED] phrase [REDACTED] done");
    expect(r.stderr).toContain("the phrase [REDACTED] ok");
  });

  it("ACP agent_thought_chunk and agent_message_chunk show none", async () => {
    scene.server = await startScriptedServer([splitSecrets()]);
    const child = spawnCli(["acp"], { home: scene.home, cwd: scene.project, env: env() });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const updates: acp.SessionNotification[] = [];
    const stream = agentStream(child);
    const c = acp
      .client({ name: "scoot-test" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        updates.push(params);
      })
      .connect(stream);
    try {
      await c.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
        cwd: scene.project,
        mcpServers: [],
      });
      const r = await c.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "go" }],
      });
      expect(r.stopReason).toBe("end_turn");
    } finally {
      c.close();
      child.kill("SIGKILL");
    }
    const chunks = (kind: string) =>
      updates
        .map((u) => u.update)
        .filter((u) => u.sessionUpdate === kind)
        .map((u) => ((u as { content: acp.ContentBlock }).content as { text: string }).text);
    const thought = chunks("agent_thought_chunk");
    const message = chunks("agent_message_chunk");
    // Each piece alone and all of them joined.
    for (const piece of [...thought, ...message, thought.join(""), message.join("")]) expectNoSecret(piece);
    expect(message.join("")).toBe("answer: token [REDACTED] header [REDACTED] phrase [REDACTED] done");
    expect(thought.join("")).toContain("the phrase [REDACTED] ok");
    expectNoSecret(stderr);
  });
});
