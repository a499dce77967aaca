/**
 * Approval through the editor (docs/editors.md "Editors (ACP)"): with `tools.approval = "ask"` (the
 * default for `scoot acp`) every call with an effect sends `session/request_permission`; the
 * answer is honoured and remembered as the option says. The official SDK's client plays the
 * editor and drives the built CLI against the scripted model server.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { auditEvents } from "../helpers/audit-file.js";
import { removeDir, spawnCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({
  home: "scoot-acp-ap-home-",
  project: "scoot-acp-ap-project-",
  realProject: true,
  model: true,
});
let child: ChildProcess | undefined;
let connection: acp.ClientConnection | undefined;
let updates: acp.SessionUpdate[] = [];
let asked: acp.RequestPermissionRequest[] = [];
/** How the test editor answers a permission request. */
let answer: (signal: AbortSignal) => Promise<acp.RequestPermissionOutcome> | acp.RequestPermissionOutcome;

const choose = (optionId: string) => () => ({ outcome: "selected" as const, optionId });

beforeEach(async () => {
  updates = [];
  asked = [];
  answer = choose("allow_once");
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

async function start(args: string[] = [], env: Record<string, string> = {}): Promise<acp.ClientConnection> {
  child = spawnCli(["acp", ...args], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_BACKEND_MAX_RETRIES: "0", ...env },
  });
  child.stderr!.resume();
  connection = acp
    .client({ name: "scoot-approval-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
      asked.push(params);
      return { outcome: await answer(signal) };
    })
    .connect(agentStream(child));
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  return connection;
}

async function newSession(c: acp.ClientConnection): Promise<string> {
  return (await c.agent.request(acp.methods.agent.session.new, { cwd: scene.project, mcpServers: [] }))
    .sessionId;
}
const ask = (c: acp.ClientConnection, sessionId: string, text: string) =>
  c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
const of = <K extends acp.SessionUpdate["sessionUpdate"]>(kind: K) =>
  updates.filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);
const transcript = (id: string) =>
  fs.readFileSync(path.join(scene.home, "state", "sessions", `${id}.jsonl`), "utf8");

