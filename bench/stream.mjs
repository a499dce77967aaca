#!/usr/bin/env node
/**
 * Streaming and the server's cache (issue 13; docs/context.md "Streaming", "Context budget and the
 * server's cache").
 *
 * 1. Time to the first visible answer byte vs the end of the answer: `scoot -e` against a
 *    streaming scripted server that sends a final step in PIECES pieces with PAUSE_MS
 *    between them (a slow local model). Baseline: the same run with backend.stream = false,
 *    where the server answers plain JSON after the same total time.
 * 2. Prefix reuse: over a 40-turn run with a small context budget, the share of request
 *    bytes that are a byte-identical prefix of the previous request (what llama.cpp, Ollama
 *    and vLLM can serve from their KV cache). Measured from the requests the server received
 *    from the real CLI; the baseline replays the same conversation through compaction to just
 *    under the budget on every turn (the behaviour before hysteresis), in process.
 * 3. Redaction throughput (docs/context.md "Streaming"): the stream redactor fed a 64 MB stream
 *    in 8 KB pieces, of prose, of one word that never ends, of prose with a key every 4 KB, and
 *    of a PEM block that never ends. Linear means the time per MB of the last 8 MB is within
 *    1.2x of the first 8 MB's (the baseline); a redactor that rescans what it holds is not.
 *
 *   npm run build && node bench/stream.mjs [runs]
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 5);
const PIECES = 20;
const PAUSE_MS = 100;
const TURNS = 40;
const BUDGET = 16_000;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-stream-"));
const home = path.join(work, "home");
const project = path.join(work, "project");
fs.mkdirSync(project, { recursive: true });
for (let i = 0; i < 8; i++) {
  fs.writeFileSync(path.join(project, `notes-${i}.txt`), `line ${i} of some project notes\n`.repeat(30));
}

const answer = Array.from({ length: PIECES * 4 }, (_, i) => `word${i}`).join(" ");
const finalText = JSON.stringify({ thought: "answering", action: "final", action_input: answer });

/** A chat-completions server: SSE in PIECES pieces when asked to stream, else JSON after the same time. */
function startServer(script) {
  const requests = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    // Context-window discovery probes (GET /models, /props, …) find nothing here.
    if (req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      requests.push(raw);
      const body = JSON.parse(raw);
      const text = script[Math.min(next, script.length - 1)];
      next += 1;
      const slow = text === finalText;
      const pieces = [];
      const size = Math.ceil(text.length / PIECES);
      for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
      if (body.stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        let i = 0;
        const send = () => {
          if (i < pieces.length) {
            res.write(
              `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: pieces[i] }, finish_reason: null }] })}\n\n`,
            );
            i += 1;
            if (slow) setTimeout(send, PAUSE_MS);
            else send();
            return;
          }
          res.end(
            `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
          );
        };
        send();
        return;
      }
      const reply = JSON.stringify({
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      });
      setTimeout(
        () => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(reply);
        },
        slow ? PAUSE_MS * (pieces.length - 1) : 0,
      );
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/v1`,
        requests,
        reset(s) {
          script.splice(0, script.length, ...s);
          next = 0;
          requests.length = 0;
        },
        close: () => new Promise((r) => server.close(r)),
      }),
    ),
  );
}

/** Spawns `scoot -e`; resolves with ms to the first stdout byte and ms to exit. */
function timedRun(env, args = ["-e", "answer slowly"]) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first;
    let out = "";
    let err = "";
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: project,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (d) => {
      first ??= performance.now() - t0;
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`scoot exited ${code}: ${err}`));
      resolve({ first, end: performance.now() - t0, out });
    });
  });
}

const server = await startServer([finalText]);
const baseEnv = { ...process.env, SCOOT_HOME: home, SCOOT_BACKEND_BASE_URL: server.url };
const streamFirst = [];
const streamEnd = [];
const plainFirst = [];
for (let r = 0; r < RUNS; r++) {
  server.reset([finalText]);
  const s = await timedRun(baseEnv);
  if (s.out !== `${answer}\n`) throw new Error("the streamed answer differs from the answer");
  streamFirst.push(s.first);
  streamEnd.push(s.end);
  server.reset([finalText]);
  const p = await timedRun({ ...baseEnv, SCOOT_BACKEND_STREAM: "false" });
  plainFirst.push(p.first);
}

// Prefix reuse from the real CLI's requests.
const readStep = (t) =>
  JSON.stringify({
    thought: `turn ${t}: read the next notes file`,
    action: "file_read",
    action_input: JSON.stringify({ path: `notes-${t % 8}.txt` }),
  });
const script = [
  ...Array.from({ length: TURNS - 1 }, (_, i) => readStep(i + 1)),
  JSON.stringify({ thought: "done", action: "final", action_input: "read them all" }),
];
server.reset(script);
await timedRun(
  { ...baseEnv, SCOOT_AGENT_MAX_TURNS: String(TURNS + 5), SCOOT_AGENT_CONTEXT_BUDGET_BYTES: String(BUDGET) },
  ["-e", "read every notes file"],
);
const cliRequests = [...server.requests];
await server.close();

function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return Buffer.byteLength(a.slice(0, i));
}
function share(raws) {
  let shared = 0;
  let total = 0;
  for (let i = 1; i < raws.length; i++) {
    shared += commonPrefix(raws[i - 1], raws[i]);
    total += Buffer.byteLength(raws[i]);
  }
  return total ? shared / total : 0;
}

