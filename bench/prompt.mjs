#!/usr/bin/env node
/**
 * First request bytes (docs/mcp.md "MCP servers"): the size of the body of the first backend
 * request of a trivial run with no MCP server (aim: at most 6 KB), and with the reference
 * filesystem and memory servers from npm with every tool allowed, described from `tools/list`.
 * Reports the bytes each described MCP tool adds, and what a plan-mode run's first request adds
 * (docs/safety.md "Plan mode": at most 10% over a normal run's). Sizes, not times: one run of
 * each suffices.
 *
 *   npm run build && node bench/prompt.mjs
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..");
const CLI = path.join(root, "dist", "scoot.cjs");
const FS_SERVER = path.join(root, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const MEMORY_SERVER = path.join(root, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const FIRST_REQUEST_AIM_BYTES = 6 * 1024;
/** A plan-mode run's first request may be this much larger than a normal run's. */
const PLAN_GROWTH_AIM = 1.1;

const finalStep = JSON.stringify({ thought: "done", action: "final", action_input: "done" });
let sizes = [];
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const send = (status, body) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    };
    if (req.method === "POST" && req.url === "/v1/chat/completions") {
      sizes.push(Buffer.concat(chunks).length);
      return send(200, {
        id: "x",
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: finalStep }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010 },
      });
    }
    send(404, { error: "not found" });
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/v1`;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-prompt-"));
const home = path.join(work, "home");
const project = path.join(work, "project");
fs.mkdirSync(home, { recursive: true });
fs.mkdirSync(project, { recursive: true });
const env = {
  ...process.env,
  SCOOT_HOME: home,
  SCOOT_BACKEND_BASE_URL: url,
  SCOOT_BACKEND_MODEL: "bench",
  SCOOT_BACKEND_CONTEXT_WINDOW: "32768",
  SCOOT_BACKEND_STREAM: "false",
};

function firstRequestBytes(extra = []) {
  sizes = [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...extra, "-e", "trivial"], {
      cwd: project,
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => (code === 0 ? resolve(sizes[0]) : reject(new Error(err))));
  });
}

const q = JSON.stringify;
function writeConfig(fsTools, memoryTools) {
  const servers =
    fsTools === undefined
      ? []
      : [
          "[[mcp.servers]]",
          'name = "fs"',
          `command = ${q(process.execPath)}`,
          `args = [${q(FS_SERVER)}, ${q(project)}]`,
          `allowed_tools = [${fsTools.map(q).join(", ")}]`,
          "",
          "[[mcp.servers]]",
          'name = "memory"',
          `command = ${q(process.execPath)}`,
          `args = [${q(MEMORY_SERVER)}]`,
          `env = [{ name = "MEMORY_FILE_PATH", value = ${q(path.join(work, "memory.jsonl"))} }]`,
          `allowed_tools = [${memoryTools.map(q).join(", ")}]`,
          "",
        ];
  fs.writeFileSync(
    path.join(home, "config.toml"),
    ["[tools]", 'policy = "guarded"', "", ...servers].join("\n"),
  );
}

writeConfig(undefined);
const bare = await firstRequestBytes();
const planned = await firstRequestBytes(["--plan"]);

// One listing fills the cache with every tool of both servers; then allow them all.
writeConfig(["read_text_file"], ["read_graph"]);
await firstRequestBytes();
const cacheDir = path.join(home, "state", "mcp-tools");
const listed = Object.fromEntries(
  fs.readdirSync(cacheDir).map((f) => {
    const j = JSON.parse(fs.readFileSync(path.join(cacheDir, f), "utf8"));
    return [j.server, j.tools.map((t) => t.name)];
  }),
);
const toolCount = listed.fs.length + listed.memory.length;
writeConfig(listed.fs, listed.memory);
const described = await firstRequestBytes();
const perTool = (described - bare) / toolCount;

server.close();
fs.rmSync(work, { recursive: true, force: true });

publish([
  row({
    bench: "prompt",
    figure: "first request bytes, no MCP server",
    value: bare,
    unit: "bytes",
    aim: `≤ ${FIRST_REQUEST_AIM_BYTES} bytes`,
    met: bare <= FIRST_REQUEST_AIM_BYTES,
  }),
  row({
    bench: "prompt",
    figure: "first request bytes, plan mode (--plan), no MCP server",
    value: planned,
    baseline: bare,
    unit: "bytes",
    ratio: planned / bare,
    aim: `≤ ${PLAN_GROWTH_AIM}× a normal run's`,
    met: planned / bare <= PLAN_GROWTH_AIM,
  }),
  row({
    bench: "prompt",
    figure: `first request bytes, filesystem + memory servers (${toolCount} tools described)`,
    value: described,
    baseline: bare,
    unit: "bytes",
    ratio: described / bare,
    aim: "report",
  }),
  row({
    bench: "prompt",
    figure: "bytes added per described MCP tool",
    value: Math.round(perTool),
    unit: "bytes",
    aim: "report (per tool: args shape 1024, description 480; 6144 in all)",
  }),
]);