describe("permission through the editor", () => {
  it("reject leaves the file untouched; the model and the transcript get the refusal", async () => {
    fs.writeFileSync(path.join(scene.project, "keep.txt"), "original\n");
    answer = choose("reject_once");
    scene.model.push(
      step("file_write", JSON.stringify({ path: "keep.txt", content: "clobbered\n" })),
      step("final", "you refused"),
    );
    const c = await start();
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "overwrite keep.txt")).stopReason).toBe("end_turn");
    expect(fs.readFileSync(path.join(scene.project, "keep.txt"), "utf8")).toBe("original\n");
    expect(asked).toHaveLength(1);
    const req = asked[0]!;
    expect(req.sessionId).toBe(sessionId);
    expect(req.options.map((o) => o.kind)).toEqual([
      "allow_once",
      "allow_always",
      "reject_once",
      "reject_always",
    ]);
    // The question names the tool call the editor already shows, with the diff it would make.
    const call = of("tool_call")[0]!;
    expect(req.toolCall.toolCallId).toBe(call.toolCallId);
    expect(req.toolCall).toMatchObject({ title: "Write keep.txt", kind: "edit" });
    expect(req.toolCall.content).toEqual([
      {
        type: "diff",
        path: path.join(scene.project, "keep.txt"),
        oldText: "original\n",
        newText: "clobbered\n",
      },
    ]);
    const ended = of("tool_call_update")
      .filter((u) => u.toolCallId === call.toolCallId)
      .at(-1)!;
    expect(ended.status).toBe("failed");
    expect(JSON.stringify(ended.content)).toMatch(/refused by the user/);
    expect(transcript(sessionId)).toMatch(/not run: the user refused this file_write call/);
    expect(JSON.stringify(scene.model.completions().at(-1)!.body)).toMatch(
      /the user refused this file_write call/,
    );
    const approvals = auditEvents(scene.home, { sessionId }).filter((e) => e.kind === "approval");
    expect(approvals.map((e) => e.msg.split(":")[0])).toEqual(["asked", "answer=refuse"]);
  });

  it("allow always asks once for that file, says so, and the choice survives a restart of the agent", async () => {
    answer = choose("allow_always");
    scene.model.push(
      step("file_write", JSON.stringify({ path: "a.txt", content: "a" })),
      step("file_write", JSON.stringify({ path: "./a.txt", content: "b" })),
      step("final", "wrote it twice"),
    );
    let c = await start();
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "write a file twice")).stopReason).toBe("end_turn");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.options.map((o) => o.name)).toEqual([
      "Allow once",
      "Allow always (writes to a.txt, this session)",
      "Reject",
      "Reject always (writes to a.txt, this session)",
    ]);
    expect(fs.readFileSync(path.join(scene.project, "a.txt"), "utf8")).toBe("b");

    await stop();
    answer = choose("reject_once");
    c = await start();
    await c.agent.request(acp.methods.agent.session.load, { sessionId, cwd: scene.project, mcpServers: [] });
    scene.model.push(
      step("file_write", JSON.stringify({ path: "sub/../a.txt", content: "c" })),
      step("final", "ok"),
    );
    await ask(c, sessionId, "and a third time");
    expect(asked).toHaveLength(1);
    expect(fs.readFileSync(path.join(scene.project, "a.txt"), "utf8")).toBe("c");
    // Another file, and another tool on the same file, are still asked.
    scene.model.push(
      step("file_write", JSON.stringify({ path: "b.txt", content: "b" })),
      step("file_edit", JSON.stringify({ path: "a.txt", old: "c", new: "d" })),
      step("final", "refused"),
    );
    await ask(c, sessionId, "write and edit");
    expect(asked).toHaveLength(3);
    expect(fs.existsSync(path.join(scene.project, "b.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(scene.project, "a.txt"), "utf8")).toBe("c");
  });

  it("an 'allow always' belongs to its project: loaded into another project it asks again, back in its own it does not", async () => {
    const other = fs.realpathSync(tempDir("scoot-acp-ap-other-"));
    try {
      answer = choose("allow_always");
      scene.model.push(
        step("file_write", JSON.stringify({ path: "notes.txt", content: "a" })),
        step("final", "wrote it"),
      );
      let c = await start();
      const sessionId = await newSession(c);
      await ask(c, sessionId, "write notes");
      expect(asked).toHaveLength(1);
      expect(fs.readFileSync(path.join(scene.project, "notes.txt"), "utf8")).toBe("a");

      // The same session, loaded by an editor into another project: notes.txt there is another file.
      await stop();
      answer = choose("reject_once");
      c = await start();
      await c.agent.request(acp.methods.agent.session.load, { sessionId, cwd: other, mcpServers: [] });
      scene.model.push(
        step("file_write", JSON.stringify({ path: "notes.txt", content: "clobbered" })),
        step("final", "tried"),
      );
      await ask(c, sessionId, "write notes again");
      expect(asked).toHaveLength(2);
      expect(asked[1]!.toolCall.content).toEqual([
        { type: "diff", path: path.join(other, "notes.txt"), oldText: null, newText: "clobbered" },
      ]);
      expect(fs.existsSync(path.join(other, "notes.txt"))).toBe(false);

      // Loaded back into its own project (same agent): the answer is still there, not asked.
      await c.agent.request(acp.methods.agent.session.load, {
        sessionId,
        cwd: scene.project,
        mcpServers: [],
      });
      scene.model.push(
        step("file_write", JSON.stringify({ path: "notes.txt", content: "c" })),
        step("final", "wrote it"),
      );
      await ask(c, sessionId, "and once more");
      expect(asked).toHaveLength(2);
      expect(fs.readFileSync(path.join(scene.project, "notes.txt"), "utf8")).toBe("c");
    } finally {
      removeDir(other);
    }
  });

  it("an older session's stored answers (no project of their own) hold only in the project it was recorded in", async () => {
    const other = fs.realpathSync(tempDir("scoot-acp-ap-other-"));
    try {
      let c = await start();
      const sessionId = await newSession(c);
      await stop();
      // The sidecar as an earlier Scoot wrote it: the answers, and the project root beside them.
      const sidecar = path.join(scene.home, "state", "sessions", `${sessionId}.settings.json`);
      const legacy = (root?: string) =>
        fs.writeFileSync(
          sidecar,
          JSON.stringify({
            mode: "guarded",
            approvals: ["file_write:notes.txt"],
            refusals: [],
            ...(root ? { project_root: root } : {}),
          }),
        );
      legacy(scene.project);
      answer = choose("reject_once");
      const writeNotes = async (cwd: string, text: string) => {
        await c.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
        scene.model.push(
          step("file_write", JSON.stringify({ path: "notes.txt", content: text })),
          step("final", "done"),
        );
        await ask(c, sessionId, "write notes");
      };
      c = await start();
      await writeNotes(other, "clobbered");
      expect(asked).toHaveLength(1);
      expect(fs.existsSync(path.join(other, "notes.txt"))).toBe(false);
      await writeNotes(scene.project, "mine");
      expect(asked).toHaveLength(1);
      expect(fs.readFileSync(path.join(scene.project, "notes.txt"), "utf8")).toBe("mine");
      await stop();

      // With no project recorded the answers are dropped: asked, even in the session's own project.
      legacy(undefined);
      c = await start();
      await writeNotes(scene.project, "again");
      expect(asked).toHaveLength(2);
      expect(fs.readFileSync(path.join(scene.project, "notes.txt"), "utf8")).toBe("mine");
    } finally {
      removeDir(other);
    }
  });

  it("rules answer for the editor: deny refuses without asking and the tool call names the rule; allow runs unasked", async () => {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      '[[tools.rules]]\ntool = "bash"\nmatch = "git clean"\ndecision = "deny"\n\n[[tools.rules]]\ntool = "file_write"\nmatch = "ok.txt"\ndecision = "allow"\n',
    );
    scene.model.push(
      step("bash", "git clean -fdx"),
      step("file_write", JSON.stringify({ path: "ok.txt", content: "ok" })),
      step("final", "done"),
    );
    const c = await start();
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "clean and write")).stopReason).toBe("end_turn");
    expect(asked).toEqual([]);
    expect(fs.readFileSync(path.join(scene.project, "ok.txt"), "utf8")).toBe("ok");
    const failed = of("tool_call_update").filter((u) => u.status === "failed");
    expect(JSON.stringify(failed.map((u) => u.content))).toContain(
      'not run: denied by rule tools.rules[0] (deny bash \\"git clean\\")',
    );
    expect(JSON.stringify(failed.map((u) => u.content))).not.toContain("refused by the user");
  });

  it("a known-safe command runs without a permission request, shown as a tool call; rm still asks", async () => {
    fs.writeFileSync(path.join(scene.project, "x"), "keep me\n");
    answer = choose("reject_once");
    scene.model.push(step("bash", "ls"), step("bash", "rm x"), step("final", "looked"));
    const c = await start();
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "look around")).stopReason).toBe("end_turn");
    expect(asked.map((a) => a.toolCall.title)).toEqual(["Run rm x"]);
    expect(fs.existsSync(path.join(scene.project, "x"))).toBe(true);
    expect(of("tool_call").map((u) => u.title)).toEqual(["Run ls", "Run rm x"]);
    expect(of("tool_call_update").some((u) => u.status === "completed")).toBe(true);
    expect(
      auditEvents(scene.home)
        .filter((e) => e.kind === "approval")
        .map((e) => e.msg.split(":")[0]),
    ).toEqual(["allowed as a known-safe command", "asked", "answer=refuse"]);
  });

  it("reject always refuses the same scope again without asking", async () => {
    answer = choose("reject_always");
    scene.model.push(
      step("bash", "touch a.txt"),
      step("bash", "touch  a.txt"),
      step("final", "refused twice"),
    );
    const c = await start();
    const sessionId = await newSession(c);
    await ask(c, sessionId, "touch twice");
    expect(asked).toHaveLength(1);
    expect(fs.existsSync(path.join(scene.project, "a.txt"))).toBe(false);
    expect(transcript(sessionId)).toMatch(/reject always/);
  });

  it("a cancelled prompt cancels the pending permission request; nothing runs", async () => {
    let cancelled = false;
    answer = (signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          cancelled = true;
          resolve({ outcome: "cancelled" });
        });
      });
    scene.model.push(step("file_write", JSON.stringify({ path: "never.txt", content: "x" })));
    const c = await start();
    const sessionId = await newSession(c);
    const pending = ask(c, sessionId, "write it");
    const until = Date.now() + 10_000;
    while (asked.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(asked).toHaveLength(1);
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await pending).stopReason).toBe("cancelled");
    const waitCancel = Date.now() + 5_000;
    while (!cancelled && Date.now() < waitCancel) await new Promise((r) => setTimeout(r, 20));
    expect(cancelled).toBe(true);
    expect(fs.existsSync(path.join(scene.project, "never.txt"))).toBe(false);
  });

  it("reads never ask; --approval never and --unattended never ask, the gate alone decides", async () => {
    fs.writeFileSync(path.join(scene.project, "r.txt"), "read me\n");
    scene.model.push(step("file_read", JSON.stringify({ path: "r.txt" })), step("final", "read"));
    let c = await start();
    let sessionId = await newSession(c);
    await ask(c, sessionId, "read it");
    expect(asked).toHaveLength(0);
    await stop();

    scene.model.push(
      step("file_write", JSON.stringify({ path: "n.txt", content: "n" })),
      step("final", "ok"),
    );
    c = await start(["--approval", "never"]);
    sessionId = await newSession(c);
    await ask(c, sessionId, "write it");
    expect(asked).toHaveLength(0);
    expect(fs.existsSync(path.join(scene.project, "n.txt"))).toBe(true);
    await stop();

    scene.model.push(
      step("file_write", JSON.stringify({ path: "u.txt", content: "u" })),
      step("final", "ok"),
    );
    c = await start(["--unattended", "--policy", "unrestricted"], {
      SCOOT_EDGE_MAX_JOB_POLICY: "unrestricted",
    });
    sessionId = await newSession(c);
    await ask(c, sessionId, "write it");
    expect(asked).toHaveLength(0);
    expect(fs.existsSync(path.join(scene.project, "u.txt"))).toBe(true);
  });
});
