/**
 * Every built-in tool says whether its call failed as a value, next to the text: the
 * consumers (the pipeline, the view, an editor) read `failed` and `details`, never a prefix
 * of the observation. One table, a success and a failure per tool at least, with the text
 * the model reads pinned alongside so the flag can never drift from what the call said.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import type * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { createMcpPool, type McpPool } from "../../src/mcp/pool.js";
import { bashTool } from "../../src/tools/bash.js";
import { fileEditTool } from "../../src/tools/file_edit.js";
import { fileReadTool } from "../../src/tools/file_read.js";
import { fileWriteTool } from "../../src/tools/file_write.js";
import { finalTool } from "../../src/tools/final.js";
import { globTool } from "../../src/tools/glob.js";
import { grepTool } from "../../src/tools/grep.js";
import { httpRequestTool } from "../../src/tools/http_request.js";
import { mcpCallTool } from "../../src/tools/mcp_call.js";
import { outlineTool } from "../../src/tools/outline.js";
import { parallelTool } from "../../src/tools/parallel.js";
import { recallTool } from "../../src/tools/recall.js";
import { skillTool } from "../../src/tools/skill.js";
import type { AnyTool, ToolContext, ToolDetails, ToolResult } from "../../src/tools/types.js";
import { makeToolContext, NO_TARGET, runToolResult } from "../helpers/tool-context.js";
import { everythingStdio, server } from "../mcp/helpers.js";

let dir: string;
let session: string;
let web: http.Server;
let base: string;
/** A port nothing listens on: the server bound it, then closed. */
let closedPort: number;
let pool: McpPool;
let brokenPool: McpPool;

function listen(s: http.Server): Promise<number> {
  return new Promise((resolve) =>
    s.listen(0, "127.0.0.1", () => resolve((s.address() as net.AddressInfo).port)),
  );
}

beforeAll(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-results-")));
  fs.writeFileSync(path.join(dir, "a.txt"), "hello\nworld\n");
  fs.writeFileSync(path.join(dir, "empty.txt"), "");
  fs.writeFileSync(path.join(dir, "bin.dat"), Buffer.from([0, 1, 2, 3]));
  fs.writeFileSync(path.join(dir, "notes.md"), "# Notes\n");
  fs.mkdirSync(path.join(dir, "sub"));
  fs.mkdirSync(path.join(dir, "skill-demo"));
  fs.writeFileSync(path.join(dir, "skill-demo", "SKILL.md"), "Do the demo.\n");
  session = path.join(dir, "session.jsonl");
  fs.writeFileSync(
    session,
    `${JSON.stringify({ role: "user", content: "find the ENOENT" })}\n${JSON.stringify({ role: "assistant", content: "ok" })}\n`,
  );

  web = http.createServer((req, res) => {
    if (req.url === "/hang") return; // never answers: the deadline ends the call
    if (req.url === "/away") {
      res.writeHead(302, { location: "http://elsewhere.invalid/" });
      res.end();
      return;
    }
    const status = req.url === "/missing" ? 404 : 200;
    res.writeHead(status, { "content-type": "text/plain" });
    res.end(status === 200 ? "fine" : "no such page");
  });
  base = `http://127.0.0.1:${await listen(web)}`;
  const probe = http.createServer();
  closedPort = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));

  pool = createMcpPool([everythingStdio("ev", path.join(dir, "spawned.txt"), ["echo", "get-sum"])], {
    env: process.env,
    timeoutMs: 20_000,
  });
  brokenPool = createMcpPool(
    [server({ name: "gone", command: path.join(dir, "no-such-server"), allowed_tools: ["x"] })],
    { env: process.env, timeoutMs: 5_000 },
  );
});

