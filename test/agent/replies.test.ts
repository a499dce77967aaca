/**
 * Models as they really answer (docs/context.md "Reasoning models"): a table of reply texts and
 * response bodies in the shapes the servers document — think blocks, the reasoning fields of
 * llama.cpp / vLLM / LM Studio (`reasoning_content`), Ollama's OpenAI API (`reasoning`) and
 * the Responses API (reasoning items), plain and streamed, `content: null`, the token limit,
 * the small repairs, the `{name, arguments}` dialect, two steps and a truncated step. Each
 * body goes through the real backend client against the scripted loopback server, then
 * through the step parser; each row names its outcome: the accepted step, the correction's
 * key words, or a refusal. The fixtures are written for this table.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseStep } from "../../src/agent/step.js";
import { createBackend } from "../../src/backend/client.js";
import type { BackendEvent } from "../../src/backend/types.js";
import { defaultConfig } from "../../src/config/schema.js";
import { enabledTools } from "../../src/tools/registry.js";
import { REPO_ROOT } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

const TOOLS = enabledTools({ hasMcp: false, hasSkills: false });
const GLOB = { thought: "list the sources", action: "glob", action_input: '{"pattern": "src/*.ts"}' };
const STEP = JSON.stringify(GLOB);
const FINAL = JSON.stringify({ thought: "draft", action: "final", action_input: "guessed" });

type Api = "chat" | "responses";

/** A chat completion body; `message` fields are merged over an assistant message. */
function chatBody(message: Record<string, unknown>, finish = "stop"): string {
  return JSON.stringify({
    id: "chatcmpl-fixture",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "fixture",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}

/** Chat completion chunks: each delta its own event, then a finish chunk and [DONE]. */
function chatStream(deltas: Record<string, unknown>[], finish = "stop"): string {
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null) =>
    `data: ${JSON.stringify({
      id: "chatcmpl-fixture",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "fixture",
      choices: [{ index: 0, delta, finish_reason }],
    })}\n\n`;
  return `${[chunk({ role: "assistant" }, null), ...deltas.map((d) => chunk(d, null)), chunk({}, finish)].join("")}data: [DONE]\n\n`;
}

function pieces(text: string, n = 3): string[] {
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** A Responses API body: optional reasoning item, optional message, and a status. */
function responsesBody(opts: {
  reasoning?: string;
  text?: string;
  status?: string;
  reason?: string;
}): string {
  const output: unknown[] = [];
  if (opts.reasoning !== undefined)
    output.push({
      type: "reasoning",
      id: "rs_fixture",
      summary: [{ type: "summary_text", text: opts.reasoning }],
    });
  if (opts.text !== undefined)
    output.push({
      type: "message",
      id: "msg_fixture",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: opts.text, annotations: [] }],
    });
  return JSON.stringify({
    id: "resp_fixture",
    object: "response",
    status: opts.status ?? "completed",
    ...(opts.reason ? { incomplete_details: { reason: opts.reason } } : {}),
    output,
    usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  });
}

/** Responses API events: reasoning summary deltas, then text deltas, then the end event. */
function responsesStream(opts: {
  reasoning?: string[];
  text?: string[];
  end?: "completed" | "incomplete";
}): string {
  const ev = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const out = [ev("response.created", { response: { id: "resp_fixture", status: "in_progress" } })];
  for (const d of opts.reasoning ?? [])
    out.push(ev("response.reasoning_summary_text.delta", { item_id: "rs_fixture", delta: d }));
  for (const d of opts.text ?? [])
    out.push(ev("response.output_text.delta", { item_id: "msg_fixture", delta: d }));
  if (opts.end === "incomplete")
    out.push(
      ev("response.incomplete", {
        response: {
          id: "resp_fixture",
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" },
        },
      }),
    );
  else out.push(ev("response.completed", { response: { id: "resp_fixture", status: "completed" } }));
  return out.join("");
}

type Outcome =
  | { step: { action: string; thought?: string; input?: string; note?: RegExp } }
  | { correction: RegExp[] };

interface Row {
  name: string;
  api: Api;
  /** A plain JSON body, or SSE events when `sse` is set. */
  body: string;
  sse?: boolean;
  /** The reasoning the client must hand over (plain) or stream (sse). */
  reasoning?: string;
  outcome: Outcome;
}

