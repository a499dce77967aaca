/**
 * `scoot acp` as Zed, JetBrains and the other real clients expect it (issue 34; docs/editors.md
 * "Editors (ACP)"): the `tool_call` of a gated call before the permission request for it, and
 * never twice; writes through the editor when it offers `fs.writeTextFile`; a prompt right
 * after `session/cancel`; a reload that shows each call's real ending; usage updates; the
 * model chosen from the server's list. The official SDK's client plays the editor (it
 * validates every message it receives against the official v1 schema before a handler sees
 * it) and drives the built CLI against the scripted model server.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { removeDir, spawnCli, tempDir } from "../helpers/cli.js";
import { uniqueSleepArg, waitForProcess } from "../helpers/procs.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({
  home: "scoot-acp-ct-home-",
  project: "scoot-acp-ct-project-",
  realProject: true,
  model: true,
});

/** Everything the test editor received or was asked, in arrival order. */
type Seen =
  | { kind: "update"; update: acp.SessionUpdate }
  | { kind: "permission"; request: acp.RequestPermissionRequest }
  | { kind: "write"; path: string; content: string; diskThen: string | null }
  | { kind: "read"; path: string };

let child: ChildProcess | undefined;
let connection: acp.ClientConnection | undefined;
let seen: Seen[] = [];
/** The agent's answer to `initialize`. */
let initialized: acp.InitializeResponse | undefined;
let stderr = "";
/** What the test editor holds open (path → unsaved text). */
let buffers = new Map<string, string>();
/** How the test editor answers a permission request. */
let answer: (
  request: acp.RequestPermissionRequest,
  signal: AbortSignal,
) => Promise<acp.RequestPermissionOutcome> | acp.RequestPermissionOutcome;
/** How the test editor writes a file (default: its buffer and the disk). */
let writeFile: (p: string, content: string) => void;

const allowOnce = (): acp.RequestPermissionOutcome => ({ outcome: "selected", optionId: "allow_once" });

beforeEach(() => {
  seen = [];
  stderr = "";
  buffers = new Map();
  answer = allowOnce;
  writeFile = (p, content) => {
    fs.writeFileSync(p, content);
    buffers.set(p, content);
  };
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

const diskText = (p: string): string | null => (fs.existsSync(p) ? fs.readFileSync(p, "utf8") : null);

async function start(
  args: string[] = [],
  clientCapabilities: acp.ClientCapabilities = {},
  env: Record<string, string> = {},
): Promise<acp.ClientConnection> {
  child = spawnCli(["acp", ...args], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_BACKEND_MAX_RETRIES: "0", ...env },
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  connection = acp
    .client({ name: "scoot-contract-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      seen.push({ kind: "update", update: params.update });
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
      seen.push({ kind: "permission", request: params });
      return { outcome: await answer(params, signal) };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      seen.push({ kind: "read", path: params.path });
      return { content: buffers.get(params.path) ?? fs.readFileSync(params.path, "utf8") };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      seen.push({
        kind: "write",
        path: params.path,
        content: params.content,
        diskThen: diskText(params.path),
      });
      writeFile(params.path, params.content);
      return {};
    })
    .connect(agentStream(child));
  initialized = await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities,
  });
  return connection;
}

async function newSession(c: acp.ClientConnection): Promise<string> {
  return (await c.agent.request(acp.methods.agent.session.new, { cwd: scene.project, mcpServers: [] }))
    .sessionId;
}
const ask = (c: acp.ClientConnection, sessionId: string, text: string) =>
  c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

const updates = () => seen.flatMap((s) => (s.kind === "update" ? [s.update] : []));
const of = <K extends acp.SessionUpdate["sessionUpdate"]>(kind: K) =>
  updates().filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);
