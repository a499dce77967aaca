/**
 * `scoot acp` as an editor sees it (docs/editors.md "Editors (ACP)"): modes that persist across a
 * restart of the agent, sessions that load even when never prompted, tool calls an editor can
 * show (titles, object rawInput, diffs), the commands it offers, session/list and close. The
 * official SDK's client drives the built CLI against the scripted model server.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { removeDir, spawnCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({
  home: "scoot-acp-ed-home-",
  project: "scoot-acp-ed-project-",
  realProject: true,
  model: true,
});
let child: ChildProcess | undefined;
let connection: acp.ClientConnection | undefined;
let stderr = "";
/** Every notification and answer, in arrival order, so order can be checked. */
let events: ({ kind: "update"; n: acp.SessionNotification } | { kind: "answer"; method: string })[] = [];

beforeEach(async () => {
  events = [];
  stderr = "";
  buffers = new Map();
  bufferReads = [];
});
afterEach(async () => {
  await stop();
});

async function stop(): Promise<void> {
  const [c, conn] = [child, connection];
  child = undefined;
  connection = undefined;
  await closeAgent(conn, c);
}

/** What the test editor holds open (path → unsaved text), served by fs/read_text_file. */
let buffers = new Map<string, string>();
let bufferReads: string[] = [];

/** Spawns `scoot acp`, connects the SDK's client and initializes. */
async function start(
  args: string[] = [],
  clientCapabilities: acp.ClientCapabilities = {},
): Promise<acp.ClientConnection> {
  child = spawnCli(["acp", ...args], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_BACKEND_MAX_RETRIES: "0" },
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const stream = agentStream(child);
  connection = acp
    .client({ name: "scoot-editor-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      events.push({ kind: "update", n: params });
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      bufferReads.push(params.path);
      return { content: buffers.get(params.path) ?? fs.readFileSync(params.path, "utf8") };
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
      outcome: {
        outcome: "selected",
        optionId: params.options.find((o) => o.kind === "allow_once")!.optionId,
      },
    }))
    .connect(stream);
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities,
  });
  return connection;
}

const updatesOf = <K extends acp.SessionUpdate["sessionUpdate"]>(kind: K) =>
  events
    .flatMap((e) => (e.kind === "update" ? [e.n.update] : []))
    .filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);

async function newSession(c: acp.ClientConnection): Promise<string> {
  const r = await c.agent.request(acp.methods.agent.session.new, { cwd: scene.project, mcpServers: [] });
  return r.sessionId;
}

const ask = (c: acp.ClientConnection, sessionId: string, text: string) =>
  c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

describe("modes that persist", () => {
  it("set_mode sends current_mode_update before it answers; the mode survives a restart and denies a write", async () => {
    let c = await start(["--policy", "unrestricted"]);
    const sessionId = await newSession(c);
    const answered = c.agent
      .request(acp.methods.agent.session.setMode, { sessionId, modeId: "readonly" })
      .then(() => events.push({ kind: "answer", method: "set_mode" }));
    await answered;
    const modeAt = events.findIndex(
      (e) => e.kind === "update" && e.n.update.sessionUpdate === "current_mode_update",
    );
    const answerAt = events.findIndex((e) => e.kind === "answer");
    expect(modeAt).toBeGreaterThanOrEqual(0);
    expect(modeAt).toBeLessThan(answerAt);
    expect(updatesOf("current_mode_update")[0]!.currentModeId).toBe("readonly");
    const options = updatesOf("config_option_update").at(-1)!.configOptions;
    expect(options[0]).toMatchObject({ id: "mode", category: "mode", currentValue: "readonly" });

    // The agent restarts (the editor relaunched it) with the same permissive flags.
    await stop();
    events = [];
    c = await start(["--policy", "unrestricted"]);
    const loaded = await c.agent.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: scene.project,
      mcpServers: [],
    });
    expect(loaded.modes?.currentModeId).toBe("readonly");
    scene.model.push(
      step("file_write", JSON.stringify({ path: "made.txt", content: "x" })),
      step("final", "could not write"),
    );
    const r = await ask(c, sessionId, "write made.txt");
    expect(r.stopReason).toBe("end_turn");
    expect(fs.existsSync(path.join(scene.project, "made.txt"))).toBe(false);
    const failed = updatesOf("tool_call_update").find((u) => u.status === "failed");
    expect(JSON.stringify(failed?.content)).toMatch(/denied by policy: .*readonly/);
  });

  it("set_config_option on the mode option changes the mode and tells the editor", async () => {
    const c = await start();
    const sessionId = await newSession(c);
    const r = await c.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId,
      configId: "mode",
      value: "readonly",
    });
    expect(r.configOptions[0]).toMatchObject({ currentValue: "readonly" });
    expect(updatesOf("current_mode_update").map((u) => u.currentModeId)).toEqual(["readonly"]);
    await expect(
      c.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: "thought_level",
        value: "x",
      }),
    ).rejects.toThrow(/unknown config option "thought_level" \(Scoot offers "mode", "model"/);
  });

  it("a stored mode the agent does not offer (under --unattended) falls back to the agent's, with a warning", async () => {
    let c = await start(["--policy", "unrestricted"]);
    const sessionId = await newSession(c);
    await stop();
    c = await start(["--unattended"]);
    const loaded = await c.agent.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: scene.project,
      mcpServers: [],
    });
    expect(loaded.modes?.currentModeId).toBe("readonly");
    expect(stderr).toMatch(/stored in mode "unrestricted", which this agent does not offer/);
  });
});