const plain = (name: string, content: string, outcome: Outcome): Row => ({
  name,
  api: "chat",
  body: chatBody({ content }),
  outcome,
});

const VENDOR = JSON.parse(
  fs.readFileSync(path.join(REPO_ROOT, "test/fixtures/replies/vendor-calls.json"), "utf8"),
) as { format: string; text: string; action: string }[];

const ROWS: Row[] = [
  // Think blocks in the reply text.
  plain("closed <think> block, then the step", `<think>I should list files {maybe}</think>\n${STEP}`, {
    step: { action: "glob", note: /set aside the <think> block/ },
  }),
  plain("closed <thinking> block, then the step", `<thinking>plan</thinking>${STEP}`, {
    step: { action: "glob" },
  }),
  plain("orphan </think> (the template opened the block)", `the user wants files\n</think>\n\n${STEP}`, {
    step: { action: "glob", note: /before <\/think>/ },
  }),
  plain("a draft step inside the thinking and nothing after", `<think>maybe ${FINAL}</think>`, {
    correction: [/only step is inside the thinking/, /never run/],
  }),
  plain("a draft final inside the thinking, the real step after", `<think>${FINAL}</think>${STEP}`, {
    step: { action: "glob" },
  }),
  plain("a draft step before an orphan </think>", `${FINAL}\n</think>\n`, {
    correction: [/only step is inside the thinking/],
  }),
  plain("an unclosed <think> holding a step", `<think>${FINAL}`, {
    correction: [/never closes/, /was not run/],
  }),
  plain(
    "</think> inside a JSON string is not a tag",
    JSON.stringify({ thought: "write </think> literally", action: "glob", action_input: '{"pattern": "*"}' }),
    { step: { action: "glob", thought: "write </think> literally" } },
  ),
  // Reasoning fields, plain and streamed.
  {
    name: "llama.cpp reasoning_content beside the step",
    api: "chat",
    body: chatBody({ content: STEP, reasoning_content: "The sources are under src." }),
    reasoning: "The sources are under src.",
    outcome: { step: { action: "glob" } },
  },
  {
    name: "vLLM reasoning_content streamed before the content",
    api: "chat",
    sse: true,
    body: chatStream([
      { reasoning_content: "The sources " },
      { reasoning_content: "are under src." },
      ...pieces(STEP).map((content) => ({ content })),
    ]),
    reasoning: "The sources are under src.",
    outcome: { step: { action: "glob" } },
  },
  {
    name: "LM Studio reasoning_content streamed with empty content deltas",
    api: "chat",
    sse: true,
    body: chatStream([
      { reasoning_content: "Think.", content: "" },
      ...pieces(STEP).map((content) => ({ content, reasoning_content: "" })),
    ]),
    reasoning: "Think.",
    outcome: { step: { action: "glob" } },
  },
  {
    name: "Ollama OpenAI API: reasoning beside the step",
    api: "chat",
    body: chatBody({ content: STEP, reasoning: "Files first." }),
    reasoning: "Files first.",
    outcome: { step: { action: "glob" } },
  },
  {
    name: "Ollama OpenAI API: reasoning streamed",
    api: "chat",
    sse: true,
    body: chatStream([{ reasoning: "Files " }, { reasoning: "first." }, { content: STEP }]),
    reasoning: "Files first.",
    outcome: { step: { action: "glob" } },
  },
  {
    name: "Responses API: a reasoning item before the message",
    api: "responses",
    body: responsesBody({ reasoning: "Look at src.", text: STEP }),
    reasoning: "Look at src.",
    outcome: { step: { action: "glob" } },
  },
  {
    name: "Responses API: reasoning summary deltas streamed",
    api: "responses",
    sse: true,
    body: responsesStream({ reasoning: ["Look ", "at src."], text: pieces(STEP) }),
    reasoning: "Look at src.",
    outcome: { step: { action: "glob" } },
  },
  // Empty answers beside thinking.
  {
    name: "content: null with reasoning (thinking took the turn)",
    api: "chat",
    body: chatBody({ content: null, reasoning_content: "Hmm, let me think about the files." }),
    reasoning: "Hmm, let me think about the files.",
    outcome: { correction: [/answer was empty while thinking was present/] },
  },
  {
    name: "content empty, reasoning is exactly one valid step (constrained answer routed to reasoning)",
    api: "chat",
    body: chatBody({ content: "", reasoning_content: STEP }),
    reasoning: STEP,
    outcome: { step: { action: "glob", note: /reasoning field holds exactly one valid step/ } },
  },
  {
    name: "content empty, reasoning streamed as exactly one valid step",
    api: "chat",
    sse: true,
    body: chatStream(pieces(STEP).map((reasoning_content) => ({ reasoning_content }))),
    reasoning: STEP,
    outcome: { step: { action: "glob", note: /took the step from it/ } },
  },
  {
    name: "content empty, reasoning ends in exactly one valid step after prose: taken",
    api: "chat",
    body: chatBody({ content: "", reasoning_content: `I will do ${STEP}` }),
    reasoning: `I will do ${STEP}`,
    outcome: { step: { action: "glob", note: /reasoning ends in exactly one valid step/ } },
  },
  {
    name: "content empty, reasoning holds a step and more thinking after it: not taken",
    api: "chat",
    body: chatBody({ content: "", reasoning_content: `Draft: ${STEP} but wait, maybe not.` }),
    reasoning: `Draft: ${STEP} but wait, maybe not.`,
    outcome: { correction: [/answer was empty while thinking was present/] },
  },
  {
    name: "content empty, reasoning holds two steps: not taken",
    api: "chat",
    body: chatBody({ content: "", reasoning_content: `${STEP}\n${STEP}` }),
    reasoning: `${STEP}\n${STEP}`,
    outcome: { correction: [/answer was empty while thinking was present/] },
  },
  {
    name: "Ollama's thinking field is reasoning",
    api: "chat",
    body: chatBody({ content: "", thinking: STEP }),
    reasoning: STEP,
    outcome: { step: { action: "glob", note: /reasoning field holds exactly one valid step/ } },
  },
  {
    name: "Magistral content parts: thinking then text, streamed",
    api: "chat",
    sse: true,
    body: chatStream([
      { content: [{ type: "thinking", thinking: [{ type: "text", text: "Let me look." }] }] },
      ...pieces(STEP).map((text) => ({ content: [{ type: "text", text }] })),
    ]),
    reasoning: "Let me look.",
    outcome: { step: { action: "glob" } },
  },
  // The token limit.
  {
    name: "a truncated bash step under finish_reason length is never completed into rm -rf and run",
    api: "chat",
    body: chatBody(
      { content: '{"thought": "tidy up", "action": "bash", "action_input": "rm -rf ./important' },
      "length",
    ),
    outcome: { correction: [/cut off at the token limit/] },
  },
  {
    name: "a complete object of the wrong shape, then a newline flood, finish_reason length: its defect, not 'cut off'",
    api: "chat",
    body: chatBody(
      { content: `{"thought": "t", "action": "nope", "action_input": "x"}${"\n".repeat(600)}` },
      "length",
    ),
    outcome: { correction: [/unknown action "nope"/] },
  },
  {
    name: "content: null, finish_reason length (vLLM: thinking used the tokens)",
    api: "chat",
    body: chatBody({ content: null, reasoning_content: "Let me think step by step" }, "length"),
    reasoning: "Let me think step by step",
    outcome: { correction: [/cut off at the token limit/, /finish_reason length/] },
  },
  {
    name: "half a step, finish_reason length",
    api: "chat",
    body: chatBody({ content: '{"thought": "list", "action": "glob", "action_in' }, "length"),
    outcome: { correction: [/cut off at the token limit/] },
  },
  {
    name: "half a step streamed, finish_reason length",
    api: "chat",
    sse: true,
    body: chatStream([{ content: '{"thought": "list", "act' }], "length"),
    outcome: { correction: [/cut off at the token limit/] },
  },
  {
    name: "Responses API status incomplete (max_output_tokens)",
    api: "responses",
    body: responsesBody({ reasoning: "Thinking hard", status: "incomplete", reason: "max_output_tokens" }),
    reasoning: "Thinking hard",
    outcome: { correction: [/cut off at the token limit/, /max_output_tokens/] },
  },
  {
    name: "Responses API response.incomplete streamed",
    api: "responses",
    sse: true,
    body: responsesStream({ reasoning: ["Thinking"], text: ['{"thought": "x"'], end: "incomplete" }),
    reasoning: "Thinking",
    outcome: { correction: [/cut off at the token limit/] },
  },
  // Repairs.
  plain(
    "a raw newline and tab inside a string",
    '{"thought": "two\nlines\tand a tab", "action": "glob", "action_input": "{\\"pattern\\": \\"*\\"}"}',
    { step: { action: "glob", thought: "two\nlines\tand a tab", note: /escaped raw control characters/ } },
  ),
  plain(
    "a trailing comma",
    `{"thought": "list", "action": "glob", "action_input": "{\\"pattern\\": \\"*\\"}",}`,
    {
      step: { action: "glob", note: /dropped a trailing comma/ },
    },
  ),
  plain(
    "\\_ inside a string",
    '{"thought": "read my\\_file", "action": "file_read", "action_input": "{\\"path\\": \\"my\\_file.txt\\"}"}',
    { step: { action: "file_read", input: '{"path": "my_file.txt"}', note: /read \\_ as _/ } },
  ),
  plain(
    "a truncated step is never completed",
    '{"thought": "list\nfiles", "action": "glob", "action_input": "{',
    {
      correction: [/the JSON is invalid/, /never closes/],
    },
  ),
  plain(
    "single-quoted keys are read as strings; what is still missing is named",
    "{'thought': 'x', 'action': 'glob'}",
    {
      correction: [/"action_input" is missing/],
    },
  ),
  plain(
    "invalid JSON names the first defect and where it is (line, column)",
    '{"thought": "t"\n "action": "glob", "action_input": "{}"}',
    { correction: [/after property value at line 2, column 2/] },
  ),
  plain(
    "a single-quoted step is read as the step",
    "{'thought': 'look', 'action': 'glob', 'action_input': '{\"pattern\": \"src/*.ts\"}'}",
    { step: { action: "glob", note: /read single-quoted strings as strings/ } },
  ),
  plain(
    "comments between tokens are dropped",
    '{\n  // the step\n  "thought": "look", /* next */ "action": "glob", "action_input": "{\\"pattern\\": \\"*.md\\"}"\n}',
    { step: { action: "glob", note: /dropped a comment/ } },
  ),
  plain(
    "a literal \\n between tokens is white space",
    '{\\n"thought": "look",\\n"action": "glob",\\n"action_input": "{\\"pattern\\": \\"*.md\\"}"\\n}',
    { step: { action: "glob", note: /literal \\n between tokens/ } },
  ),
  plain(
    "a step without a thought is taken with an empty one",
    '{"action": "glob", "action_input": "{\\"pattern\\": \\"*.md\\"}"}',
    { step: { action: "glob", note: /no "thought": took it as empty/ } },
  ),
  plain(
    "the same step twice is one step",
    `${JSON.stringify({ thought: "t", action: "glob", action_input: JSON.stringify({ pattern: "*.md" }) })}\n${JSON.stringify({ thought: "t", action: "glob", action_input: JSON.stringify({ pattern: "*.md" }) })}`,
    { step: { action: "glob", note: /same object 2 times: took it once/ } },
  ),
  plain(
    "unknown keys beside a complete step are ignored, and said",
    JSON.stringify({
      thought: "t",
      action: "glob",
      action_input: JSON.stringify({ pattern: "*.md" }),
      confidence: 0.9,
    }),
    { step: { action: "glob", note: /ignored the keys beside the step: "confidence"/ } },
  ),
  plain(
    "two different steps are still refused",
    `${JSON.stringify({ thought: "t", action: "glob", action_input: JSON.stringify({ pattern: "*.md" }) })}\n${JSON.stringify({ thought: "t", action: "bash", action_input: "rm -rf x" })}`,
    { correction: [/2 JSON objects/] },
  ),
  plain(
    "a truncated object is never completed",
    '{"thought": "t", "action": "bash", "action_input": "rm -rf /tmp/x',
    { correction: [/never closes/] },
  ),
  // The tool-call dialect.
  plain("{name, arguments} bare, known action", '{"name": "glob", "arguments": {"pattern": "src/*.ts"}}', {
    step: {
      action: "glob",
      thought: "",
      input: '{"pattern":"src/*.ts"}',
      note: /tool-call dialect as the step/,
    },
  }),
  plain(
    "{name, arguments} in <tool_call> tags, known action",
    '<tool_call>\n{"name": "glob", "arguments": {"pattern": "*.md"}}\n</tool_call>',
    { step: { action: "glob", thought: "", note: /inside <tool_call> tags/ } },
  ),
  plain(
    "{name, arguments} in <tool_call> tags, unknown name",
    '<tool_call>{"name": "list_files", "arguments": {"dir": "."}}</tool_call>',
    {
      correction: [
        /tool-call dialect inside <tool_call> tags/,
        /"list_files", which is not an enabled action/,
        /use one of: bash, /,
      ],
    },
  ),
  plain(
    "two {name, arguments} calls: the first runs, the second is named as not run",
    '<tool_call>{"name": "glob", "arguments": {"pattern": "*"}}</tool_call><tool_call>{"name": "file_read", "arguments": {"path": "a.md"}}</tool_call>',
    {
      step: {
        action: "glob",
        note: /the reply held 2 tool calls; only the first ran \(not run: file_read\)/,
      },
    },
  ),
  // Refusals and corrections that name the defect.
  plain("two complete steps", `${STEP}\n${FINAL}`, { correction: [/2 JSON objects/] }),
  plain("missing thought and an unknown action, both reported", '{"action": "list", "action_input": "."}', {
    correction: [/"thought" is missing/, /unknown action "list"; use one of: bash, /],
  }),
  plain("a valid object of another shape", '{"command": "ls", "cwd": "."}', {
    correction: [/keys "command", "cwd"/, /a step has the keys "thought", "action" and "action_input"/],
  }),
  plain("an empty reply", "   ", { correction: [/the reply was empty/] }),
  plain("prose only", "I think we should list the files.", { correction: [/contains no JSON object/] }),
  // Chat templates' own call formats (test/fixtures/replies/vendor-calls.json), plain and streamed:
  // both forms of a text give the same step.
  ...VENDOR.flatMap((v): Row[] => [
    {
      name: `${v.format}, plain`,
      api: "chat",
      body: chatBody({ content: v.text }),
      outcome: { step: { action: v.action } },
    },
    {
      name: `${v.format}, streamed`,
      api: "chat",
      sse: true,
      body: chatStream(pieces(v.text).map((content) => ({ content }))),
      outcome: { step: { action: v.action } },
    },
  ]),
];

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function exchange(row: Row) {
  server = await startScriptedServer([
    { raw: row.body, contentType: row.sse ? "text/event-stream" : "application/json" },
  ]);
  const events: BackendEvent[] = [];
  const backend = createBackend(
    {
      ...defaultConfig().backend,
      api: row.api,
      base_url: server.url,
      model: "fixture",
      stream: row.sse === true,
    },
    { onEvent: (e) => events.push(e), retries: 0 },
  );
  const streamed: string[] = [];
  const reply = await backend.complete({
    messages: [{ role: "user", content: "list the sources" }],
    stepSchema: {},
    onDelta: () => {},
    onReasoning: (t) => streamed.push(t),
  });
  return { reply, streamed, events };
}

