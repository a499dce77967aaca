/**
 * `scoot acp` end to end: the official SDK's client side (`client()` +
 * `ndJsonStream`) drives the built CLI over stdio against the scripted model server.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentStream } from "../helpers/acp-agent.js";
import { auditEvents } from "../helpers/audit-file.js";
import { REPO_ROOT, runCli, spawnCli } from "../helpers/cli.js";
import { processesWith, uniqueSleepArg, waitForProcess } from "../helpers/procs.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

const EVERYTHING = path.join(REPO_ROOT, "test", "mcp", "fixtures", "everything-stdio.mjs");

const scene = useScene({
  home: "scoot-acp-home-",
  project: "scoot-acp-project-",
  realProject: true,
  model: true,
});
let child: ChildProcess | undefined;
let connection: acp.ClientConnection | undefined;
let stderr = "";
let updates: acp.SessionNotification[] = [];

beforeEach(async () => {
  updates = [];
  stderr = "";
});
afterEach(async () => {
  connection?.close();
  connection = undefined;
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  child = undefined;
});

/** Spawns `scoot acp` and connects the SDK's client to it. */
function connect(args: string[] = [], env: Record<string, string> = {}): acp.ClientConnection {
  child = spawnCli(["acp", ...args], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_BACKEND_MAX_RETRIES: "0", ...env },
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  stdout = "";
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d.toString("utf8");
  });
  const stream = agentStream(child);
  const app = acp
    .client({ name: "scoot-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    // These tests are about the protocol, not approval (test/acp/approval.e2e.test.ts): allow.
    .onRequest(acp.methods.client.session.requestPermission, () => ({
      outcome: { outcome: "selected", optionId: "allow_once" },
    }));
  connection = app.connect(stream);
  return connection;
}

let stdout = "";
async function start(args: string[] = []) {
  const c = connect(args);
  const init = await c.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  return { c, init };
}

/** What a session is told once it opens, whenever that arrives: the commands, the model list. */
const OPENING = new Set(["available_commands_update", "config_option_update"]);
/** The updates of a prompt (the announcements of a session's opening are left out). */
const kinds = (sessionId: string) =>
  updates
    .filter((u) => u.sessionId === sessionId && !OPENING.has(u.update.sessionUpdate))
    .map((u) => u.update.sessionUpdate);
const of = <K extends acp.SessionUpdate["sessionUpdate"]>(kind: K) =>
  updates
    .map((u) => u.update)
    .filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);
const textOf = (u: { content: acp.ContentBlock }) => (u.content.type === "text" ? u.content.text : "");