describe("every session loads", () => {
  it("a session created and never prompted loads after a restart, is listed, and can then be prompted", async () => {
    let c = await start();
    const sessionId = await newSession(c);
    await stop();
    c = await start();
    const listed = await c.agent.request(acp.methods.agent.session.list, { cwd: scene.project });
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
    expect(listed.sessions.find((s) => s.sessionId === sessionId)?.cwd).toBe(scene.project);
    const loaded = await c.agent.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: scene.project,
      mcpServers: [],
    });
    expect(loaded.modes?.currentModeId).toBe("guarded");
    scene.model.push(step("final", "hello"));
    expect((await ask(c, sessionId, "hi")).stopReason).toBe("end_turn");
    const other = await c.agent.request(acp.methods.agent.session.list, {
      cwd: path.join(scene.project, ".."),
    });
    expect(other.sessions.map((s) => s.sessionId)).not.toContain(sessionId);
  });

  it("loading replays the tool calls and their results", async () => {
    fs.writeFileSync(path.join(scene.project, "a.txt"), "alpha\n");
    let c = await start();
    const sessionId = await newSession(c);
    scene.model.push(step("file_read", JSON.stringify({ path: "a.txt" })), step("final", "it says alpha"));
    await ask(c, sessionId, "what is in a.txt?");
    await stop();
    events = [];
    c = await start();
    await c.agent.request(acp.methods.agent.session.load, { sessionId, cwd: scene.project, mcpServers: [] });
    const replayed = events
      .flatMap((e) => (e.kind === "update" ? [e.n.update] : []))
      .filter(
        (u) => u.sessionUpdate !== "available_commands_update" && u.sessionUpdate !== "config_option_update",
      );
    expect(replayed.map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "tool_call",
      "tool_call_update",
      "agent_message_chunk",
    ]);
    expect(replayed[1]).toMatchObject({ title: "Read a.txt", kind: "read", rawInput: { path: "a.txt" } });
    expect(replayed[2]).toMatchObject({ status: "completed" });
    expect(JSON.stringify(replayed[2])).toContain("alpha");
  });

  it("offers /compact, which summarises the conversation without the model", async () => {
    fs.writeFileSync(path.join(scene.project, "a.txt"), "alpha\n".repeat(200));
    const c = await start();
    const sessionId = await newSession(c);
    const until = Date.now() + 5000;
    while (updatesOf("available_commands_update").length === 0 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    const names = updatesOf("available_commands_update")[0]!.availableCommands.map((x) => x.name);
    expect(names).toContain("compact");
    scene.model.push(step("file_read", JSON.stringify({ path: "a.txt" })), step("final", "it says alpha"));
    await ask(c, sessionId, "what is in a.txt?");
    scene.model.push(step("file_read", JSON.stringify({ path: "a.txt" })), step("final", "still alpha"));
    await ask(c, sessionId, "and now?");
    const asked = scene.model.completions().length;
    events = [];
    const r = await ask(c, sessionId, "/compact");
    expect(r.stopReason).toBe("end_turn");
    const text = updatesOf("agent_message_chunk")
      .map((u) => (u.content.type === "text" ? u.content.text : ""))
      .join("");
    expect(text).toMatch(/^compacted \d+ messages: \d+ → \d+ bytes$/);
    expect(scene.model.completions()).toHaveLength(asked);
    events = [];
    await ask(c, sessionId, "/compact now");
    expect(JSON.stringify(updatesOf("agent_message_chunk"))).toContain("/compact takes no argument");
  });

  it("session/close releases a session: its next prompt is refused, and it can be loaded again", async () => {
    const c = await start();
    const sessionId = await newSession(c);
    await c.agent.request(acp.methods.agent.session.close, { sessionId });
    await expect(ask(c, sessionId, "hi")).rejects.toThrow(/no session/);
    await c.agent.request(acp.methods.agent.session.load, { sessionId, cwd: scene.project, mcpServers: [] });
  });
});