const writes = () => seen.flatMap((s) => (s.kind === "write" ? [s] : []));
const permissions = () => seen.flatMap((s) => (s.kind === "permission" ? [s.request] : []));
/** The last status each tool call reached, by its title. */
function finalStatuses(list: acp.SessionUpdate[]): Record<string, string | null | undefined> {
  const title = new Map<string, string>();
  const out: Record<string, string | null | undefined> = {};
  for (const u of list) {
    if (u.sessionUpdate === "tool_call") {
      title.set(u.toolCallId, u.title);
      out[u.title] = u.status;
    } else if (u.sessionUpdate === "tool_call_update" && u.status) out[title.get(u.toolCallId)!] = u.status;
  }
  return out;
}
async function until(what: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

describe("the tool_call goes before the permission request for it", () => {
  it("bash, file_write and file_edit: one pending tool_call (the diff of a write in it), then the question, then only updates", async () => {
    fs.writeFileSync(path.join(scene.project, "README.md"), "# Title\nold line\n");
    scene.model.push(
      step("bash", "echo hi", "a long thought that streams before the call ".repeat(20)),
      step("file_write", JSON.stringify({ path: "notes.txt", content: "new notes\n" })),
      step("file_edit", JSON.stringify({ path: "README.md", old: "old line", new: "new line" })),
      step("final", "done"),
    );
    const c = await start();
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "do three things")).stopReason).toBe("end_turn");
    const asked = permissions();
    expect(asked.map((r) => r.toolCall.title)).toEqual(["Run echo hi", "Write notes.txt", "Edit README.md"]);
    for (const request of asked) {
      const id = request.toolCall.toolCallId;
      const at = seen.findIndex((s) => s.kind === "permission" && s.request === request);
      const forId = seen
        .map((s, i) => ({ s, i }))
        .filter(
          ({ s }) =>
            s.kind === "update" &&
            (s.update.sessionUpdate === "tool_call" || s.update.sessionUpdate === "tool_call_update") &&
            s.update.toolCallId === id,
        );
      const calls = forId.filter(({ s }) => s.kind === "update" && s.update.sessionUpdate === "tool_call");
      // Exactly one tool_call for the id (a second one resets the call in Zed), and before the question.
      expect(calls, request.toolCall.title ?? id).toHaveLength(1);
      expect(calls[0]!.i).toBeLessThan(at);
      const call = (calls[0]!.s as { update: Extract<acp.SessionUpdate, { sessionUpdate: "tool_call" }> })
        .update;
      expect(call).toMatchObject({
        status: "pending",
        title: request.toolCall.title,
        kind: request.toolCall.kind,
      });
      expect(call.locations ?? []).toEqual(request.toolCall.locations ?? []);
      expect(call.rawInput).toEqual(request.toolCall.rawInput);
      // Everything after it for this id is an update, ending completed.
      expect(
        forId
          .filter(({ i }) => i > calls[0]!.i)
          .every(({ s }) => s.kind === "update" && s.update.sessionUpdate === "tool_call_update"),
      ).toBe(true);
      expect(forId.at(-1)!.s).toMatchObject({ update: { status: "completed" } });
    }
    const [bash, write, edit] = of("tool_call");
    expect(bash).toMatchObject({ kind: "execute", rawInput: { command: "echo hi" } });
    expect(bash!.content ?? []).toEqual([]);
    expect(write!.content).toEqual([
      { type: "diff", path: path.join(scene.project, "notes.txt"), oldText: null, newText: "new notes\n" },
    ]);
    expect(edit!.content).toEqual([
      {
        type: "diff",
        path: path.join(scene.project, "README.md"),
        oldText: "# Title\nold line\n",
        newText: "# Title\nnew line\n",
      },
    ]);
    expect(asked[2]!.toolCall.content).toEqual(edit!.content);
    expect(fs.readFileSync(path.join(scene.project, "README.md"), "utf8")).toBe("# Title\nnew line\n");
  });
});