describe("replies as models really send them, through the real client and the step parser", () => {
  it.each(ROWS.map((r) => [r.name, r] as const))("%s", async (_name, row) => {
    const { reply, streamed } = await exchange(row);
    expect(reply.ok, reply.ok ? "" : reply.error.message).toBe(true);
    if (!reply.ok) return;
    // The reasoning is read as thinking: handed over whole, and streamed piece by piece.
    expect(reply.value.reasoning ?? "").toBe(row.reasoning ?? "");
    if (row.sse) expect(streamed.join("")).toBe(row.reasoning ?? "");
    const step = parseStep(reply.value.text, TOOLS, {
      reasoning: reply.value.reasoning,
      ...(reply.value.cutOff ? { cutOff: reply.value.cutOff } : {}),
    });
    if ("step" in row.outcome) {
      const want = row.outcome.step;
      expect(step.ok, step.ok ? "" : step.error).toBe(true);
      if (!step.ok) return;
      expect(step.value.action).toBe(want.action);
      if (want.thought !== undefined) expect(step.value.thought).toBe(want.thought);
      if (want.input !== undefined) expect(step.value.action_input).toBe(want.input);
      if (want.note) expect(step.value.notes.join("; ")).toMatch(want.note);
    } else {
      expect(step.ok).toBe(false);
      if (step.ok) return;
      for (const words of row.outcome.correction) expect(step.error).toMatch(words);
      // Only the token limit says "cut off".
      if (!reply.value.cutOff) expect(step.error).not.toMatch(/cut off/);
    }
  });

  it("a cut-off reply with content: null is a reply the loop corrects, not a failed call", async () => {
    const row = ROWS.find((r) => r.name.startsWith("content: null, finish_reason length"))!;
    const { reply } = await exchange(row);
    expect(reply.ok && reply.value.cutOff).toBe("finish_reason length");
  });
});

