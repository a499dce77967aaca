#!/usr/bin/env node
/**
 * `npm run bench`: runs every benchmark in bench/ one after another (never in parallel:
 * they would disturb each other), collects their rows, and writes one Markdown table to
 * stdout and to bench/RESULTS.md.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { table } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const BENCHES = [
  "startup.mjs",
  "loop.mjs",
  "peer.mjs",
  "before.mjs",
  "context.mjs",
  "stream.mjs",
  "prefix.mjs",
  "sse.mjs",
  "parse.mjs",
  "audit.mjs",
  "tools.mjs",
  "sandbox.mjs",
  "scale.mjs",
  "acp.mjs",
  "prompt.mjs",
  "telemetry.mjs",
  "view.mjs",
  "keys.mjs",
  "plan-gate.mjs",
  "effect-lock.mjs",
  "vendored.mjs",
];
const rowsFile = path.join(os.tmpdir(), `scoot-bench-rows-${process.pid}.jsonl`);
fs.rmSync(rowsFile, { force: true });

const failed = [];
for (const bench of BENCHES) {
  console.error(`\n== ${bench}`);
  const r = spawnSync(process.execPath, [path.join(here, bench)], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, BENCH_ROWS: rowsFile },
  });
  if (r.status !== 0) failed.push(bench);
}
const rows = fs.existsSync(rowsFile)
  ? fs
      .readFileSync(rowsFile, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
fs.rmSync(rowsFile, { force: true });

const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.versions.node}, load ${os.loadavg()[0].toFixed(2)}`;
const md = [
  "# Benchmark results",
  "",
  `Written by \`npm run bench\` on ${new Date().toISOString()} (${machine}).`,
  "Each figure is a median over repeated runs with its interquartile range, beside a baseline",
  "measured in the same run on the same machine; read the ratio, not the absolute times.",
  "",
  table(rows),
  "",
  ...(failed.length ? [`Benchmarks that failed to run: ${failed.join(", ")}`, ""] : []),
].join("\n");
fs.writeFileSync(path.join(here, "RESULTS.md"), md);
console.log(`\n${md}`);
process.exit(failed.length ? 1 : 0);