describe("writes go through the editor when it offers fs.writeTextFile", () => {
  it("an edit built from the unsaved buffer applies; fs/write_text_file gets the new text; the disk waits for the editor", async () => {
    const file = path.join(scene.project, "app.ts");
    fs.writeFileSync(file, "const saved = 1;\n");
    buffers.set(file, "const unsaved = 2;\nline two\n");
    scene.model.push(
      step("file_read", JSON.stringify({ path: "app.ts" })),
      step(
        "file_edit",
        JSON.stringify({ path: "app.ts", old: "const unsaved = 2;", new: "const unsaved = 3;" }),
      ),
      step("final", "edited"),
    );
    const c = await start([], { fs: { readTextFile: true, writeTextFile: true } });
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "bump the constant")).stopReason).toBe("end_turn");
    // The question shows what the editor will hold: from its buffer, not the disk.
    expect(permissions()[0]!.toolCall.content).toEqual([
      {
        type: "diff",
        path: file,
        oldText: "const unsaved = 2;\nline two\n",
        newText: "const unsaved = 3;\nline two\n",
      },
    ]);
    expect(writes()).toEqual([
      {
        kind: "write",
        path: file,
        content: "const unsaved = 3;\nline two\n",
        diskThen: "const saved = 1;\n",
      },
    ]);
    // The write comes after the approval (the editor's own write is the only one).
    const askedAt = seen.findIndex((s) => s.kind === "permission");
    expect(seen.findIndex((s) => s.kind === "write")).toBeGreaterThan(askedAt);
    expect(fs.readFileSync(file, "utf8")).toBe("const unsaved = 3;\nline two\n");
    const done = of("tool_call_update").at(-1)!;
    expect(done.status).toBe("completed");
    expect(JSON.stringify(done.content)).toContain("through the editor");
    // Undo puts back the text the person had (their unsaved lines included), on disk.
    seen = [];
    expect((await ask(c, sessionId, "/undo")).stopReason).toBe("end_turn");
    expect(fs.readFileSync(file, "utf8")).toBe("const unsaved = 2;\nline two\n");
  });

  it("a buffer the person edits while the question waits is not overwritten", async () => {
    const file = path.join(scene.project, "todo.md");
    fs.writeFileSync(file, "- one\n");
    buffers.set(file, "- one\n");
    answer = () => {
      buffers.set(file, "- one\n- typed while asked\n");
      return allowOnce();
    };
    scene.model.push(
      step("file_edit", JSON.stringify({ path: "todo.md", old: "- one", new: "- 1" })),
      step("final", "ok"),
    );
    const c = await start([], { fs: { readTextFile: true, writeTextFile: true } });
    const sessionId = await newSession(c);
    await ask(c, sessionId, "renumber");
    expect(writes()).toEqual([]);
    const ended = of("tool_call_update").at(-1)!;
    expect(ended.status).toBe("failed");
    expect(JSON.stringify(ended.content)).toMatch(
      /the editor's text of it changed after this call was prepared/,
    );
    expect(fs.readFileSync(file, "utf8")).toBe("- one\n");
  });

  it("the editor's error fails the call with its words, and Scoot writes nothing behind its back", async () => {
    const file = path.join(scene.project, "keep.txt");
    fs.writeFileSync(file, "original\n");
    writeFile = () => {
      throw new acp.RequestError(-32000, "the buffer is read-only");
    };
    scene.model.push(
      step("file_write", JSON.stringify({ path: "keep.txt", content: "replaced\n" })),
      step("final", "could not"),
    );
    const c = await start([], { fs: { writeTextFile: true } });
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "replace keep.txt")).stopReason).toBe("end_turn");
    expect(writes()).toHaveLength(1);
    expect(fs.readFileSync(file, "utf8")).toBe("original\n");
    const ended = of("tool_call_update").at(-1)!;
    expect(ended.status).toBe("failed");
    expect(JSON.stringify(ended.content)).toMatch(
      /cannot write .*keep\.txt.* through the editor: the editor answered: the buffer is read-only; Scoot did not write it itself/,
    );
    // An exception in the editor's handler reaches the model with its text, not just "Internal error".
    writeFile = () => {
      throw new Error("disk quota exceeded");
    };
    scene.model.push(
      step("file_write", JSON.stringify({ path: "keep.txt", content: "again\n" })),
      step("final", "could not"),
    );
    await ask(c, sessionId, "again");
    expect(JSON.stringify(scene.model.completions().at(-1)!.body)).toContain("disk quota exceeded");
    expect(fs.readFileSync(file, "utf8")).toBe("original\n");
  });

  it("a directory swapped for a symlink while the question waits: the editor is not asked to write there", async () => {
    const outside = fs.realpathSync(tempDir("scoot-acp-ct-outside-"));
    try {
      fs.mkdirSync(path.join(scene.project, "sub"));
      fs.writeFileSync(path.join(scene.project, "sub", "notes.md"), "same\n");
      fs.writeFileSync(path.join(outside, "notes.md"), "same\n");
      answer = () => {
        // The attacker's move: the judged directory becomes a link out of the project.
        fs.rmSync(path.join(scene.project, "sub"), { recursive: true });
        fs.symlinkSync(outside, path.join(scene.project, "sub"));
        return allowOnce();
      };
      scene.model.push(
        step("file_write", JSON.stringify({ path: "sub/notes.md", content: "attacker\n" })),
        step("final", "ok"),
      );
      const c = await start([], { fs: { writeTextFile: true } });
      const sessionId = await newSession(c);
      expect((await ask(c, sessionId, "rewrite notes")).stopReason).toBe("end_turn");
      expect(permissions()).toHaveLength(1);
      expect(writes()).toEqual([]);
      expect(fs.readFileSync(path.join(outside, "notes.md"), "utf8")).toBe("same\n");
      expect(of("tool_call_update").at(-1)!.status).toBe("failed");
    } finally {
      removeDir(outside);
    }
  });

  it("a directory swapped for a link and back while the editor writes: the call fails and says so", async () => {
    const outside = fs.realpathSync(tempDir("scoot-acp-ct-outside-"));
    try {
      const deep = path.join(scene.project, "deep");
      fs.mkdirSync(deep);
      writeFile = (p, content) => {
        // The swap an attacker's leftover process could make while the editor works, undone after.
        fs.renameSync(deep, `${deep}-moved`);
        fs.symlinkSync(outside, deep);
        fs.writeFileSync(p, content);
        fs.unlinkSync(deep);
        fs.renameSync(`${deep}-moved`, deep);
      };
      scene.model.push(
        step("file_write", JSON.stringify({ path: "deep/notes.md", content: "text\n" })),
        step("final", "ok"),
      );
      const c = await start(["--approval", "never"], { fs: { writeTextFile: true } });
      const sessionId = await newSession(c);
      await ask(c, sessionId, "write notes");
      expect(writes()).toHaveLength(1);
      const ended = of("tool_call_update").at(-1)!;
      expect(ended.status).toBe("failed");
      expect(JSON.stringify(ended.content)).toMatch(
        /a directory on its path changed while the editor wrote it/,
      );
    } finally {
      removeDir(outside);
    }
  });

  it("an editor that keeps the write in its buffer: the call fails saying the text is only there, not on disk", async () => {
    const file = path.join(scene.project, "kept.txt");
    fs.writeFileSync(file, "on disk\n");
    writeFile = (p, content) => {
      buffers.set(p, content);
    };
    scene.model.push(
      step("file_write", JSON.stringify({ path: "kept.txt", content: "in the buffer\n" })),
      step("file_write", JSON.stringify({ path: "fresh.txt", content: "new\n" })),
      step("final", "told"),
    );
    const c = await start(["--approval", "never"], { fs: { readTextFile: true, writeTextFile: true } });
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "write both")).stopReason).toBe("end_turn");
    expect(writes().map((w) => w.content)).toEqual(["in the buffer\n", "new\n"]);
    expect(fs.readFileSync(file, "utf8")).toBe("on disk\n");
    expect(fs.existsSync(path.join(scene.project, "fresh.txt"))).toBe(false);
    const ended = of("tool_call_update").filter((u) => u.status === "failed");
    expect(ended).toHaveLength(2);
    for (const u of ended)
      expect(JSON.stringify(u.content)).toMatch(
        /did not save it: it is only in the editor's buffer, not on disk, so commands \(bash, grep\), \/diff and \/undo still see the old text; save the file in the editor/,
      );
    // The model is told the same words; /diff agrees: nothing changed on disk.
    const told = JSON.stringify(scene.model.completions().at(-1)!.body);
    expect(told).toContain("only in the editor's buffer, not on disk");
    seen = [];
    await ask(c, sessionId, "/diff");
    expect(JSON.stringify(of("agent_message_chunk"))).not.toContain("kept.txt");
  });

  it("an editor that formats on save: the observation and the diff report the saved text", async () => {
    const file = path.join(scene.project, "fmt.ts");
    fs.writeFileSync(file, "const a=1\n");
    const formatted = (t: string) => t.replace(/=/g, " = ").replace(/\n/g, ";\n");
    writeFile = (p, content) => {
      fs.writeFileSync(p, formatted(content));
      buffers.set(p, formatted(content));
    };
    scene.model.push(
      step("file_write", JSON.stringify({ path: "fmt.ts", content: "const b=2\n" })),
      step("final", "ok"),
    );
    const c = await start(["--approval", "never"], { fs: { writeTextFile: true } });
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "rewrite")).stopReason).toBe("end_turn");
    expect(fs.readFileSync(file, "utf8")).toBe("const b = 2;\n");
    const done = of("tool_call_update").at(-1)!;
    expect(done.status).toBe("completed");
    expect(done.content?.[0]).toEqual({
      type: "diff",
      path: file,
      oldText: "const a=1\n",
      newText: "const b = 2;\n",
    });
    expect(JSON.stringify(done.content)).toMatch(
      /wrote 13 bytes .*the editor saved a different text than the one asked for \(formatted on save\?\)/,
    );
    const told = JSON.stringify(scene.model.completions().at(-1)!.body);
    expect(told).toContain("the editor saved a different text than the one asked for");
    // /diff shows what was saved.
    seen = [];
    await ask(c, sessionId, "/diff");
    expect(JSON.stringify(of("agent_message_chunk"))).toContain("const b = 2;");
  });

  it("unrestricted, a file outside the project: Scoot writes the disk; the editor (refusing it) is not asked", async () => {
    const outside = fs.realpathSync(tempDir("scoot-acp-ct-outside-"));
    try {
      const far = path.join(outside, "far.txt");
      fs.writeFileSync(far, "far\n");
      writeFile = (p, content) => {
        // Zed's answer for a path outside its worktrees.
        if (!p.startsWith(`${scene.project}/`))
          throw new acp.RequestError(-32000, "path is outside the project");
        fs.writeFileSync(p, content);
      };
      scene.model.push(
        step("file_write", JSON.stringify({ path: far, content: "replaced far\n" })),
        step("file_edit", JSON.stringify({ path: far, old: "replaced far", new: "edited far" })),
        step("file_write", JSON.stringify({ path: "near.txt", content: "near\n" })),
        step("final", "ok"),
      );
      const c = await start(["--policy", "unrestricted", "--approval", "never"], {
        fs: { readTextFile: true, writeTextFile: true },
      });
      const sessionId = await newSession(c);
      expect((await ask(c, sessionId, "write far and near")).stopReason).toBe("end_turn");
      expect(fs.readFileSync(far, "utf8")).toBe("edited far\n");
      expect(writes().map((w) => w.path)).toEqual([path.join(scene.project, "near.txt")]);
      const ended = of("tool_call_update").filter((u) => u.status === "completed" || u.status === "failed");
      expect(ended.map((u) => u.status)).toEqual(["completed", "completed", "completed"]);
      expect(JSON.stringify(ended[0]!.content)).not.toContain("through the editor");
      expect(JSON.stringify(ended[2]!.content)).toContain("through the editor");
    } finally {
      removeDir(outside);
    }
  });

  it("without fs.writeTextFile offered, Scoot writes the disk and the editor is not asked", async () => {
    scene.model.push(
      step("file_write", JSON.stringify({ path: "n.txt", content: "n\n" })),
      step("final", "ok"),
    );
    const c = await start([], { fs: { readTextFile: true } });
    const sessionId = await newSession(c);
    await ask(c, sessionId, "write it");
    expect(writes()).toEqual([]);
    expect(fs.readFileSync(path.join(scene.project, "n.txt"), "utf8")).toBe("n\n");
  });
});

