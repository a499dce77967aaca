/**
 * Replies as servers really send them, through the real backend client on loopback and the
 * real loop: native `tool_calls` (plain and streamed; with `content: null`, `""` or prose
 * beside; arguments as JSON text or, as Ollama sends them, an object; several in one reply) are
 * read as the step they mean, and `content: null` with nothing else is a reply to correct, never
 * a failed run. Shapes from the OpenAI chat completions reference, vLLM and Ollama.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createBackend } from "../../src/backend/client.js";
import { parseReply } from "../../src/backend/wire.js";
import { defaultConfig } from "../../src/config/schema.js";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { loopHarness } from "../helpers/loop.js";
import {
  type ScriptedServer,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-native-calls-")));
fs.writeFileSync(path.join(project, "notes.txt"), "native call read this\n");
afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A chat completion whose message is `message`. */
function completion(message: Record<string, unknown>, finish = "tool_calls"): ScriptItem {
  return {
    raw: JSON.stringify({
      id: "c",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }),
    contentType: "application/json",
  };
}

function call(name: string, args: unknown, id = "call_1") {
  return { id, type: "function", function: { name, arguments: args } };
}

/** The same reply as SSE chunks: the call's name first, its arguments in pieces. */
function streamedCall(name: string, argsText: string, content?: string): ScriptItem {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const half = Math.floor(argsText.length / 2);
  return {
    raw: [
      chunk({ role: "assistant", content: content ?? null }),
      chunk({
        tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: "" } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: argsText.slice(0, half) } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: argsText.slice(half) } }] }),
      chunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ].join(""),
    contentType: "text/event-stream",
  };
}

async function runWith(script: ScriptItem[], stream: boolean) {
  const h = loopHarness([], { cwd: project, mode: "unrestricted" });
  server = await startScriptedServer(script);
  h.deps.backend = createBackend({
    ...defaultConfig().backend,
    base_url: server.url,
    model: "test-model",
    stream,
    max_retries: 0,
  });
  const r = await h.run("read notes.txt");
  return { r, h };
}

const READ_ARGS = JSON.stringify({ path: "notes.txt" });

describe("native tool calls are read as the step they mean", () => {
  it.each([
    ["content null", { content: null, tool_calls: [call("file_read", READ_ARGS)] }],
    ['content ""', { content: "", tool_calls: [call("file_read", READ_ARGS)] }],
    ["prose beside the call", { content: "Let me read it.", tool_calls: [call("file_read", READ_ARGS)] }],
    [
      "arguments as an object (Ollama)",
      { content: "", tool_calls: [call("file_read", { path: "notes.txt" })] },
    ],
  ])("%s", async (_what, message) => {
    const { r, h } = await runWith([completion(message), step("final", "done")], false);
    expect(r.stop, r.error).toBe("final");
    const obs = h.events.find((e) => e.type === "observation");
    expect(obs?.type === "observation" && obs.call.shown).toContain("native call read this");
    expect(h.events.some((e) => e.type === "malformed")).toBe(false);
    expect(
      h.events.some((e) => e.type === "step_note" && /native tool call \(file_read\)/.test(e.note)),
    ).toBe(true);
  });

  it("a streamed call (delta.tool_calls in pieces) gives the same outcome as the plain one", async () => {
    const { r, h } = await runWith([streamedCall("file_read", READ_ARGS), step("final", "done")], true);
    expect(r.stop, r.error).toBe("final");
    const obs = h.events.find((e) => e.type === "observation");
    expect(obs?.type === "observation" && obs.call.shown).toContain("native call read this");
  });

  it("a native bash call with {command} runs the command; a JSON text is never the command", async () => {
    const { r, h } = await runWith(
      [
        completion({
          content: null,
          tool_calls: [call("bash", JSON.stringify({ command: "printf native-%s ok" }))],
        }),
        step("final", "done"),
      ],
      false,
    );
    expect(r.stop, r.error).toBe("final");
    const obs = h.events.find((e) => e.type === "observation");
    expect(obs?.type === "observation" && obs.call.shown).toContain("native-ok");
  });

  it("several calls in one reply: the first runs, the rest are named and not run", async () => {
    const { r, h } = await runWith(
      [
        completion({
          content: null,
          tool_calls: [
            call("file_read", READ_ARGS),
            call("bash", JSON.stringify({ command: "touch SECOND" }), "call_2"),
          ],
        }),
        step("final", "done"),
      ],
      false,
    );
    expect(r.stop, r.error).toBe("final");
    expect(fs.existsSync(path.join(project, "SECOND"))).toBe(false);
    expect(
      h.events.some((e) => e.type === "step_note" && /only the first ran \(not run: bash\)/.test(e.note)),
    ).toBe(true);
    // The model is told, in the observation of the call that ran.
    expect(JSON.stringify(h.deps.history)).toContain("not run: 1 more tool call of your reply (bash)");
  });
});

describe("content: null is a reply to correct, never a failed run", () => {
  it("content null alone, then a valid step: the run ends final", async () => {
    const { r, h } = await runWith([completion({ content: null }, "stop"), step("final", "done")], false);
    expect(r.stop, r.error).toBe("final");
    const m = h.events.find((e) => e.type === "malformed");
    expect(m?.type === "malformed" && m.error).toMatch(/empty/);
  });

  it("a refusal in its place is still told as a refusal", () => {
    const body = JSON.stringify({
      choices: [{ message: { role: "assistant", content: null, refusal: "I can't" }, finish_reason: "stop" }],
    });
    const r = parseReply("chat", body);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.refused).toBe(true);
  });
});

describe("through the built CLI", () => {
  it("content: null alone, then a valid step: scoot -e answers and exits 0", async () => {
    const home = tempDir("scoot-null-content-");
    try {
      server = await startScriptedServer([
        completion({ content: null }, "stop"),
        step("final", "after the null"),
      ]);
      const r = await runCli(["-e", "go"], {
        home,
        cwd: project,
        env: { SCOOT_BACKEND_BASE_URL: server.url },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("after the null\n");
    } finally {
      removeDir(home);
    }
  });
});