describe("tool calls an editor can show", () => {
  it("a file_edit call carries a diff block; bash's rawInput is an object", async () => {
    fs.writeFileSync(path.join(scene.project, "README.md"), "# Title\nold line\n");
    const c = await start(["--policy", "unrestricted"]);
    const sessionId = await newSession(c);
    scene.model.push(
      step("file_edit", JSON.stringify({ path: "README.md", old: "old line", new: "new line" })),
      step("bash", "echo hi"),
      step("final", "done"),
    );
    expect((await ask(c, sessionId, "edit it")).stopReason).toBe("end_turn");
    const [edit, bash] = updatesOf("tool_call");
    expect(edit).toMatchObject({
      title: "Edit README.md",
      kind: "edit",
      locations: [{ path: path.join(scene.project, "README.md") }],
    });
    const diffs = updatesOf("tool_call_update")
      .filter((u) => u.toolCallId === edit!.toolCallId)
      .flatMap((u) => u.content ?? [])
      .filter((b) => b.type === "diff");
    expect(diffs[0]).toEqual({
      type: "diff",
      path: path.join(scene.project, "README.md"),
      oldText: "# Title\nold line\n",
      newText: "# Title\nnew line\n",
    });
    expect(fs.readFileSync(path.join(scene.project, "README.md"), "utf8")).toBe("# Title\nnew line\n");
    expect(bash).toMatchObject({ title: "Run echo hi", kind: "execute", rawInput: { command: "echo hi" } });
  });
});