describe("a prompt right after session/cancel", () => {
  it("is accepted, waits for the cancelled turn to end, then runs (10 times in a row)", async () => {
    const c = await start(["--policy", "unrestricted", "--approval", "never"]);
    const sessionId = await newSession(c);
    for (let i = 0; i < 10; i++) {
      const asked = scene.model.completions().length;
      const tag = uniqueSleepArg(30);
      // Half the turns are cancelled while the model thinks, half while a tool runs.
      const first: ScriptItem =
        i % 2 === 0
          ? ({ ...step("final", "too late"), delayMs: 30_000 } as ScriptItem)
          : step("bash", `sleep ${tag}`);
      scene.model.push(first, step("final", `answer ${i}`));
      seen = [];
      const cancelled = ask(c, sessionId, `turn ${i}`);
      if (i % 2 === 0) await until(() => scene.model.completions().length > asked);
      else expect(await waitForProcess(`sleep ${tag}`, 15_000)).toBe(true);
      await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      const next = ask(c, sessionId, `again ${i}`);
      const [a, b] = await Promise.allSettled([cancelled, next]);
      expect(a).toMatchObject({ status: "fulfilled", value: { stopReason: "cancelled" } });
      expect(b, `turn ${i}`).toMatchObject({ status: "fulfilled", value: { stopReason: "end_turn" } });
      const said = of("agent_message_chunk")
        .map((u) => (u.content.type === "text" ? u.content.text : ""))
        .join("");
      expect(said).toBe(`answer ${i}`);
    }
    // A prompt while another runs, not cancelled, is still refused.
    const before = scene.model.completions().length;
    scene.model.push({ ...step("final", "slow"), delayMs: 1500 } as ScriptItem);
    const slow = ask(c, sessionId, "slow");
    await until(() => scene.model.completions().length > before);
    await expect(ask(c, sessionId, "meanwhile")).rejects.toThrow(/already running a prompt/);
    expect((await slow).stopReason).toBe("end_turn");
  }, 120_000);
});

