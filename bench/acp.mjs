#!/usr/bin/env node
/**
 * ACP latency (issue 14; docs/editors.md "Editors (ACP)"): wall time from `session/prompt` to its
 * `end_turn` for a trivial answer, over ACP to an already running `scoot acp` (through the
 * official SDK's client), vs. the same goal as `scoot -e` (a fresh process each time, the way
 * a script would run it). Aim: the ACP prompt within 20 ms of `-e` — it pays no process
 * start, so it should not be slower.
 *
 * Also, for a person who uses Scoot only through an editor: a whole editor session (start
 * `scoot acp`, initialize, open a session, one prompt, leave) in a home where no `-e` ever ran,
 * with the app's compiled code an earlier session kept (src/app-code-cache.ts `goalRan`) against
 * the same session with that code removed first, as it was before `scoot acp` kept it (it then
 * writes the code again as it ends, a few ms the session before did not pay); interleaved. Aim:
 * below the baseline.
 *
 *   npm run build && node bench/acp.mjs [runs]
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { iqr, median, publish, row } from "./lib/report.mjs";
import { startBenchServer } from "./lib/server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 15);
const AIM_MS = 20;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-acp-"));
const home = path.join(work, "home");
const project = path.join(work, "project");
fs.mkdirSync(project, { recursive: true });
const final = JSON.stringify({ thought: "easy", action: "final", action_input: "hello" });
const server = await startBenchServer([final]);
const env = {
  ...process.env,
  SCOOT_HOME: home,
  SCOOT_BACKEND_BASE_URL: server.url,
  SCOOT_BACKEND_STREAM: "false",
};

function runEval() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [CLI, "-e", "say hello"], { cwd: project, env, stdio: "ignore" });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(performance.now() - t0) : reject(new Error(`-e exit ${code}`)),
    );
  });
}

/** `scoot acp` started with `agentEnv`, initialized, with one session open. */
async function startAgent(agentEnv) {
  const agent = spawn(process.execPath, [CLI, "acp"], {
    cwd: project,
    env: agentEnv,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const conn = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, () => {})
    .connect(acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout)));
  await conn.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await conn.agent.request(acp.methods.agent.session.new, {
    cwd: project,
    mcpServers: [],
  });
  return { agent, conn, sessionId };
}

const { agent: child, conn: connection, sessionId } = await startAgent(env);

const prompt = async () => {
  const t0 = performance.now();
  const r = await connection.agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "say hello" }],
  });
  if (r.stopReason !== "end_turn") throw new Error(`stopReason ${r.stopReason}`);
  return performance.now() - t0;
};

// Warm-up (first prompt writes the system prompt and discovers the context window).
await prompt();
await runEval();
const overAcp = [];
const viaEval = [];
for (let i = 0; i < RUNS; i++) {
  overAcp.push(await prompt());
  viaEval.push(await runEval());
}
connection.close();
child.stdin.end();
await new Promise((r) => child.on("close", r));

/** One editor session in `editorHome`: start, initialize, open a session, one prompt, leave. */
const editorHome = path.join(work, "editor-home");
async function editorSession() {
  const t0 = performance.now();
  const { agent, conn, sessionId: opened } = await startAgent({ ...env, SCOOT_HOME: editorHome });
  const r = await conn.agent.request(acp.methods.agent.session.prompt, {
    sessionId: opened,
    prompt: [{ type: "text", text: "say hello" }],
  });
  if (r.stopReason !== "end_turn") throw new Error(`stopReason ${r.stopReason}`);
  conn.close();
  agent.stdin.end();
  const code = await new Promise((r) => agent.on("close", r));
  if (code !== 0) throw new Error(`scoot acp exit ${code}`);
  return performance.now() - t0;
}
const cacheDir = path.join(editorHome, "state", "compile-cache");
const appCode = () =>
  fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir).filter((n) => n.startsWith("scoot-app-")) : [];
await editorSession(); // makes the home
await editorSession(); // the first with a compile cache: keeps the app's code
if (appCode().length !== 1) throw new Error("scoot acp kept no app code after a prompt");
const kept = [];
const none = [];
for (let i = 0; i < RUNS; i++) {
  for (const name of appCode()) fs.rmSync(path.join(cacheDir, name));
  none.push(await editorSession()); // writes it again as it ends
  kept.push(await editorSession());
}

await server.close();
fs.rmSync(work, { recursive: true, force: true });

const a = median(overAcp);
const e = median(viaEval);
const k = median(kept);
const n = median(none);
publish([
  row({
    bench: "acp",
    figure: `session/prompt → end_turn, trivial answer (${RUNS} runs)`,
    value: a,
    valueSpread: iqr(overAcp),
    baseline: e,
    baselineSpread: iqr(viaEval),
    unit: "ms",
    ratio: a / e,
    aim: `ACP ≤ -e + ${AIM_MS} ms`,
    met: a <= e + AIM_MS,
  }),
  row({
    bench: "acp",
    figure: `editor session (start, initialize, one prompt, leave) in a home no -e used: the app's kept code vs none (${RUNS} runs)`,
    value: k,
    valueSpread: iqr(kept),
    baseline: n,
    baselineSpread: iqr(none),
    unit: "ms",
    ratio: k / n,
    aim: "below the baseline",
    met: k < n,
  }),
]);