describe("editor capabilities", () => {
  it("advertises list and close; offers /status, which answers without the model", async () => {
    const c = await start();
    const init = await c.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    expect(init.agentCapabilities?.sessionCapabilities).toMatchObject({ list: {}, close: {} });
    const sessionId = await newSession(c);
    const until = Date.now() + 5000;
    while (updatesOf("available_commands_update").length === 0 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    const names = updatesOf("available_commands_update")[0]!.availableCommands.map((x) => x.name);
    expect(names).toContain("status");
    const r = await ask(c, sessionId, "/status");
    expect(r.stopReason).toBe("end_turn");
    const text = updatesOf("agent_message_chunk")
      .map((u) => (u.content.type === "text" ? u.content.text : ""))
      .join("");
    expect(text).toMatch(/policy mode: guarded/);
    expect(text).toMatch(/session: acp-/);
    expect(text).toMatch(/instructions: budget \d+ bytes/);
    expect(scene.model.completions()).toHaveLength(0);
  });

  it("reads go through the editor's buffer when it offers fs.readTextFile (unsaved text is seen)", async () => {
    const file = path.join(scene.project, "app.ts");
    fs.writeFileSync(file, "const saved = 1;\n");
    buffers.set(file, "const unsaved = 2;\nline two\n");
    const c = await start([], { fs: { readTextFile: true } });
    const sessionId = await newSession(c);
    scene.model.push(
      step("file_read", JSON.stringify({ path: "app.ts" })),
      step("file_read", JSON.stringify({ path: "app.ts", offset: 2, limit: 1 })),
      step("final", "read"),
    );
    expect((await ask(c, sessionId, "read app.ts")).stopReason).toBe("end_turn");
    expect(bufferReads).toEqual([file, file]);
    const sent = JSON.stringify(scene.model.completions().map((r) => r.body));
    expect(sent).toContain("const unsaved = 2;");
    expect(sent).not.toContain("const saved = 1;");
    expect(sent).toMatch(/app\.ts.{0,8} lines 2-2 of 2\]\\nline two/);
  });

  it("without fs.readTextFile offered, reads come from the disk and the editor is not asked", async () => {
    const file = path.join(scene.project, "app.ts");
    fs.writeFileSync(file, "const saved = 1;\n");
    buffers.set(file, "const unsaved = 2;\n");
    const c = await start();
    const sessionId = await newSession(c);
    scene.model.push(step("file_read", JSON.stringify({ path: "app.ts" })), step("final", "read"));
    await ask(c, sessionId, "read app.ts");
    expect(bufferReads).toEqual([]);
    expect(JSON.stringify(scene.model.completions().map((r) => r.body))).toContain("const saved = 1;");
  });

  it("/diff shows the session's file changes and /undo reverts them, without the model", async () => {
    const file = path.join(scene.project, "notes.md");
    fs.writeFileSync(file, "before\n");
    const c = await start();
    const sessionId = await newSession(c);
    scene.model.push(
      step("file_write", JSON.stringify({ path: "notes.md", content: "after\n" })),
      step("final", "ok"),
    );
    await ask(c, sessionId, "rewrite notes");
    expect(fs.readFileSync(file, "utf8")).toBe("after\n");
    const answerOf = async (text: string) => {
      events = [];
      expect((await ask(c, sessionId, text)).stopReason).toBe("end_turn");
      return updatesOf("agent_message_chunk")
        .map((u) => (u.content.type === "text" ? u.content.text : ""))
        .join("");
    };
    const diff = await answerOf("/diff");
    expect(diff).toMatch(/-before/);
    expect(diff).toMatch(/\+after/);
    const undone = await answerOf("/undo");
    expect(undone).toMatch(/restored\s+notes\.md/);
    expect(undone).toMatch(/bash/);
    expect(fs.readFileSync(file, "utf8")).toBe("before\n");
    expect(await answerOf("/undo now")).toBe("usage: /undo [--force]");
    expect(scene.model.completions()).toHaveLength(2);
  });

  it("/undo --force does not write through a directory the model swapped for a symlink, and names it", async () => {
    const outside = fs.realpathSync(tempDir("scoot-acp-ed-outside-"));
    try {
      fs.writeFileSync(path.join(outside, "notes.md"), "the user's own file\n");
      fs.mkdirSync(path.join(scene.project, "sub"));
      fs.writeFileSync(path.join(scene.project, "sub", "notes.md"), "project\n");
      const c = await start();
      const sessionId = await newSession(c);
      scene.model.push(
        step("file_write", JSON.stringify({ path: "sub/notes.md", content: "attacker\n" })),
        step("bash", `rm -rf sub && ln -s ${outside} sub`),
        step("final", "ok"),
      );
      await ask(c, sessionId, "rewrite notes");
      expect(fs.lstatSync(path.join(scene.project, "sub")).isSymbolicLink()).toBe(true);
      events = [];
      expect((await ask(c, sessionId, "/undo --force")).stopReason).toBe("end_turn");
      const answer = updatesOf("agent_message_chunk")
        .map((u) => (u.content.type === "text" ? u.content.text : ""))
        .join("");
      expect(fs.readFileSync(path.join(outside, "notes.md"), "utf8")).toBe("the user's own file\n");
      expect(answer).toContain("sub/notes.md");
      expect(answer).toMatch(/refused/);
      expect(answer).not.toMatch(/restored\s+sub\/notes\.md/);
    } finally {
      removeDir(outside);
    }
  });
});
