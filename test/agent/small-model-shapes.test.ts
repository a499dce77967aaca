/**
 * The call shapes small models really send (test/fixtures/replies/small-model-shapes.json, each
 * row naming where it is published; the syntax rules are in small-model-shapes.md): Gemma's
 * `tool_code` blocks, FunctionGemma and Gemma 4 call syntax, LFM2's Python-style lists, JSON call
 * shapes sent as content, bare arguments, Llama's `;` lists and argument echoes, Qwen3-Coder's
 * extra parameters, TGI's streamed `delta.tool_calls` object, leaked end tokens and fabricated
 * continuations. Each is read as the call it is through the tool's own declaration — through the
 * step parser, and through the real backend client on loopback, plain and streamed — and the
 * calls after the first are named as not run.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseStep } from "../../src/agent/step.js";
import { createBackend } from "../../src/backend/client.js";
import { defaultConfig } from "../../src/config/schema.js";
import { enabledTools } from "../../src/tools/registry.js";
import { REPO_ROOT } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

interface Row {
  format: string;
  source: string;
  text: string;
  action: string;
  input: unknown;
  rest?: number;
  stream_tool_calls?: unknown[];
}

const ROWS = JSON.parse(
  fs.readFileSync(path.join(REPO_ROOT, "test/fixtures/replies/small-model-shapes.json"), "utf8"),
) as Row[];
const TOOLS = enabledTools({ hasMcp: false, hasSkills: false });

function expectRead(row: Row, r: ReturnType<typeof parseStep>): void {
  expect(r.ok, r.ok ? "" : `${row.source}: ${r.error}`).toBe(true);
  if (!r.ok) return;
  expect(r.value.action).toBe(row.action);
  if (typeof row.input === "string") expect(r.value.input).toBe(row.input);
  else expect(r.value.input).toMatchObject(row.input as object);
  expect(r.value.notRun?.length ?? 0).toBe(row.rest ?? 0);
  // The step kept in the history is the step read: no markup of the format, no end token.
  expect(r.value.action_input).not.toMatch(/<\|im_end\|>|<\|eot_id\|>|<tool_response>|tool_call/);
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function pieces(text: string, n = 4): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The row as a server sends it: its text as content, or TGI's tool-call deltas. */
function body(row: Row, stream: boolean): string {
  if (row.stream_tool_calls) {
    if (stream) {
      return `${[
        chunk({ role: "assistant", content: null }),
        ...row.stream_tool_calls.map((c) => chunk({ tool_calls: c })),
        chunk({}, "stop"),
      ].join("")}data: [DONE]\n\n`;
    }
    // Not streamed, TGI sent the joined call as an object too.
    const first = row.stream_tool_calls[0] as { function: Record<string, unknown> };
    const args = row.stream_tool_calls
      .map((c) => (c as { function: { arguments?: string } }).function.arguments ?? "")
      .join("");
    return JSON.stringify({
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: { ...first, function: { name: null, arguments: args } },
          },
          finish_reason: "stop",
        },
      ],
    });
  }
  if (stream) {
    return `${[chunk({ role: "assistant" }), ...pieces(row.text).map((content) => chunk({ content })), chunk({}, "stop")].join("")}data: [DONE]\n\n`;
  }
  return JSON.stringify({
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: row.text }, finish_reason: "stop" }],
  });
}

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the shapes small models send, read as the call they are", () => {
  it("every row names its published source and a distinct format", () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(30);
    expect(new Set(ROWS.map((r) => r.format)).size).toBe(ROWS.length);
    for (const r of ROWS) expect(r.source.length, r.format).toBeGreaterThan(10);
  });

  it.each(ROWS.filter((r) => !r.stream_tool_calls).map((r) => [r.format, r] as const))(
    "the step parser: %s",
    (_f, row) => expectRead(row, parseStep(row.text, TOOLS)),
  );

  const viaServer = ROWS.flatMap((r) => [
    [`${r.format}, plain`, r, false] as const,
    [`${r.format}, streamed`, r, true] as const,
  ]);
  it.each(viaServer)("the real client: %s", async (_name, row, stream) => {
    server = await startScriptedServer([
      { raw: body(row, stream), contentType: stream ? "text/event-stream" : "application/json" },
    ]);
    const backend = createBackend(
      { ...defaultConfig().backend, base_url: server.url, model: "fixture", stream },
      { retries: 0 },
    );
    const reply = await backend.complete({
      messages: [{ role: "user", content: "go" }],
      stepSchema: {},
      onDelta: () => {},
    });
    expect(reply.ok, reply.ok ? "" : reply.error.message).toBe(true);
    if (!reply.ok) return;
    expectRead(
      row,
      parseStep(reply.value.text, TOOLS, reply.value.calls ? { calls: reply.value.calls } : {}),
    );
  });
});