describe("session/load replays each call's real ending", () => {
  it("refused, failed and interrupted calls come back failed; a completed one completed", async () => {
    fs.writeFileSync(path.join(scene.project, "a.txt"), "alpha\n");
    answer = (request, signal) => {
      if (request.toolCall.title === "Write keep.txt")
        return { outcome: "selected", optionId: "reject_once" };
      if (request.toolCall.title === "Write later.txt")
        return new Promise((resolve) =>
          signal.addEventListener("abort", () => resolve({ outcome: "cancelled" })),
        );
      return allowOnce();
    };
    scene.model.push(
      step("file_write", JSON.stringify({ path: "keep.txt", content: "x\n" })),
      step("file_edit", JSON.stringify({ path: "a.txt", old: "not there", new: "y" })),
      step("bash", "true"),
      step("final", "some done"),
      step("file_write", JSON.stringify({ path: "later.txt", content: "z\n" })),
    );
    let c = await start();
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "four calls")).stopReason).toBe("end_turn");
    const pending = ask(c, sessionId, "one more");
    await until(() => permissions().length === 3);
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await pending).stopReason).toBe("cancelled");
    const live = finalStatuses(updates());
    expect(live).toEqual({
      "Write keep.txt": "failed",
      "Edit a.txt": "failed",
      "Run true": "completed",
      "Write later.txt": "failed",
    });

    await stop();
    seen = [];
    c = await start();
    await c.agent.request(acp.methods.agent.session.load, { sessionId, cwd: scene.project, mcpServers: [] });
    expect(finalStatuses(updates())).toEqual(live);
    // Each replayed call is one tool_call and then updates only.
    const ids = of("tool_call").map((u) => u.toolCallId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("session/load reads each call's outcome field, not its words", () => {
  it('a read whose text starts with "denied by policy" or "not run:" comes back completed', async () => {
    fs.writeFileSync(path.join(scene.project, "denied.txt"), "denied by policy (guarded): only text\n");
    fs.writeFileSync(path.join(scene.project, "notrun.txt"), "not run: only text too\n");
    scene.model.push(
      step("file_read", JSON.stringify({ path: "denied.txt" })),
      step("file_read", JSON.stringify({ path: "notrun.txt" })),
      step("final", "read"),
    );
    let c = await start();
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "read both")).stopReason).toBe("end_turn");
    const live = finalStatuses(updates());
    expect(live).toEqual({ "Read denied.txt": "completed", "Read notrun.txt": "completed" });
    // The transcript line carries the outcome as a field.
    const lines = fs
      .readFileSync(path.join(scene.home, "state", "sessions", `${sessionId}.jsonl`), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { outcome?: { outcome: string } });
    expect(lines.flatMap((l) => (l.outcome ? [l.outcome.outcome] : []))).toEqual(["ran", "ran"]);
    await stop();
    seen = [];
    c = await start();
    await c.agent.request(acp.methods.agent.session.load, { sessionId, cwd: scene.project, mcpServers: [] });
    expect(finalStatuses(updates())).toEqual(live);
  });
});

