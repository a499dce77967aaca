#!/usr/bin/env node
/**
 * The audit log: events per second appended through Scoot's writer with rotation on (a
 * small max_file_bytes so many generations are retired, and eviction with gap records),
 * against a bare `fs.appendFileSync` loop writing lines of the same size in the same run.
 *
 *   npm run build && node bench/audit.mjs [runs]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const { createAuditLog } = await import(path.join(here, "..", "dist", "store", "audit.js"));
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 7);
const EVENTS = 20_000;
const MAX_FILE_BYTES = 256 * 1024;
const MSG = `glob {"pattern":"src/**/*.ts"} ${"x".repeat(60)}`;

function scoot(dir) {
  const log = createAuditLog({
    file: path.join(dir, "audit.jsonl"),
    level: "info",
    toFile: true,
    maxRetained: 4,
    maxFileBytes: MAX_FILE_BYTES,
  });
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) {
    const r = log.emit("bench-session", "tool_call", MSG, "run-1");
    if (!r.ok) throw new Error(r.error);
  }
  return EVENTS / ((performance.now() - t0) / 1000);
}

function bare(dir) {
  const file = path.join(dir, "bare.jsonl");
  const line = `${JSON.stringify({ seq: 0, ts: Date.now(), session_id: "bench-session", run_id: "run-1", kind: "tool_call", msg: MSG })}\n`;
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) fs.appendFileSync(file, line);
  return EVENTS / ((performance.now() - t0) / 1000);
}

const ours = [];
const base = [];
for (let r = 0; r < RUNS; r++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-audit-"));
  // Alternate the order so neither side always runs on a warmer cache.
  if (r % 2) {
    ours.push(scoot(dir));
    base.push(bare(dir));
  } else {
    base.push(bare(dir));
    ours.push(scoot(dir));
  }
  fs.rmSync(dir, { recursive: true, force: true });
}
const v = median(ours);
const b = median(base);
publish([
  row({
    bench: "audit",
    figure: `append rate, rotation every ${MAX_FILE_BYTES / 1024} KiB`,
    value: v,
    valueSpread: iqr(ours),
    baseline: b,
    baselineSpread: iqr(base),
    unit: "ev/s",
    ratio: v / b,
    // No aim is set: each Scoot event also pays a size check, redaction and, per rotation,
    // an fsync'd generation sidecar and a cross-process lock. The ratio is what to watch.
    aim: "(informational)",
  }),
]);
