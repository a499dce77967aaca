#!/usr/bin/env node
/**
 * Reading a reply: the step parser's cost on 64 KB replies in the shapes models send (a plain
 * step with a long thought, the {name, arguments} dialect, a native chat template's format, a
 * Harmony reply, broken JSON that gets a correction, a reply of prose with no object), against
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
const SHAPES = {
  "a plain step, 64 KB thought": step(filler(REPLY_BYTES - 100)),
  "{name, arguments} after 64 KB of prose": `${filler(REPLY_BYTES - 100)}\n${JSON.stringify({ name: "bash", arguments: { command: "ls" } })}`,
  "Qwen3-Coder XML call after 64 KB of prose": `${filler(REPLY_BYTES - 120)}\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>`,
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
for (const [name, text] of Object.entries(SHAPES)) {
  const read = (t) => {
    const harmony = t.includes("<|channel|>") ? readHarmony(t) : undefined;
    return parseStep(harmony?.text ?? t, tools);
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
publish(rows);