describe("JSON-mode white space flood", () => {
  it("a streamed step followed only by white space is cut there, not read to the deadline", async () => {
    // The server never ends the stream: without the cut this call would end in a timeout error.
    const flood = Array.from({ length: 400 }, () => ({ content: "\n\n\n\n" }));
    const head = chatStream([{ content: STEP }, ...flood]).split("data: [DONE]")[0]!;
    // Drop the finish chunk: the server is still "sampling".
    const body = head.slice(0, head.lastIndexOf("data: {"));
    server = await startScriptedServer([{ raw: body, contentType: "text/event-stream", hold: true }]);
    const events: BackendEvent[] = [];
    const backend = createBackend(
      {
        ...defaultConfig().backend,
        base_url: server.url,
        model: "fixture",
        stream: true,
        timeout_ms: 60_000,
      },
      { onEvent: (e) => events.push(e), retries: 0 },
    );
    const reply = await backend.complete({ messages: [{ role: "user", content: "go" }], stepSchema: {} });
    expect(reply.ok, reply.ok ? "" : reply.error.message).toBe(true);
    expect(reply.ok && reply.value.text).toBe(STEP);
    expect(events.some((e) => e.type === "warning" && /followed only by white space/.test(e.message))).toBe(
      true,
    );
  });

  it("white space inside a string or before the object closes is not a flood", async () => {
    const spaces = " ".repeat(2000);
    const text = `{"thought": "${spaces}", "action": "glob", "action_input": "{\\"pattern\\": \\"*\\"}"}`;
    server = await startScriptedServer([
      {
        raw: chatStream([{ content: text.slice(0, 20) }, { content: text.slice(20) }]),
        contentType: "text/event-stream",
      },
    ]);
    const backend = createBackend(
      { ...defaultConfig().backend, base_url: server.url, model: "fixture", stream: true },
      { retries: 0 },
    );
    const reply = await backend.complete({ messages: [{ role: "user", content: "go" }], stepSchema: {} });
    expect(reply.ok && reply.value.text).toBe(text);
  });
});

describe("a streamed <think> block never reaches the answer", () => {
  it.each([1, 2, 5, 1000])("split every %i characters", async (size) => {
    const { followStep } = await import("../../src/agent/stream-final.js");
    const text = `<think>draft ${FINAL} and more</think>\n${JSON.stringify({ thought: "real", action: "final", action_input: "the answer" })}`;
    const events: { type: string; text?: string; source?: string }[] = [];
    const f = followStep((e) => events.push(e as never), 1);
    for (let i = 0; i < text.length; i += size) f.push(text.slice(i, i + size));
    const thinking = events.filter((e) => e.type === "thought_delta" && e.source === "reasoning");
    const thought = events.filter((e) => e.type === "thought_delta" && e.source === undefined);
    const answer = events.filter((e) => e.type === "answer_delta");
    expect(thinking.map((e) => e.text).join("")).toBe(`draft ${FINAL} and more`);
    expect(thought.map((e) => e.text).join("")).toBe("real");
    expect(answer.map((e) => e.text).join("")).toBe("the answer");
  });
});
