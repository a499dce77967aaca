#!/usr/bin/env node
/**
 * Reading a reply: the step parser's cost on 64 KB replies in every shape models send (a plain
 * step with a long thought, the JSON call shapes, each chat template's format, Python-style and
 * Gemma calls, native tool calls with 64 KB arguments, a Harmony reply, calls quoted in prose,
 * broken JSON that gets a correction, a reply of prose with no object), against
 * `JSON.parse` of the same bytes in the same run. Aim: under 1 ms at the 99th percentile.
 *
 *   npm run build && node bench/parse.mjs [iterations]
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "..", "dist");
const { parseStep } = await import(path.join(dist, "agent", "step.js"));
const { readHarmony } = await import(path.join(dist, "agent", "think.js"));
const { enabledTools } = await import(path.join(dist, "tools", "registry.js"));

const ITERATIONS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 2000);
const REPLY_BYTES = 64 * 1024;
const tools = enabledTools({ hasMcp: false, hasSkills: false });

const filler = (n) =>
  "The file is long; I will read the next part of it carefully. ".repeat(Math.ceil(n / 61)).slice(0, n);
const step = (thought) =>
  JSON.stringify({ thought, action: "file_read", action_input: JSON.stringify({ path: "src/app.ts" }) });
const long = filler(REPLY_BYTES - 200);
const SHAPES = {
  "a plain step, 64 KB thought": step(filler(REPLY_BYTES - 100)),
  "{name, arguments} quoted after 64 KB of prose (a correction)": `${filler(REPLY_BYTES - 100)}\n${JSON.stringify({ name: "bash", arguments: { command: "ls" } })}`,
  "Qwen3-Coder XML call quoted after 64 KB of prose (a correction)": `${filler(REPLY_BYTES - 120)}\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>`,
  "{name, arguments} with 64 KB of arguments": JSON.stringify({
    name: "file_write",
    arguments: { path: "a.txt", content: long },
  }),
  "<tool_call> list of two calls, 64 KB": `<tool_call>${JSON.stringify({ name: "file_write", arguments: { path: "a.txt", content: long } })}</tool_call><tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>`,
  "Qwen3-Coder XML call, 64 KB parameter": `<tool_call>\n<function=file_write>\n<parameter=path>\na.txt\n</parameter>\n<parameter=content>\n${long}\n</parameter>\n</function>\n</tool_call>`,
  "Gemma tool_code, 64 KB string": `\`\`\`tool_code\nfile_write(path="a.txt", content="${long}")\n\`\`\``,
  "LFM2 Python list, 64 KB string": `<|tool_call_start|>[file_write(path='a.txt', content='${long}')]<|tool_call_end|>`,
  "FunctionGemma call, 64 KB string": `<start_function_call>call:file_write{content:<escape>${long}<escape>,path:<escape>a.txt<escape>}<end_function_call>`,
  "Gemma 4 call, 64 KB string": `<|tool_call>call:file_write{content:<|"|>${long}<|"|>,path:<|"|>a.txt<|"|>}<tool_call|>`,
  "Mistral [TOOL_CALLS], 64 KB arguments": `[TOOL_CALLS]file_write[ARGS]${JSON.stringify({ path: "a.txt", content: long })}`,
  "bare arguments, 64 KB": JSON.stringify({ path: "a.txt", content: long }),
  "64 KB of prose quoting a Gemma 4 call (a correction)": `${long} <|tool_call>call:bash{command:<|"|>ls<|"|>}<tool_call|>`,
  "Harmony, 64 KB analysis then the final step": `<|channel|>analysis<|message|>${filler(REPLY_BYTES - 200)}<|end|><|start|>assistant<|channel|>final<|message|>${step("read")}<|return|>`,
  "broken JSON, 64 KB (a correction)": `${step(filler(REPLY_BYTES - 100)).slice(0, -2)}"`,
  "64 KB of prose, no object (a correction)": filler(REPLY_BYTES),
};

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

function time(fn) {
  // Warm: the JIT settles before the measured calls.
  for (let i = 0; i < 200; i++) fn();
  const out = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out;
}

const rows = [];
// A native call whose 64 KB arguments are read strictly (the reply text is empty).
const nativeArgs = JSON.stringify({ path: "a.txt", content: long });
const NATIVE = {
  "native tool_calls, 64 KB arguments": [{ name: "file_write", arguments: nativeArgs }],
  "native tool_calls, 64 KB arguments cut off (a correction)": [
    { name: "file_write", arguments: nativeArgs.slice(0, -2) },
  ],
};
for (const [name, text] of Object.entries(SHAPES)) {
  const read = (t) => {
    const harmony = readHarmony(t);
    return parseStep(harmony?.text ?? t, tools, harmony?.call ? { calls: [harmony.call] } : {});
  };
  const ours = time(() => read(text));
  const base = time(() => {
    try {
      JSON.parse(text);
    } catch {
      // the baseline only pays the parse
    }
  });
  const p99 = percentile(ours, 99);
  const baseP99 = percentile(base, 99);
  rows.push(
    row({
      bench: "parse",
      figure: `step parser, ${name} (${(Buffer.byteLength(text) / 1024).toFixed(0)} KB), p99 vs JSON.parse p99`,
      value: p99,
      baseline: baseP99,
      unit: "ms",
      ratio: p99 / baseP99,
      aim: "< 1 ms",
      met: p99 < 1,
    }),
  );
}
for (const [name, calls] of Object.entries(NATIVE)) {
  const ours = time(() => parseStep("", tools, { calls }));
  const base = time(() => {
    try {
      JSON.parse(calls[0].arguments);
    } catch {
      // the baseline only pays the parse
    }
  });
  const p99 = percentile(ours, 99);
  const baseP99 = percentile(base, 99);
  rows.push(
    row({
      bench: "parse",
      figure: `step parser, ${name} (${(Buffer.byteLength(calls[0].arguments) / 1024).toFixed(0)} KB), p99 vs JSON.parse p99`,
      value: p99,
      baseline: baseP99,
      unit: "ms",
      ratio: p99 / baseP99,
      aim: "< 1 ms",
      met: p99 < 1,
    }),
  );
}
publish(rows);
