#!/usr/bin/env node
/**
 * Benchmark: what `--execute-plan`'s narrowing adds to one gate decision (docs/safety.md "Plans
 * as contracts"). The same calls — a write to a named file, a write to another, a named and an
 * unnamed command, a request to a named host — are decided by the normal gate alone (the
 * baseline) and by the gate narrowed to a plan of 20 steps, in the same run, in process, over a
 * real project directory. Aim: under 0.1 ms added per decision.
 *
 *   npx tsc -p tsconfig.build.json && node bench/plan-gate.mjs
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";

const dist = path.join(import.meta.dirname, "..", "dist");
const load = async (p) => import(pathToFileURL(path.join(dist, p)).href);
const { decide } = await load("policy/gate.js");
const { buildGateSettings } = await load("policy/settings.js");
const { defaultConfig } = await load("config/schema.js");
const { planGate, planScope } = await load("agent/plan-narrow.js");

/** Decisions per round, and rounds (the median of the rounds is reported). */
const DECISIONS = 5000;
const ROUNDS = 9;
const AIM_MS = 0.1;

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-plan-")));
fs.mkdirSync(path.join(root, "src"));
const steps = Array.from({ length: 20 }, (_, i) => ({
  title: `step ${i}`,
  files: [`src/f${i}.ts`, `docs/d${i}.md`],
  commands: [`npm run task${i}`],
  hosts: [`h${i}.example.com`],
}));
const settings = buildGateSettings(defaultConfig(), root, {
  mode: "guarded",
  scootHome: path.join(root, ".home"),
});
const narrowed = planGate(planScope({ steps }, root));
const calls = [
  { capability: "write", writePaths: ["src/f7.ts"] },
  { capability: "write", writePaths: ["src/other.ts"] },
  { capability: "exec", command: "npm run task3 -- --verbose" },
  { capability: "exec", command: "npm run deploy" },
  { capability: "net_read", url: { method: "GET", url: "https://h5.example.com/x" } },
];

function perDecisionMs(judge) {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) oneRound(judge, rounds);
  return rounds;
}

function oneRound(judge, rounds) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < DECISIONS; i++) judge(calls[i % calls.length], settings);
  rounds.push(Number(process.hrtime.bigint() - t0) / 1e6 / DECISIONS);
}

// Warm both paths first, then alternate round by round so drift on a shared machine hits both alike.
perDecisionMs(decide);
perDecisionMs(narrowed);
const plain = [];
const bound = [];
for (let k = 0; k < 3 * ROUNDS; k++) {
  oneRound(decide, plain);
  oneRound(narrowed, bound);
}
fs.rmSync(root, { recursive: true, force: true });
const added = median(bound) - median(plain);
console.log(
  `gate decision: ${median(plain).toFixed(4)} ms; narrowed to a 20-step plan: ${median(bound).toFixed(4)} ms; added ${added.toFixed(4)} ms`,
);
publish([
  row({
    bench: "plan-gate",
    figure: "gate decision narrowed to a 20-step plan (5 mixed calls)",
    value: median(bound),
    valueSpread: iqr(bound),
    baseline: median(plain),
    baselineSpread: iqr(plain),
    unit: "ms",
    ratio: median(bound) / median(plain),
    aim: `adds < ${AIM_MS} ms per decision (added ${added.toFixed(4)} ms)`,
    met: added < AIM_MS,
  }),
]);