// Baseline: the same conversation (the CLI's own messages) replayed in process, compacting to
// just under the budget on every turn that exceeds it (as before hysteresis).
const { compactHistory } = await import(path.join(here, "..", "dist", "agent", "compact.js"));
const last = JSON.parse(cliRequests.at(-1));
const tailOf = (raw) => {
  const { messages, ...rest } = JSON.parse(raw);
  return { messages, rest };
};
// Rebuild the uncompacted conversation: system, goal, then each turn's assistant step and observation.
const first = tailOf(cliRequests[0]);
const turns = [];
for (let i = 1; i < cliRequests.length; i++) {
  const m = tailOf(cliRequests[i]).messages;
  turns.push(m.slice(-2));
}
const baselineRaws = [];
let history = [...first.messages];
let goalIndex = 1;
for (let t = 0; t <= turns.length; t++) {
  const c = compactHistory(history, new Set([0, goalIndex]), BUDGET, "extractive");
  if (c.ok && c.value) {
    history = c.value.messages;
    goalIndex = 1;
  }
  baselineRaws.push(JSON.stringify({ model: last.model, messages: history, ...first.rest }));
  if (t < turns.length) history = [...history, ...turns[t]];
}
fs.rmSync(work, { recursive: true, force: true });

// Redaction throughput: the same StreamRedactor every streamed piece goes through.
const { StreamRedactor } = await import(path.join(here, "..", "dist", "core", "stream-redact.js"));
const REDACT_MB = 64;
const SLICE_MB = 8;
const REDACT_PIECE = 8 * 1024;
const REDACT_RUNS = Math.max(3, RUNS);
const kinds = [
  {
    name: "prose",
    piece: () => "the quick brown fox jumps over it ".repeat(REDACT_PIECE / 34 + 1).slice(0, REDACT_PIECE),
  },
  { name: "one word that never ends", piece: () => "a".repeat(REDACT_PIECE) },
  {
    name: "prose with an sk- key every 4 KB",
    piece: (i) =>
      `${"some words of text ".repeat(214)}sk-${String(i).padStart(20, "0")} `
        .repeat(2)
        .slice(0, REDACT_PIECE),
  },
  {
    name: "a PEM block that never ends",
    piece: (i) =>
      (i === 0 ? "-----BEGIN PRIVATE KEY-----\n" : "") + `${"QUJD".repeat(16)}\n`.repeat(REDACT_PIECE / 65),
  },
];
/** ms per MB over the first and the last SLICE_MB of one REDACT_MB stream. */
function redactRun(kind) {
  const r = new StreamRedactor();
  const pieces = Math.floor((REDACT_MB * 2 ** 20) / REDACT_PIECE);
  const perSlice = Math.floor((SLICE_MB * 2 ** 20) / REDACT_PIECE);
  let out = 0;
  let firstMs = 0;
  let t0 = performance.now();
  for (let i = 0; i < pieces; i++) {
    if (i === pieces - perSlice) t0 = performance.now();
    out += r.push(kind.piece(i)).length;
    if (i === perSlice - 1) firstMs = performance.now() - t0;
  }
  const lastMs = performance.now() - t0;
  out += r.end().length;
  if (out === 0) throw new Error(`the redactor released nothing of ${kind.name}`);
  return { first: firstMs / SLICE_MB, last: lastMs / SLICE_MB };
}
const redactRows = [];
for (const kind of kinds) {
  const first = [];
  const last = [];
  for (let r = 0; r < REDACT_RUNS; r++) {
    const m = redactRun(kind);
    first.push(m.first);
    last.push(m.last);
  }
  const f = median(first);
  const l = median(last);
  redactRows.push(
    row({
      bench: "stream",
      figure: `redaction, ${REDACT_MB} MB in ${REDACT_PIECE / 1024} KB pieces, ${kind.name}: ms per MB, last ${SLICE_MB} MB vs first ${SLICE_MB} MB`,
      value: l,
      valueSpread: iqr(last),
      baseline: f,
      baselineSpread: iqr(first),
      unit: "ms",
      ratio: l / f,
      aim: "≤ 1.2x",
      met: l / f <= 1.2,
    }),
  );
}

const sf = median(streamFirst);
const se = median(streamEnd);
const pf = median(plainFirst);
const reuse = share(cliRequests) * 100;
const reuseBase = share(baselineRaws) * 100;
publish([
  row({
    bench: "stream",
    figure: `first answer byte on stdout (${PIECES} pieces, ${PAUSE_MS} ms apart) vs stream = false`,
    value: sf,
    valueSpread: iqr(streamFirst),
    baseline: pf,
    baselineSpread: iqr(plainFirst),
    unit: "ms",
    ratio: sf / pf,
    aim: "≤ 0.5x",
    met: sf / pf <= 0.5,
  }),
  row({
    bench: "stream",
    figure: "end of the streamed answer (process exit) vs stream = false first byte",
    value: se,
    valueSpread: iqr(streamEnd),
    baseline: pf,
    baselineSpread: iqr(plainFirst),
    unit: "ms",
    ratio: se / pf,
    aim: "(informational)",
  }),
  row({
    bench: "stream",
    figure: `prefix reuse, ${TURNS}-turn run, budget ${BUDGET} B (baseline: compact every turn over budget)`,
    value: Number(reuse.toFixed(1)),
    baseline: Number(reuseBase.toFixed(1)),
    unit: "%",
    ratio: reuse / reuseBase,
    aim: "≥ 80%",
    met: reuse >= 80,
  }),
  ...redactRows,
]);
