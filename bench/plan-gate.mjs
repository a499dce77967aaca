#!/usr/bin/env node
/**
 * Benchmark: what `--execute-plan`'s narrowing adds to one gate decision (docs/safety.md "Plans
 * as contracts"). The same calls — a write to a named file, a write to another, a named and an
 * unnamed command, a request to a named host — are decided by the normal gate alone (the
 * baseline) and by the gate narrowed to a plan of 20 steps, in the same run, in process, over a
 * real project directory. Aim: under 0.1 ms added per decision.
 *
 * Then what the plan adds below the words: the same sandboxed bash call (`true`) with and without
 * the binding plan's sandbox (the project read-only but the plan's files, their directories'
 * other entries bound read-only one by one), interleaved. Aim: under 5 ms added per call.
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
const { runShell } = await load("tools/bash.js");
const { probeSandbox } = await load("sandbox/probe.js");

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
const added = median(bound) - median(plain);
console.log(
  `gate decision: ${median(plain).toFixed(4)} ms; narrowed to a 20-step plan: ${median(bound).toFixed(4)} ms; added ${added.toFixed(4)} ms`,
);
/** Sandboxed bash calls per side, interleaved. */
const SHELL_CALLS = 25;
const SHELL_AIM_MS = 5;

/** A bash call of `true` in the sandbox, bound to the plan or not: its wall time in ms. */
async function shellCall(planned) {
  const config = defaultConfig();
  config.tools.sandbox = "bwrap";
  const sandbox = {
    scootHome: path.join(root, ".home"),
    tokenFile: path.join(root, ".home", "token"),
    unattended: false,
  };
  const ctx = {
    cwd: root,
    config,
    mode: "guarded",
    signal: new AbortController().signal,
    timeoutMs: 30_000,
    gate: () => ({ allow: true }),
    call: async () => "",
    childEnv: { ...process.env },
    services: { sandbox: planned ? { ...sandbox, plan: { files: [...scope.files], hosts: [] } } : sandbox },
  };
  const t0 = process.hrtime.bigint();
  const r = await runShell("true", ctx);
  if (r.failed) throw new Error(`bash failed: ${r.text}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const scope = planScope({ steps }, root);
const shellRows = [];
if ((await probeSandbox(undefined)).ok) {
  // The plan's files live among others, as in a real project: each directory's other entries
  // are pinned one by one, so the cost grows with them. A small and a crowded directory.
  for (const beside of [10, 40]) {
    for (const d of ["src", "docs"]) {
      fs.mkdirSync(path.join(root, d), { recursive: true });
      for (let i = 0; i < beside; i++) fs.writeFileSync(path.join(root, d, `x${i}.txt`), "x\n");
    }
    await shellCall(false);
    await shellCall(true);
    const free = [];
    const held = [];
    for (let k = 0; k < SHELL_CALLS; k++) {
      free.push(await shellCall(false));
      held.push(await shellCall(true));
    }
    const more = median(held) - median(free);
    console.log(
      `bash call: ${median(free).toFixed(2)} ms; bound to the plan (${beside} entries beside): ${median(held).toFixed(2)} ms; added ${more.toFixed(2)} ms`,
    );
    shellRows.push(
      row({
        bench: "plan-gate",
        figure: `sandboxed bash call bound to a 20-step plan (${beside} other entries in each of its 2 directories)`,
        value: median(held),
        valueSpread: iqr(held),
        baseline: median(free),
        baselineSpread: iqr(free),
        unit: "ms",
        ratio: median(held) / median(free),
        aim: `adds < ${SHELL_AIM_MS} ms per call (added ${more.toFixed(2)} ms)`,
        met: more < SHELL_AIM_MS,
      }),
    );
  }
} else console.log("bash rows skipped: bubblewrap cannot run here");
fs.rmSync(root, { recursive: true, force: true });

publish([
  ...shellRows,
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
