/**
 * The editor's question shows what will be written (docs/editors.md "Editors (ACP)"): a write
 * whose text holds a NUL byte, an escape sequence or a bidi override reaches
 * `session/request_permission` with its diff — the text escaped as the keyboard shows it — and a
 * line warning and counting what was escaped. The file still gets the very bytes asked for. The
 * official SDK's client plays the editor (it checks every message against the v1 schema) and
 * drives the built CLI against the scripted model server.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({
  home: "scoot-acp-hc-home-",
  project: "scoot-acp-hc-project-",
  realProject: true,
  model: true,
});
let child: ChildProcess | undefined;
let connection: acp.ClientConnection | undefined;
let updates: acp.SessionUpdate[] = [];
let asked: acp.RequestPermissionRequest[] = [];

beforeEach(() => {
  updates = [];
  asked = [];
});
afterEach(async () => {
  const [c, conn] = [child, connection];
  child = undefined;
  connection = undefined;
  await closeAgent(conn, c);
});

async function start(): Promise<acp.ClientConnection> {
  child = spawnCli(["acp"], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_BACKEND_MAX_RETRIES: "0" },
  });
  child.stderr!.resume();
  connection = acp
    .client({ name: "scoot-hidden-characters-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected" as const, optionId: "allow_once" } };
    })
    .connect(agentStream(child));
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  return connection;
}

async function promptOnce(text: string): Promise<void> {
  const c = await start();
  const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
    cwd: scene.project,
    mcpServers: [],
  });
  const r = await c.agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  });
  expect(r.stopReason).toBe("end_turn");
}

/** A NUL byte, an ESC starting a colour sequence and a right-to-left override. */
const HOSTILE = "line one\n\u0000\u001b[31mred\u202eevil.sh\n";
const SHOWN = "line one\n\\x00\\x1b[31mred\\u202eevil.sh\n";
const WARNING =
  "⚠ this holds 1 NUL byte and 2 control or invisible characters, shown escaped (\\x00, \\u202e): read it with care";

describe("a write holding control characters is asked about with its diff, escaped, and a warning", () => {
  it("an existing file: the diff shows the new text escaped, a text line counts what was escaped", async () => {
    fs.writeFileSync(path.join(scene.project, "notes.txt"), "original\n");
    scene.model.push(
      step("file_write", JSON.stringify({ path: "notes.txt", content: HOSTILE })),
      step("final", "written"),
    );
    await promptOnce("write notes.txt");
    expect(asked).toHaveLength(1);
    const content = asked[0]!.toolCall.content;
    expect(content).toEqual([
      { type: "diff", path: path.join(scene.project, "notes.txt"), oldText: "original\n", newText: SHOWN },
      { type: "content", content: { type: "text", text: WARNING } },
    ]);
    // Nothing raw reaches what the question shows (rawInput stays the model's input, as JSON).
    expect(JSON.stringify(content)).not.toMatch(/\\u0000|\\u001b|\u202e/);
    expect(JSON.stringify(content)).toMatch(/\\\\x00/);
    // The pending tool call the editor shows first carries the same escaped diff.
    const call = updates.find((u) => u.sessionUpdate === "tool_call");
    expect(JSON.stringify(call)).toContain(JSON.stringify(SHOWN));
    // The file holds the very bytes the model asked for: escaping is for the eyes only.
    expect(fs.readFileSync(path.join(scene.project, "notes.txt"), "utf8")).toBe(HOSTILE);
  });

  it("a new file: the same escaped diff (old text null) and warning", async () => {
    scene.model.push(
      step("file_write", JSON.stringify({ path: "fresh.txt", content: HOSTILE })),
      step("final", "written"),
    );
    await promptOnce("write fresh.txt");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.toolCall.content).toEqual([
      { type: "diff", path: path.join(scene.project, "fresh.txt"), oldText: null, newText: SHOWN },
      { type: "content", content: { type: "text", text: WARNING } },
    ]);
    expect(fs.readFileSync(path.join(scene.project, "fresh.txt"), "utf8")).toBe(HOSTILE);
  });

  it("ordinary text (tabs, CRLF line ends) is shown as it is, with no warning", async () => {
    fs.writeFileSync(path.join(scene.project, "plain.txt"), "a\r\nb\r\n");
    scene.model.push(
      step("file_write", JSON.stringify({ path: "plain.txt", content: "a\r\n\tc\r\n" })),
      step("final", "written"),
    );
    await promptOnce("write plain.txt");
    expect(asked[0]!.toolCall.content).toEqual([
      {
        type: "diff",
        path: path.join(scene.project, "plain.txt"),
        oldText: "a\r\nb\r\n",
        newText: "a\r\n\tc\r\n",
      },
    ]);
  });
});
