#!/usr/bin/env node
/**
 * Reading server-sent events (docs/context.md "Streaming"): Scoot's SSE parser, now
 * `eventsource-parser` behind a small wrapper (dist/backend/sse.js), against the hand-written
 * parser it replaced (bench/lib/sse-before.mjs), in the same process, runs interleaved.
 *
 * Shapes: a chat-completions stream read one event per socket read (a local model flushing
 * each token) and in 16 KiB reads (cut inside lines and UTF-8 characters), a Responses API
 * stream with `event:` lines and CRLF line ends, and one 1 MiB event (a long tool call's
 * arguments) arriving in 1 KiB reads. Last, the whole chat decoder (JSON and deltas
 * included): this build against a copy of it whose backend/sse.js is the old parser.
 *
 *   npm run build && node bench/sse.mjs [runs]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "..", "dist");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 40);
const EVENTS = 2000;

const { SseParser: Library } = await import(path.join(dist, "backend", "sse.js"));
const { SseParser: Before } = await import(path.join(here, "lib", "sse-before.mjs"));

// The baseline decoder: this build's dist with the old parser in place of backend/sse.js.
const copy = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-sse-"));
fs.cpSync(dist, copy, { recursive: true, filter: (p) => !p.endsWith(".mjs") && !p.endsWith(".d.ts") });
fs.copyFileSync(path.join(here, "lib", "sse-before.mjs"), path.join(copy, "backend", "sse.js"));
const { createStreamDecoder: decoderNow } = await import(path.join(dist, "backend", "stream.js"));
const { createStreamDecoder: decoderBefore } = await import(path.join(copy, "backend", "stream.js"));

const words = ["Hello", " wörld", " ✓", " 😀", " token", " stream", "\\n", " of"];
const chatEvent = (i) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: words[i % words.length] }, finish_reason: null }] })}\n\n`;
const chatEvents = Array.from({ length: EVENTS }, (_, i) => chatEvent(i));
chatEvents.push(
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 9, completion_tokens: EVENTS, total_tokens: EVENTS + 9 } })}\n\ndata: [DONE]\n\n`,
);
const chatBytes = Buffer.from(chatEvents.join(""));

const responsesEvent = (type, extra) =>
  `event: ${type}\r\ndata: ${JSON.stringify({ type, ...extra })}\r\n\r\n`;
const responsesText =
  responsesEvent("response.created", { response: {} }) +
  Array.from({ length: EVENTS }, (_, i) =>
    responsesEvent("response.output_text.delta", { delta: words[i % words.length], output_index: 0 }),
  ).join("") +
  responsesEvent("response.completed", { response: { usage: { input_tokens: 9, output_tokens: EVENTS } } });

const bigData = "x".repeat(1024 * 1024);
const bigBytes = Buffer.from(`data: {"arguments":"${bigData}"}\n\n`);

function split(bytes, size) {
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

const SHAPES = [
  { name: `chat stream, ${EVENTS} events, one per read`, reads: chatEvents.map((e) => Buffer.from(e)) },
  { name: `chat stream, ${EVENTS} events, 16 KiB reads`, reads: split(chatBytes, 16 * 1024) },
  {
    name: `Responses API, ${EVENTS} events, event: lines and CRLF, one per read`,
    reads: responsesText.split(/(?<=\r\n\r\n)/).map((e) => Buffer.from(e)),
  },
  { name: "one 1 MiB event in 1 KiB reads", reads: split(bigBytes, 1024) },
];

function parse(Parser, reads) {
  const p = new Parser();
  let n = 0;
  for (const r of reads) n += p.push(r).length;
  n += p.end().length;
  return n;
}

function decode(create, reads) {
  const d = create("chat");
  for (const r of reads) d.data(r);
  const result = d.finish();
  if (!result.ok) throw new Error(result.error);
  return result.value.text.length;
}

/** Times `a` and `b` alternately, after a warm-up, so both see the same machine. */
function pair(a, b) {
  if (a() !== b()) throw new Error("the two parsers disagree");
  for (let i = 0; i < 5; i++) {
    a();
    b();
  }
  const ta = [];
  const tb = [];
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 === 0 ? [a, b] : [b, a];
    for (const fn of order) {
      const t = performance.now();
      fn();
      (fn === a ? ta : tb).push(performance.now() - t);
    }
  }
  return { now: ta, before: tb };
}

const rows = [];
for (const shape of SHAPES) {
  const { now, before } = pair(
    () => parse(Library, shape.reads),
    () => parse(Before, shape.reads),
  );
  rows.push(
    row({
      bench: "sse",
      figure: `${shape.name}: eventsource-parser vs the hand-written parser`,
      value: median(now),
      valueSpread: iqr(now),
      baseline: median(before),
      baselineSpread: iqr(before),
      unit: "ms",
      ratio: median(now) / median(before),
      aim: "≤ 1.1x",
      met: median(now) / median(before) <= 1.1,
    }),
  );
}
const oneRead = SHAPES[0].reads;
const { now, before } = pair(
  () => decode(decoderNow, oneRead),
  () => decode(decoderBefore, oneRead),
);
rows.push(
  row({
    bench: "sse",
    figure: `whole chat decoder (JSON, deltas), ${EVENTS} events one per read, this build vs the old parser`,
    value: median(now),
    valueSpread: iqr(now),
    baseline: median(before),
    baselineSpread: iqr(before),
    unit: "ms",
    ratio: median(now) / median(before),
    aim: "≤ 1.1x",
    met: median(now) / median(before) <= 1.1,
  }),
);
fs.rmSync(copy, { recursive: true, force: true });
publish(rows);