afterAll(async () => {
  await pool.close();
  await brokenPool.close();
  web.closeAllConnections();
  await new Promise((resolve) => web.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

function ctx(overrides: Partial<ToolContext> = {}): ToolContext {
  const config = defaultConfig();
  // The process handling is what is pinned here; containment has its own tests.
  config.tools.sandbox = "off";
  return makeToolContext({ cwd: dir, config, mode: "unrestricted", timeoutMs: 20_000, ...overrides });
}

function parsed(tool: AnyTool, raw: unknown): unknown {
  const r = tool.parse(typeof raw === "string" ? raw : JSON.stringify(raw));
  if (!r.ok) throw new Error(`${tool.name} refused its input: ${r.error}`);
  return r.value;
}

function aborted(): AbortSignal {
  const ac = new AbortController();
  ac.abort();
  return ac.signal;
}

/** Aborted as the pipeline aborts a call at its deadline. */
function timedOut(): AbortSignal {
  return AbortSignal.abort(new DOMException("deadline", "TimeoutError"));
}

interface Row {
  what: string;
  tool: AnyTool;
  input: unknown;
  failed: true | undefined;
  text: string | RegExp | (() => string);
  details?: ToolDetails;
  ctx?: () => Partial<ToolContext>;
  /** Run without a target (tools that name no path). */
  noTarget?: boolean;
}

const skills = () => {
  const demo = { name: "demo", dir: path.join(dir, "skill-demo") };
  return { list: () => [demo], get: (n: string) => (n === "demo" ? demo : undefined) };
};

const ROWS: Row[] = [
  // bash: the command's status is its answer; only not running it to its end is a failure.
  {
    what: "bash exit 0",
    tool: bashTool,
    input: "echo hi",
    failed: undefined,
    text: "exit code: 0\nstdout:\nhi",
    // The whole output as it streamed, beside the exit code (the live view's preview).
    details: { exitCode: 0, output: { bytes: 3, lines: 1, kept: 3, tail: ["hi"] } },
  },
  {
    what: "bash exit 3",
    tool: bashTool,
    input: "exit 3",
    failed: undefined,
    text: "exit code: 3\n(no output)",
    details: { exitCode: 3, output: { bytes: 0, lines: 0, kept: 0, tail: [] } },
  },
  {
    what: "bash past the deadline",
    tool: bashTool,
    input: "sleep 5",
    failed: true,
    text: "timed out after 150 ms (process group terminated)\n(no output)",
    details: { stopped: "deadline", output: { bytes: 0, lines: 0, kept: 0, tail: [] } },
    ctx: () => ({ timeoutMs: 150 }),
  },
  {
    what: "bash interrupted before it started",
    tool: bashTool,
    input: "echo never",
    failed: true,
    text: "interrupted: the command was not started",
    details: { stopped: "interrupted" },
    ctx: () => ({ signal: aborted() }),
  },

  // file_read
  {
    what: "file_read a file",
    tool: fileReadTool,
    input: { path: "a.txt" },
    failed: undefined,
    text: "hello\nworld\n",
  },
  {
    what: "file_read an empty file",
    tool: fileReadTool,
    input: { path: "empty.txt" },
    failed: undefined,
    text: '("empty.txt" is empty, 0 bytes)',
  },
  {
    what: "file_read a missing file",
    tool: fileReadTool,
    input: { path: "missing.txt" },
    failed: true,
    text: /^file_read: cannot read "missing\.txt": /,
  },
  {
    what: "file_read a directory",
    tool: fileReadTool,
    input: { path: "sub" },
    failed: true,
    text: 'file_read: "sub" is a directory; use glob to list its files',
  },
  {
    what: "file_read a binary file",
    tool: fileReadTool,
    input: { path: "bin.dat" },
    failed: true,
    text: 'file_read: "bin.dat" is a binary file, 4 bytes (not shown)',
  },
  {
    what: "file_read a window at the deadline",
    tool: fileReadTool,
    input: { path: "a.txt", offset: 1 },
    failed: true,
    text: 'file_read: stopped reading "a.txt": timed out at line 1 (byte 0)',
    details: { stopped: "deadline" },
    ctx: () => ({ signal: timedOut() }),
  },
  {
    what: "file_read past the end",
    tool: fileReadTool,
    input: { path: "a.txt", offset: 9 },
    failed: true,
    text: 'file_read: offset 9 is past the end of "a.txt", which has 2 lines',
  },

  // file_write
  {
    what: "file_write a new file",
    tool: fileWriteTool,
    input: { path: "new.txt", content: "abc" },
    failed: undefined,
    text: 'wrote 3 bytes to "new.txt" (created)',
  },
  {
    what: "file_write onto a directory",
    tool: fileWriteTool,
    input: { path: "sub", content: "abc" },
    failed: true,
    text: 'file_write: "sub" is a directory',
  },

  // file_edit
  {
    what: "file_edit a unique piece",
    tool: fileEditTool,
    input: { path: "edit-me.txt", old: "two", new: "2" },
    failed: undefined,
    text: 'edited "edit-me.txt": replaced 1 occurrence at line 2 (1 line -> 1)',
    ctx: () => {
      fs.writeFileSync(path.join(dir, "edit-me.txt"), "one\ntwo\n");
      return {};
    },
  },
  {
    what: "file_edit text that is not there",
    tool: fileEditTool,
    input: { path: "a.txt", old: "absent", new: "x" },
    failed: true,
    text: 'file_edit: "old" was not found in "a.txt" (0 occurrences); file_read it and copy the exact text, whitespace included; nothing was changed',
  },
  {
    what: "file_edit a missing file",
    tool: fileEditTool,
    input: { path: "missing.txt", old: "a", new: "b" },
    failed: true,
    text: 'file_edit: "missing.txt" does not exist; use file_write to create it',
  },

  // grep: no match is an answer
  {
    what: "grep a match",
    tool: grepTool,
    input: { pattern: "wor", path: "a.txt" },
    failed: undefined,
    text: "2:world",
  },
  {
    what: "grep no match",
    tool: grepTool,
    input: { pattern: "zzz", path: "a.txt" },
    failed: undefined,
    text: 'no matches for "zzz" in "a.txt"',
  },
  {
    what: "grep cut short by the deadline",
    tool: grepTool,
    input: { pattern: "wor", path: "a.txt" },
    failed: true,
    text: 'no matches for "wor" in "a.txt"\n[stopped early after 0 of 12 bytes: the tool deadline was reached; counts are partial]',
    details: { stopped: "deadline" },
    ctx: () => ({ signal: timedOut() }),
  },
  {
    what: "grep a missing file",
    tool: grepTool,
    input: { pattern: "x", path: "missing.txt" },
    failed: true,
    text: /^grep: cannot read "missing\.txt": /,
  },
  {
    what: "grep a directory",
    tool: grepTool,
    input: { pattern: "x", path: "sub" },
    failed: true,
    text: 'grep: "sub" is a directory; grep searches one file (use glob to find files first)',
  },

  // glob: an empty list is an answer
  { what: "glob a match", tool: globTool, input: { pattern: "*.md" }, failed: undefined, text: "notes.md" },
  {
    what: "glob no match",
    tool: globTool,
    input: { pattern: "*.nothing" },
    failed: undefined,
    text: 'no paths match "*.nothing" under "."',
  },
  {
    what: "glob cut short by an interrupt",
    tool: globTool,
    input: { pattern: "*.md" },
    failed: true,
    text: 'no paths match "*.md" under "."\n[stopped early: the tool deadline was reached; the list is incomplete]',
    details: { stopped: "interrupted" },
    ctx: () => ({ signal: aborted() }),
  },
  {
    what: "glob under a file",
    tool: globTool,
    input: { pattern: "*", root: "a.txt" },
    failed: true,
    text: 'glob: root "a.txt" is not a directory',
  },

  // outline
  {
    what: "outline Markdown",
    tool: outlineTool,
    input: { path: "notes.md" },
    failed: undefined,
    text: "outline of notes.md (Markdown headings): 1 entry\nL1: # Notes",
  },
  {
    what: "outline a missing file",
    tool: outlineTool,
    input: { path: "missing.md" },
    failed: true,
    text: "error: no such file: missing.md",
  },

  // http_request: any response is the request made; not reaching the server is not
  {
    what: "http_request 200",
    tool: httpRequestTool,
    input: () => ({ method: "GET", url: `${base}/ok` }),
    failed: undefined,
    text: /^HTTP 200 OK\n[\s\S]*\nfine$/,
  },
  {
    what: "http_request 404",
    tool: httpRequestTool,
    input: () => ({ method: "GET", url: `${base}/missing` }),
    failed: undefined,
    text: /^HTTP 404 Not Found\n[\s\S]*\nno such page$/,
  },
  {
    what: "http_request connection refused",
    tool: httpRequestTool,
    input: () => ({ method: "GET", url: `http://127.0.0.1:${closedPort}/` }),
    failed: true,
    text: () => `http_request: connection refused to http://127.0.0.1:${closedPort}/`,
  },
  {
    what: "http_request redirect denied by policy",
    tool: httpRequestTool,
    input: () => ({ method: "GET", url: `${base}/away` }),
    failed: true,
    text: () =>
      `http_request: redirect 1 (302 from ${base}/away to http://elsewhere.invalid/) denied by policy: not here`,
    ctx: () => ({ gate: () => ({ allow: false, reason: "not here" }) }),
  },
  {
    what: "http_request past the deadline",
    tool: httpRequestTool,
    input: () => ({ method: "GET", url: `${base}/hang` }),
    failed: true,
    text: () => `http_request: timed out after 150 ms waiting for response headers from ${base}/hang`,
    details: { stopped: "deadline" },
    ctx: () => ({ timeoutMs: 150 }),
  },

  // mcp_call: the server's isError and a call that never completed are both failures
  {
    what: "mcp_call a result",
    tool: mcpCallTool,
    input: { server: "ev", tool: "echo", args: { message: "hi" } },
    failed: undefined,
    text: "Echo: hi",
    ctx: () => ({ services: { mcp: pool } }),
  },
  {
    what: "mcp_call a result marked isError",
    tool: mcpCallTool,
    input: { server: "ev", tool: "get-sum", args: { a: "one", b: 2 } },
    failed: true,
    // The SDK's server answers arguments its schema refuses with an isError result.
    text: /^mcp_call error: MCP error -32602: Input validation error: Invalid arguments for tool get-sum: /,
    ctx: () => ({ services: { mcp: pool } }),
  },
  {
    what: "mcp_call a server that cannot start",
    tool: mcpCallTool,
    input: { server: "gone", tool: "x" },
    failed: true,
    text: /^mcp_call error: /,
    ctx: () => ({ services: { mcp: brokenPool } }),
  },
  {
    what: "mcp_call with no servers",
    tool: mcpCallTool,
    input: { server: "ev", tool: "echo" },
    failed: true,
    text: "mcp_call error: no MCP servers are configured for this run",
  },

  // skill
  {
    what: "skill SKILL.md",
    tool: skillTool,
    input: { name: "demo" },
    failed: undefined,
    text: () =>
      `[skill demo: SKILL.md, 13 bytes; skill directory: ${path.join(dir, "skill-demo")}]\nDo the demo.\n`,
    ctx: () => ({ services: { skills: skills() } }),
  },
  {
    what: "skill unknown",
    tool: skillTool,
    input: { name: "other" },
    failed: true,
    text: 'skill error: unknown skill "other"; available skills: demo',
    ctx: () => ({ services: { skills: skills() } }),
  },

  // recall: nothing found is an answer
  {
    what: "recall a query",
    tool: recallTool,
    input: { query: "ENOENT" },
    failed: undefined,
    text: /^\[recall\] 1 message\(s\) contain "ENOENT"\n\{"seq":1,"role":"user","content":"find the ENOENT"\}$/,
    ctx: () => ({ sessionPath: session }),
  },
  {
    what: "recall no match",
    tool: recallTool,
    input: { query: "zzz" },
    failed: undefined,
    text: '[recall] no messages contain "zzz" (2 searched)',
    ctx: () => ({ sessionPath: session }),
  },
  {
    what: "recall past the end",
    tool: recallTool,
    input: { seq: 9 },
    failed: true,
    text: "recall: seq 9 is past the end; the transcript has 2 messages",
    ctx: () => ({ sessionPath: session }),
  },
  {
    what: "recall without a transcript",
    tool: recallTool,
    input: { query: "x" },
    failed: true,
    text: "recall: this run has no session transcript to search",
  },

  // parallel and final report, they do not fail
  {
    what: "parallel with a failing child",
    tool: parallelTool,
    input: { calls: [{ action: "file_read", input: { path: "missing.txt" } }] },
    failed: undefined,
    text: '[1] file_read {"path":"missing.txt"}\nfile_read: cannot read "missing.txt": not found',
    ctx: () => ({ call: async () => 'file_read: cannot read "missing.txt": not found' }),
    noTarget: true,
  },
  {
    what: "final",
    tool: finalTool,
    input: "The answer.",
    failed: undefined,
    text: "The answer.",
    noTarget: true,
  },
];

describe("every tool says whether it failed, as a value", () => {
  it.each(ROWS.map((r) => [r.what, r] as const))("%s", async (_what, row) => {
    const input = parsed(
      row.tool,
      typeof row.input === "function" ? (row.input as () => unknown)() : row.input,
    );
    const c = ctx(row.ctx?.() ?? {});
    const result: ToolResult = row.noTarget
      ? await row.tool.run(input, c, NO_TARGET)
      : await runToolResult(row.tool, input, c);
    expect(result.failed).toBe(row.failed);
    const text = typeof row.text === "function" ? row.text() : row.text;
    if (typeof text === "string") expect(result.text).toBe(text);
    else expect(result.text).toMatch(text);
    if (row.details) expect(result.details).toEqual(row.details);
    else if (row.tool !== bashTool) expect(result.details).toBeUndefined();
  });
});
