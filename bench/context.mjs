#!/usr/bin/env node
/**
 * Context-window discovery (issue 15): the trivial run's wall time (first reply is `final`)
 * with discovery cold (no state cache: the server is asked), cached (the window is read from
 * `<home>/state/context-window.json`), and as before discovery existed (backend.context_window
 * set, so nothing is asked), interleaved in one run against a server that answers like
 * llama.cpp. Also the in-process cost of a cached lookup. Aim: cached adds under 5 ms.
 *
 *   npm run build && node bench/context.mjs [runs]
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 15);
const LOOKUPS = 2_000;

const finalStep = JSON.stringify({ thought: "done", action: "final", action_input: "done" });
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const send = (status, body) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    };
    if (req.method === "GET" && req.url === "/props")
      return send(200, { default_generation_settings: { n_ctx: 32_768 }, total_slots: 1 });
    if (req.method === "GET" && req.url === "/v1/models")
      return send(200, { object: "list", data: [{ id: "bench" }] });
    if (req.method === "POST" && req.url === "/v1/chat/completions")
      return send(200, {
        id: "x",
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: finalStep }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010 },
      });
    send(404, { error: "not found" });
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/v1`;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-context-"));
const home = path.join(work, "home");
const cacheFile = path.join(home, "state", "context-window.json");
const env = { ...process.env, SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: url, SCOOT_BACKEND_MODEL: "bench" };

function run(extraEnv) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [CLI, "-e", "trivial"], {
      cwd: work,
      env: { ...env, ...extraEnv },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(err))));
  });
}

const before = [];
const cold = [];
const cached = [];
await run({}); // warm the file cache of the OS, not ours
for (let i = 0; i < RUNS; i++) {
  before.push(await run({ SCOOT_BACKEND_CONTEXT_WINDOW: "32768" }));
  fs.rmSync(cacheFile, { force: true });
  cold.push(await run({}));
  if (!fs.existsSync(cacheFile)) throw new Error("the cold run did not write the cache");
  cached.push(await run({}));
}

// In-process: one cached lookup as a fresh process does it (the file, not the process memo).
const mod = await import(pathToFileURL(path.join(here, "..", "dist", "backend", "context-window.js")).href);
const backend = { api: "chat", base_url: url, model: "bench", context_window: 0 };
const lookups = [];
for (let i = 0; i < LOOKUPS; i++) {
  mod.forgetDiscoveredWindows();
  const t0 = performance.now();
  const w = await mod.discoverContextWindow({ backend, stateDir: path.join(home, "state") });
  lookups.push(performance.now() - t0);
  if (!w.cached) throw new Error("expected a cached lookup");
}
server.close();
fs.rmSync(work, { recursive: true, force: true });

const base = median(before);
publish([
  row({
    bench: "context",
    figure: "trivial run, discovery cold (server asked)",
    value: median(cold),
    valueSpread: iqr(cold),
    baseline: base,
    baselineSpread: iqr(before),
    unit: "ms",
    ratio: median(cold) / base,
    aim: "(informational)",
  }),
  row({
    bench: "context",
    figure: "trivial run, discovery cached",
    value: median(cached),
    valueSpread: iqr(cached),
    baseline: base,
    baselineSpread: iqr(before),
    unit: "ms",
    ratio: median(cached) / base,
    aim: "≤ baseline + 5 ms",
    met: median(cached) - base <= 5,
  }),
  row({
    bench: "context",
    figure: "cached lookup in-process (read + parse the state cache)",
    value: median(lookups),
    valueSpread: iqr(lookups),
    unit: "ms",
    aim: "< 5 ms",
    met: median(lookups) < 5,
  }),
]);
