#!/usr/bin/env node
/**
 * The live view's price (docs/keyboard.md "The live view"): on a pseudo-terminal (util-linux `script`)
 * the view draws on stderr; with stderr sent to /dev/null it is off. Figures: `scoot --version`
 * vs `node -e 0`, both on the terminal (aim ≤ 1.3x), and the trivial run with the view on vs
 * off (aim: within 10%).
 *
 *   npm run build && node bench/view.mjs [runs]
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";
import { startBenchServer } from "./lib/server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 15);
if (spawnSync("script", ["--version"], { stdio: "ignore" }).status !== 0) {
  console.error("bench/view.mjs: util-linux `script` is not installed; skipped");
  process.exit(0);
}
const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-view-"));
const final = JSON.stringify({ thought: "easy", action: "final", action_input: "hello" });
const server = await startBenchServer(Array.from({ length: 4 * RUNS + 8 }, () => final));
const env = {
  ...process.env,
  SCOOT_HOME: path.join(work, "home"),
  SCOOT_BACKEND_BASE_URL: server.url,
  SCOOT_BACKEND_STREAM: "false",
  TERM: "xterm-256color",
};
const q = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Wall time of `shell` run inside a pseudo-terminal. */
function onTerminal(shell) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn("script", ["-qec", shell, "/dev/null"], {
      cwd: work,
      env,
      stdio: ["ignore", "ignore", "ignore"],
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${shell}: exit ${code}`)),
    );
  });
}

const node = q(process.execPath);
const cli = q(CLI);
const cases = {
  node: `${node} -e 0`,
  version: `${node} ${cli} --version`,
  viewOn: `${node} ${cli} -e trivial`,
  viewOff: `${node} ${cli} -e trivial 2>/dev/null`,
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (const shell of Object.values(cases)) await onTerminal(shell);
for (let i = 0; i < RUNS; i++)
  for (const [k, shell] of Object.entries(cases)) times[k].push(await onTerminal(shell));
await server.close();
fs.rmSync(work, { recursive: true, force: true });

const m = (k) => median(times[k]);
publish([
  row({
    bench: "view",
    figure: "scoot --version on a pseudo-terminal vs node -e 0 there",
    value: m("version"),
    valueSpread: iqr(times.version),
    baseline: m("node"),
    baselineSpread: iqr(times.node),
    unit: "ms",
    ratio: m("version") / m("node"),
    aim: "≤ 1.3x node -e 0",
    met: m("version") / m("node") <= 1.3,
  }),
  row({
    bench: "view",
    figure: "trivial run on a pseudo-terminal, live view on vs off (stderr to /dev/null)",
    value: m("viewOn"),
    valueSpread: iqr(times.viewOn),
    baseline: m("viewOff"),
    baselineSpread: iqr(times.viewOff),
    unit: "ms",
    ratio: m("viewOn") / m("viewOff"),
    aim: "within 10%",
    met: m("viewOn") / m("viewOff") <= 1.1,
  }),
]);