describe("usage and the model, as the editor shows them", () => {
  it("a usage_update after each model reply: the tokens in context and the window", async () => {
    scene.model.push({
      ...step("final", "hello"),
      usage: { prompt_tokens: 1200, completion_tokens: 34, total_tokens: 1234 },
    } as ScriptItem);
    const c = await start([], {}, { SCOOT_BACKEND_CONTEXT_WINDOW: "32768" });
    const sessionId = await newSession(c);
    expect((await ask(c, sessionId, "hi")).stopReason).toBe("end_turn");
    expect(of("usage_update")).toEqual([{ sessionUpdate: "usage_update", used: 1234, size: 32768 }]);
  });

  it("a server that lists no models leaves the configured one as the only choice, and says why once", async () => {
    await scene.model.close();
    scene.model = await startScriptedServer([], {
      routes: { "GET /v1/models": () => ({ status: 404, body: { error: { message: "no list here" } } }) },
    });
    const c = await start([], {}, { SCOOT_BACKEND_MODEL: "alpha" });
    const first = await newSession(c);
    await newSession(c);
    await until(() => /can choose only the configured model/.test(stderr));
    await expect(
      c.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId: first,
        configId: "model",
        value: "beta",
      }),
    ).rejects.toThrow(
      /unknown model "beta": only alpha can be chosen, the server's list is not known \(.*404/,
    );
    const options = await c.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId: first,
      configId: "model",
      value: "alpha",
    });
    expect(options.configOptions.find((o) => o.id === "model")).toMatchObject({
      currentValue: "alpha",
      options: [{ value: "alpha", name: "alpha" }],
    });
    expect(stderr.match(/can choose only the configured model/g)).toHaveLength(1);
  });

  it("the model is chosen from the server's list, used by the next prompts, and kept with the session", async () => {
    await scene.model.close();
    scene.model = await startScriptedServer([], { models: ["alpha", "beta"] });
    const env = { SCOOT_BACKEND_MODEL: "alpha" };
    let c = await start([], {}, env);
    const sessionId = await newSession(c);
    const modelOption = () =>
      of("config_option_update")
        .flatMap((u) => u.configOptions)
        .filter((o) => o.id === "model")
        .at(-1);
    await until(() => modelOption() !== undefined);
    expect(modelOption()).toMatchObject({
      category: "model",
      type: "select",
      currentValue: "alpha",
      options: [
        { value: "alpha", name: "alpha" },
        { value: "beta", name: "beta" },
      ],
    });
    const set = await c.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "beta",
    });
    expect(set.configOptions.find((o) => o.id === "model")).toMatchObject({ currentValue: "beta" });
    expect(modelOption()).toMatchObject({ currentValue: "beta" });
    await expect(
      c.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: "model",
        value: "gamma",
      }),
    ).rejects.toThrow(/unknown model "gamma": choose one the server lists: alpha, beta/);
    scene.model.push(step("final", "from beta"));
    await ask(c, sessionId, "which model?");
    expect((scene.model.completions().at(-1)!.body as { model: string }).model).toBe("beta");

    // The agent restarts; the session keeps its model.
    await stop();
    seen = [];
    c = await start([], {}, env);
    const loaded = await c.agent.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: scene.project,
      mcpServers: [],
    });
    expect(loaded.configOptions?.find((o) => o.id === "model")).toMatchObject({ currentValue: "beta" });
    scene.model.push(step("final", "still beta"));
    await ask(c, sessionId, "and now?");
    expect((scene.model.completions().at(-1)!.body as { model: string }).model).toBe("beta");
    seen = [];
    await ask(c, sessionId, "/status");
    expect(JSON.stringify(of("agent_message_chunk"))).toContain("model: beta");
  });
});

