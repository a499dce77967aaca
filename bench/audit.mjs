#!/usr/bin/env node
/**
 * The audit log (issue 12): events per second through Scoot's writer — lock per append, hash
 * chain, descriptor kept open, `tool_call`/`policy_deny` fdatasync'ed before emit returns,
 * rotation with eviction — against the writer as it was before (bench/lib/audit-before.mjs:
 * reopen + append per event, no fsync, no chain) and against a bare appendFileSync loop, all
 * in the same run. The event mix is an info-level tool turn: run/thought/tool_call/observation
 * (one synced event in four); a second figure is tool_call only (every event synced).
 *
 *   npm run build && node bench/audit.mjs [runs]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createBeforeLog } from "./lib/audit-before.mjs";
import { iqr, median, publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const { createAuditLog } = await import(path.join(here, "..", "dist", "store", "audit-writer.js"));
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 5);
const EVENTS = 4_000;
const MAX_FILE_BYTES = 256 * 1024;
const MSG = `glob {"pattern":"src/**/*.ts"} ${"x".repeat(60)}`;
const MIX = ["thought", "tool_call", "observation", "final"];

function rate(log, kinds) {
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) {
    const r = log.emit("bench-session", kinds[i % kinds.length], MSG, "run-1");
    if (!r.ok) throw new Error(r.error);
  }
  log.flush?.();
  return EVENTS / ((performance.now() - t0) / 1000);
}

function scoot(dir, kinds) {
  const log = createAuditLog({
    file: path.join(dir, `audit-${kinds.length}.jsonl`),
    level: "info",
    toFile: true,
    maxRetained: 4,
    maxFileBytes: MAX_FILE_BYTES,
  });
  const v = rate(log, kinds);
  log.close();
  return v;
}

function before(dir, kinds) {
  return rate(
    createBeforeLog({
      file: path.join(dir, `before-${kinds.length}.jsonl`),
      maxFileBytes: MAX_FILE_BYTES,
      maxRetained: 4,
    }),
    kinds,
  );
}

function bare(dir) {
  const file = path.join(dir, "bare.jsonl");
  const line = `${JSON.stringify({ seq: 0, ts: Date.now(), session_id: "bench-session", run_id: "run-1", kind: "tool_call", msg: MSG })}\n`;
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) fs.appendFileSync(file, line);
  return EVENTS / ((performance.now() - t0) / 1000);
}

const m = { mix: [], mixBefore: [], calls: [], callsBefore: [], obs: [], obsBefore: [], bare: [] };
for (let r = 0; r < RUNS; r++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-audit-"));
  // Alternate the order so neither side always runs on a warmer cache.
  const jobs = [
    () => m.mix.push(scoot(dir, MIX)),
    () => m.mixBefore.push(before(dir, MIX)),
    () => m.calls.push(scoot(dir, ["tool_call"])),
    () => m.callsBefore.push(before(dir, ["tool_call"])),
    () => m.obs.push(scoot(dir, ["observation", "thought"])),
    () => m.obsBefore.push(before(dir, ["observation", "thought"])),
    () => m.bare.push(bare(dir)),
  ];
  for (const j of r % 2 ? jobs.reverse() : jobs) j();
  fs.rmSync(dir, { recursive: true, force: true });
}
const rows = [
  [
    "info-level tool turns (1 event in 4 fdatasync'ed), chain + lock per append, vs the writer before issue 12",
    m.mix,
    m.mixBefore,
  ],
  ["tool_call only (every event fdatasync'ed), vs the writer before issue 12", m.calls, m.callsBefore],
  [
    "unsynced kinds only: the price of the lock per append and the chain, vs the writer before issue 12",
    m.obs,
    m.obsBefore,
  ],
  ["info-level tool turns, vs a bare appendFileSync loop", m.mix, m.bare],
].map(([figure, ours, base]) =>
  row({
    bench: "audit",
    figure,
    value: median(ours),
    valueSpread: iqr(ours),
    baseline: median(base),
    baselineSpread: iqr(base),
    unit: "ev/s",
    ratio: median(ours) / median(base),
    // No aim: the price of a record that is on disk before its effect, and of a chain. The
    // per-turn cost that matters to a user is bench/loop's own cost per tool turn.
    aim: "(informational)",
  }),
);
publish(rows);