describe("scoot acp", () => {
  it('session/new refuses a project root of / or Scoot\'s home (docs/safety.md "Dangerous project roots")', async () => {
    const { c } = await start();
    for (const cwd of ["/", fs.realpathSync(scene.home)]) {
      let failure = "";
      try {
        await c.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
      } catch (e) {
        failure = JSON.stringify(e, Object.getOwnPropertyNames(e));
      }
      expect(failure).toContain(`refusing to run in ${cwd}`);
      expect(failure).toContain("-32602");
    }
    const ok = await c.agent.request(acp.methods.agent.session.new, { cwd: scene.project, mcpServers: [] });
    expect(ok.sessionId).toBeTruthy();
  });

  it("initializes, reads a file in a prompt, answers, and a second prompt sees the first", async () => {
    fs.writeFileSync(
      path.join(scene.project, "notes.txt"),
      "the launch code is tangerine\nkey sk-liveSECRETvalue123\n",
    );
    scene.model.push(
      step("file_read", JSON.stringify({ path: "notes.txt" }), "read the notes"),
      step("final", "The code is tangerine."),
      step("final", "You asked about the code before."),
    );
    const { c, init } = await start();
    expect(init.protocolVersion).toBe(1);
    expect(init.agentInfo?.name).toBe("scoot");
    expect(init.agentCapabilities?.loadSession).toBe(true);
    expect(init.agentCapabilities?.promptCapabilities?.embeddedContext).toBe(true);

    const created = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    expect(created.modes?.currentModeId).toBe("guarded");
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual([
      "readonly",
      "guarded",
      "unrestricted",
      "plan",
    ]);
    const sessionId = created.sessionId;

    const first = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "what is the launch code?" }],
    });
    expect(first.stopReason).toBe("end_turn");
    expect(kinds(sessionId)).toEqual([
      "agent_thought_chunk",
      "tool_call",
      "tool_call_update",
      "tool_call_update",
      "agent_thought_chunk",
      "agent_message_chunk",
    ]);
    const call = of("tool_call")[0]!;
    expect(call.kind).toBe("read");
    expect(call.title).toBe("Read notes.txt");
    expect(call.locations).toEqual([{ path: path.join(scene.project, "notes.txt") }]);
    expect(call.rawInput).toEqual({ path: "notes.txt" });
    const done = of("tool_call_update").at(-1)!;
    expect(done.toolCallId).toBe(call.toolCallId);
    expect(done.status).toBe("completed");
    expect(JSON.stringify(done.content)).toContain("tangerine");
    // Every string sent to the editor passes the redactor, like every other output.
    expect(stdout).not.toContain("sk-liveSECRETvalue123");
    expect(of("agent_message_chunk").map(textOf).join("")).toBe("The code is tangerine.");

    const second = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "what did I ask?" }],
    });
    expect(second.stopReason).toBe("end_turn");
    // The model saw the first prompt and its answer in the second request.
    const last = JSON.stringify(scene.model.completions().at(-1)!.body);
    expect(last).toContain("what is the launch code?");
    expect(last).toContain("The code is tangerine.");

    // Audited and transcribed like a CLI run: two runs, each with its own run id.
    const runs = auditEvents(scene.home).filter((e) => e.session_id === sessionId && e.kind === "run");
    expect(runs).toHaveLength(2);
    expect(new Set(runs.map((r) => r.run_id)).size).toBe(2);
    const transcript = fs.readFileSync(
      path.join(scene.home, "state", "sessions", `${sessionId}.jsonl`),
      "utf8",
    );
    expect(transcript).toContain("what did I ask?");
  });

  it("takes embedded text resources and resource links as part of the goal", async () => {
    scene.model.push(step("final", "seen"));
    const { c } = await start();
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "summarise" },
        { type: "resource", resource: { uri: `file://${scene.project}/a.md`, text: "alpha beta" } },
        { type: "resource_link", name: "b.md", uri: `file://${scene.project}/b.md` },
      ],
    });
    expect(r.stopReason).toBe("end_turn");
    const sent = JSON.stringify(scene.model.completions()[0]!.body);
    expect(sent).toContain("alpha beta");
    expect(sent).toContain(`${scene.project}/b.md`);
    // An image is refused with a clear JSON-RPC error, not silently dropped.
    await expect(
      c.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "image", data: "AAAA", mimeType: "image/png" }],
      }),
    ).rejects.toThrow(/image content is not supported/);
  });

  it("session/cancel during `sleep 30` answers cancelled within seconds and leaves no process", async () => {
    const sleepS = 30;
    const tag = uniqueSleepArg(sleepS);
    scene.model.push(step("bash", `sleep ${tag}`));
    const { c } = await start(["--policy", "unrestricted"]);
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    const pending = c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "wait a while" }],
    });
    expect(await waitForProcess(`sleep ${tag}`, 15_000)).toBe(true);
    const t0 = Date.now();
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    const r = await pending;
    const tookMs = Date.now() - t0;
    expect(r.stopReason).toBe("cancelled");
    // Relative to the sleep it cuts short: waiting for it would take its whole 30 s.
    expect(tookMs).toBeLessThan((sleepS * 1000) / 3);
    expect(processesWith(tag)).toEqual([]);
    expect(of("tool_call_update").at(-1)!.status).toBe("failed");
    const audit = auditEvents(scene.home).filter((e) => e.session_id === sessionId);
    expect(audit.some((e) => e.kind === "system_error" && e.msg === "interrupted")).toBe(true);
  });

  it("under --unattended an editor cannot lift the operator's ceiling with set_mode", async () => {
    const { c } = await start(["--unattended"]);
    const created = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    // Default edge.max_job_policy is readonly; guarded runs as readonly when unattended.
    expect(created.modes?.currentModeId).toBe("readonly");
    // Plan mode plans in readonly and never runs a plan unattended: it is offered too.
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual(["readonly", "plan"]);
    await expect(
      c.agent.request(acp.methods.agent.session.setMode, {
        sessionId: created.sessionId,
        modeId: "unrestricted",
      }),
    ).rejects.toThrow(/above what scoot acp --unattended allows/);
  });

  it("SIGTERM during a prompt stops the tool and exits 130", async () => {
    const tag = uniqueSleepArg(30);
    scene.model.push(step("bash", `sleep ${tag}`));
    const { c } = await start(["--policy", "unrestricted"]);
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    void c.agent
      .request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "wait" }] })
      .catch(() => undefined);
    expect(await waitForProcess(`sleep ${tag}`, 15_000)).toBe(true);
    const closed = new Promise((done) => child!.on("close", done));
    child!.kill("SIGTERM");
    expect(await closed).toBe(130);
    expect(processesWith(tag)).toEqual([]);
    expect(stderr).toMatch(/SIGTERM: stopping/);
  });

  it("set_mode readonly makes a following bash step a failed update naming the policy (audited)", async () => {
    scene.model.push(step("bash", "touch made-by-bash"), step("final", "could not"));
    const { c } = await start(["--policy", "unrestricted"]);
    const created = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    expect(created.modes?.currentModeId).toBe("unrestricted");
    const { sessionId } = created;
    await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "readonly" });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "make a file" }],
    });
    expect(r.stopReason).toBe("end_turn");
    const call = of("tool_call")[0]!;
    expect(call.kind).toBe("execute");
    const failed = of("tool_call_update").find(
      (u) => u.toolCallId === call.toolCallId && u.status === "failed",
    );
    expect(failed).toBeDefined();
    expect(JSON.stringify(failed!.content)).toMatch(/denied by policy: .*readonly/);
    expect(fs.existsSync(path.join(scene.project, "made-by-bash"))).toBe(false);
    const audit = auditEvents(scene.home).filter((e) => e.session_id === sessionId);
    expect(audit.find((e) => e.kind === "mode")?.msg).toContain("unrestricted -> readonly");
    // The agent's own logger and each session's share one hash chain.
    const verify = await runCli(["audit", "verify"], { home: scene.home });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(audit.some((e) => e.kind === "policy_deny")).toBe(true);
    await expect(
      c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "root" }),
    ).rejects.toThrow(/unknown mode "root"/);
  });

  it("session/load replays the stored conversation and continues it", async () => {
    scene.model.push(step("final", "first answer"));
    const first = await start();
    const { sessionId } = await first.c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    await first.c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "first question" }],
    });
    first.c.close();
    child!.stdin!.end();
    await new Promise((r) => child!.on("close", r));

    updates = [];
    scene.model.push(step("final", "second answer"));
    const second = await start();
    await second.c.agent.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: scene.project,
      mcpServers: [],
    });
    expect(
      updates
        .filter((u) => u.update.sessionUpdate.endsWith("message_chunk"))
        .map((u) => [u.update.sessionUpdate, textOf(u.update as { content: acp.ContentBlock })]),
    ).toEqual([
      ["user_message_chunk", "first question"],
      ["agent_message_chunk", "first answer"],
    ]);
    const r = await second.c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "and again" }],
    });
    expect(r.stopReason).toBe("end_turn");
    expect(JSON.stringify(scene.model.completions().at(-1)!.body)).toContain("first question");
    await expect(
      second.c.agent.request(acp.methods.agent.session.load, {
        sessionId: "acp-nope",
        cwd: scene.project,
        mcpServers: [],
      }),
    ).rejects.toThrow(/no session "acp-nope"/);
    for (const hostile of ["../../etc/passwd", "..", "a/b", "x\u0000y", ""]) {
      await expect(
        second.c.agent.request(acp.methods.agent.session.load, {
          sessionId: hostile,
          cwd: scene.project,
          mcpServers: [],
        }),
      ).rejects.toThrow(/invalid session id/);
    }
  });

  it("max turns answers max_turn_requests, a refusal refusal; a backend failure is a JSON-RPC error with the CLI's message and stop", async () => {
    scene.model.push(step("glob", JSON.stringify({ pattern: "*" })), {
      status: 401,
      body: { error: { message: "bad key" } },
    });
    const { c } = await start();
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    const err = await c.agent
      .request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] })
      .then(
        () => undefined,
        (e: unknown) => e as acp.RequestError,
      );
    expect(err?.message).toMatch(/backend failed: .*401/);
    expect(err?.data).toMatchObject({ status: "failed", stop: "backend" });

    scene.model.push(step("glob", JSON.stringify({ pattern: "*" })));
    const limited = connect([], { SCOOT_AGENT_MAX_TURNS: "1" });
    await limited.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const s2 = await limited.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    const r = await limited.agent.request(acp.methods.agent.session.prompt, {
      sessionId: s2.sessionId,
      prompt: [{ type: "text", text: "go" }],
    });
    expect(r.stopReason).toBe("max_turn_requests");

    // The server's reply is the model's refusal: a turn that ended, said as ACP says it.
    scene.model.push({
      raw: JSON.stringify({
        choices: [
          { message: { role: "assistant", content: null, refusal: "I can't help" }, finish_reason: "stop" },
        ],
      }),
      contentType: "application/json",
    });
    const refused = await limited.agent.request(acp.methods.agent.session.prompt, {
      sessionId: s2.sessionId,
      prompt: [{ type: "text", text: "go" }],
    });
    expect(refused.stopReason).toBe("refusal");
  });

  it("two sessions prompt at once; each gets its own updates and answer", async () => {
    scene.model.push(step("final", "same answer"), step("final", "same answer"));
    const { c } = await start();
    const a = await c.agent.request(acp.methods.agent.session.new, { cwd: scene.project, mcpServers: [] });
    const b = await c.agent.request(acp.methods.agent.session.new, { cwd: scene.project, mcpServers: [] });
    expect(a.sessionId).not.toBe(b.sessionId);
    const ask = (sessionId: string) =>
      c.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "hi" }],
      });
    const [ra, rb] = await Promise.all([ask(a.sessionId), ask(b.sessionId)]);
    expect([ra.stopReason, rb.stopReason]).toEqual(["end_turn", "end_turn"]);
    for (const id of [a.sessionId, b.sessionId]) {
      const answer = updates
        .filter((u) => u.sessionId === id && u.update.sessionUpdate === "agent_message_chunk")
        .map((u) => textOf(u.update as { content: acp.ContentBlock }))
        .join("");
      expect(answer).toBe("same answer");
    }
    // A second prompt in a session while one runs is refused, not interleaved.
    scene.model.push({ ...step("final", "slow"), delayMs: 1500 } as ScriptItem);
    const slow = ask(a.sessionId);
    await new Promise((r) => setTimeout(r, 300));
    await expect(ask(a.sessionId)).rejects.toThrow(/already running a prompt/);
    expect((await slow).stopReason).toBe("end_turn");
  });

  it("a session that cannot open (an unsafe token file) is a JSON-RPC error naming the fix", async () => {
    fs.writeFileSync(path.join(scene.home, "token"), "tok\n", { mode: 0o644 });
    fs.chmodSync(path.join(scene.home, "token"), 0o644);
    const { c } = await start();
    await expect(
      c.agent.request(acp.methods.agent.session.new, { cwd: scene.project, mcpServers: [] }),
    ).rejects.toThrow(/must be 0600.*chmod 600/);
  });

  it("refuses a relative or missing cwd with a clear error", async () => {
    const { c } = await start();
    await expect(
      c.agent.request(acp.methods.agent.session.new, { cwd: "rel/dir", mcpServers: [] }),
    ).rejects.toThrow(/cwd must be an absolute path/);
    await expect(
      c.agent.request(acp.methods.agent.session.new, {
        cwd: path.join(scene.project, "missing"),
        mcpServers: [],
      }),
    ).rejects.toThrow(/cannot be used/);
  });

  it("streams the thought and the answer in pieces when the backend streams; stdout is protocol only", async () => {
    await scene.model.close();
    scene.model = await startScriptedServer([], { streaming: "sse", ssePieces: 6 });
    scene.model.push(step("final", "a streamed answer in several pieces", "thinking it over carefully"));
    const { c } = await start();
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "stream please" }],
    });
    expect(r.stopReason).toBe("end_turn");
    const answer = of("agent_message_chunk");
    expect(answer.length).toBeGreaterThan(1);
    expect(answer.map(textOf).join("")).toBe("a streamed answer in several pieces");
    expect(of("agent_thought_chunk").map(textOf).join("")).toBe("thinking it over carefully");
    // Every thought piece comes before the first answer piece.
    const k = kinds(sessionId);
    expect(k.lastIndexOf("agent_thought_chunk")).toBeLessThan(k.indexOf("agent_message_chunk"));
    c.close();
    child!.stdin!.end();
    const code = await new Promise((done) => child!.on("close", done));
    // The editor closing stdin ends the agent cleanly.
    expect(code).toBe(0);
    for (const line of stdout.split("\n").filter((l) => l !== "")) {
      expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    }
  });

  it("connects the editor's MCP servers; only tools the configuration allows can be called", async () => {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      ["[[mcp.servers]]", 'name = "every"', 'command = "/bin/false"', 'allowed_tools = ["echo"]', ""].join(
        "\n",
      ),
    );
    scene.model.push(
      {
        reply: {
          thought: "t",
          action: "mcp_call",
          action_input: JSON.stringify({ server: "every", tool: "echo", args: { message: "via editor" } }),
        },
      },
      {
        reply: {
          thought: "t",
          action: "mcp_call",
          action_input: JSON.stringify({ server: "other", tool: "echo", args: { message: "x" } }),
        },
      },
      step("final", "done"),
    );
    const { c } = await start();
    // A word only this test's servers carry on their command line: other test files run the
    // same fixture server at the same time, and their processes are not this agent's.
    const mark = `acp-editor-servers-${process.pid}-${Date.now()}`;
    const stdioServer = (name: string): acp.McpServer => ({
      name,
      command: process.execPath,
      args: [EVERYTHING, mark],
      env: [],
    });
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [stdioServer("every"), stdioServer("other")],
    });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "echo" }],
    });
    expect(r.stopReason).toBe("end_turn");
    const ends = of("tool_call_update").filter((u) => u.status === "completed" || u.status === "failed");
    expect(ends[0]!.status).toBe("completed");
    expect(JSON.stringify(ends[0]!.content)).toContain("via editor");
    // "other" has no [[mcp.servers]] entry: connected, but its allowlist is empty.
    expect(ends[1]!.status).toBe("failed");
    expect(JSON.stringify(ends[1]!.content)).toMatch(/denied by policy: .*allowed_tools/);
    expect(stderr).toContain('mcp server "other" from the editor has no [[mcp.servers]] entry');
    const audit = auditEvents(scene.home).filter((e) => e.session_id === sessionId);
    expect(audit.some((e) => e.kind === "tool_call" && e.msg.includes("via editor"))).toBe(true);
    expect(audit.some((e) => e.kind === "policy_deny" && e.msg.includes("other"))).toBe(true);
    // The editor's servers live as long as the agent: closing it leaves no server process.
    expect(processesWith(mark).length).toBeGreaterThan(0);
    c.close();
    child!.stdin!.end();
    await new Promise((done) => child!.on("close", done));
    const until = Date.now() + 5000;
    while (processesWith(mark).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(processesWith(mark)).toEqual([]);
  });
});