describe("session methods: each one advertised is served", () => {
  it("resume continues a stored session without replaying it; delete and fork are not advertised", async () => {
    let c = await start();
    expect(initialized?.agentCapabilities?.sessionCapabilities).toEqual({ list: {}, close: {}, resume: {} });
    const sessionId = await newSession(c);
    scene.model.push(step("final", "noted"));
    await ask(c, sessionId, "remember tangerine");
    await stop();
    seen = [];
    c = await start();
    const resumed = await c.agent.request(acp.methods.agent.session.resume, {
      sessionId,
      cwd: scene.project,
    });
    expect(resumed.modes?.currentModeId).toBe("guarded");
    expect(resumed.configOptions?.map((o) => o.id)).toEqual(["mode", "model"]);
    expect(of("user_message_chunk")).toEqual([]);
    expect(of("agent_message_chunk")).toEqual([]);
    scene.model.push(step("final", "tangerine"));
    expect((await ask(c, sessionId, "what did I ask?")).stopReason).toBe("end_turn");
    expect(JSON.stringify(scene.model.completions().at(-1)!.body)).toContain("remember tangerine");
    await expect(
      c.agent.request(acp.methods.agent.session.resume, { sessionId: "acp-none", cwd: scene.project }),
    ).rejects.toMatchObject({ code: -32002 });
    // Not advertised, so not served: the stored session stays.
    await expect(c.agent.request(acp.methods.agent.session.delete, { sessionId })).rejects.toMatchObject({
      code: -32601,
    });
    await expect(
      // The unstable method, not in the stable client's list: sent by its name.
      c.agent.request("session/fork" as never, { sessionId, cwd: scene.project } as never),
    ).rejects.toMatchObject({ code: -32601 });
    const listed = await c.agent.request(acp.methods.agent.session.list, { cwd: scene.project });
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
  });
});
