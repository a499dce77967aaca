#!/usr/bin/env node
/**
 * Keystroke to echo while an answer streams (docs/keyboard.md "Typing during a run"): the REPL
 * runs on a pseudo-terminal (util-linux `script`); while the model's answer streams in many
 * small pieces, a key is typed and the time until its echo (`› …` under the live view) comes
 * back from the terminal is measured. Baseline, side by side: the same key typed at the idle
 * prompt, where readline echoes it. Aim: under 16 ms (one frame at 60 Hz) while streaming.
 *
 *   npm run build && node bench/keys.mjs [keys]
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const KEYS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 30);
/** Pieces of the streamed answer and the pause between them: a stream of about 12 s. */
const PIECES = 600;
const PAUSE_MS = 20;
/** Letters the streamed answer never holds, so an echo cannot be mistaken for the answer. */
const LETTERS = "QXZJKV";
const ECHO_TIMEOUT_MS = 5000;

if (spawnSync("script", ["--version"], { stdio: "ignore" }).status !== 0) {
  console.error("bench/keys.mjs: util-linux `script` is not installed; skipped");
  process.exit(0);
}

/** A server whose every reply is a final answer streamed slowly, piece by piece. */
async function slowServer() {
  const answer = "word ".repeat(PIECES);
  const text = JSON.stringify({ thought: "t", action: "final", action_input: answer });
  const size = Math.ceil(text.length / PIECES);
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method !== "POST") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"error":"not found"}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      let i = 0;
      const send = () => {
        if (res.destroyed) return;
        if (i * size >= text.length) {
          res.end("data: [DONE]\n\n");
          return;
        }
        const piece = text.slice(i * size, (i + 1) * size);
        const chunk = {
          id: "x",
          object: "chat.completion.chunk",
          choices: [{ index: 0, delta: { content: piece } }],
        };
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        i += 1;
        setTimeout(send, PAUSE_MS);
      };
      send();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, close: () => server.close() };
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-keys-"));
const server = await slowServer();
const q = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
const child = spawn(
  "script",
  ["-qfec", `stty cols 120 rows 40; ${q(process.execPath)} ${q(CLI)} repl`, "/dev/null"],
  {
    cwd: work,
    env: {
      ...process.env,
      SCOOT_HOME: path.join(work, "home"),
      SCOOT_BACKEND_BASE_URL: server.url,
      SCOOT_BACKEND_STREAM: "true",
      TERM: "xterm-256color",
      NO_COLOR: "1",
    },
    stdio: ["pipe", "pipe", "ignore"],
  },
);
let out = "";
let waiting;
child.stdout.on("data", (d) => {
  out += d.toString("utf8");
  if (waiting && out.includes(waiting.text, waiting.from)) {
    const w = waiting;
    waiting = undefined;
    w.resolve(performance.now());
  }
});

/** Resolves with the time `text` appears in the output written after `from`. */
function appears(text, from) {
  return new Promise((resolve, reject) => {
    if (out.includes(text, from)) return resolve(performance.now());
    const timer = setTimeout(() => reject(new Error(`never saw ${JSON.stringify(text)}`)), ECHO_TIMEOUT_MS);
    waiting = {
      text,
      from,
      resolve: (t) => {
        clearTimeout(timer);
        resolve(t);
      },
    };
  });
}

const type = (s) => child.stdin.write(s);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Types `KEYS` letters one at a time; `echo(line)` is what shows once the line holds them. */
async function measure(echo) {
  const times = [];
  let line = "";
  for (let i = 0; i < KEYS; i++) {
    const key = LETTERS[i % LETTERS.length];
    line += key;
    const from = out.length;
    const t0 = performance.now();
    type(key);
    times.push((await appears(echo(line), from)) - t0);
    await sleep(30);
  }
  return times;
}

await appears("scoot> ", 0);
// Baseline: at the idle prompt readline echoes each key as it is typed.
const idle = await measure((line) => line.slice(-1));
type("\u0015"); // Ctrl-U: the prompt line empty again
await sleep(100);
type("stream an answer\r");
await appears("word word", 0);
const streaming = await measure((line) => `› ${line}`);
type("\u001b"); // Esc: cancel the goal
await appears("cancelled", 0);
// The typed-ahead line waits on the prompt: clear it, then leave.
await appears("scoot> ", out.lastIndexOf("cancelled"));
type("\u0015\u0004");
await new Promise((r) => child.on("close", r));
server.close();
fs.rmSync(work, { recursive: true, force: true });

const m = median(streaming);
publish([
  row({
    bench: "keys",
    figure: "keystroke to echo while an answer streams vs at the idle prompt",
    value: m,
    valueSpread: iqr(streaming),
    baseline: median(idle),
    baselineSpread: iqr(idle),
    unit: "ms",
    ratio: m / median(idle),
    aim: "under 16 ms while streaming",
    met: m < 16,
  }),
]);
