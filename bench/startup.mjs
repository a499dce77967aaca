#!/usr/bin/env node
/**
 * Startup: median wall time of `scoot --version` and `scoot config` against bare `node -e 0`,
 * interleaved in the same run. Aim: --version within 1.3x of node -e 0 (everything heavy is
 * loaded lazily).
 *
 *   npm run build && node bench/startup.mjs [runs]
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.mjs");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 21);
if (!fs.existsSync(CLI)) {
  console.error("dist/scoot.mjs not found: run npm run build first");
  process.exit(1);
}
const home = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-startup-"));
const env = { ...process.env, SCOOT_HOME: home };

function wall(args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, stdio: ["ignore", "ignore", "ignore"] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}`);
  return ms;
}

const cases = { node: ["-e", "0"], version: [CLI, "--version"], config: [CLI, "config"] };
const times = { node: [], version: [], config: [] };
// Warm the file cache once, then interleave so drift hits every case alike.
for (const args of Object.values(cases)) wall(args);
for (let i = 0; i < RUNS; i++) for (const [k, args] of Object.entries(cases)) times[k].push(wall(args));
fs.rmSync(home, { recursive: true, force: true });

const base = median(times.node);
const rows = [
  row({
    bench: "startup",
    figure: "scoot --version",
    value: median(times.version),
    valueSpread: iqr(times.version),
    baseline: base,
    baselineSpread: iqr(times.node),
    unit: "ms",
    ratio: median(times.version) / base,
    aim: "≤ 1.3x node -e 0",
    met: median(times.version) / base <= 1.3,
  }),
  row({
    bench: "startup",
    figure: "scoot config",
    value: median(times.config),
    valueSpread: iqr(times.config),
    baseline: base,
    baselineSpread: iqr(times.node),
    unit: "ms",
    ratio: median(times.config) / base,
    aim: "(informational)",
  }),
];
publish(rows);
