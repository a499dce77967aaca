#!/usr/bin/env node
/**
 * The agent loop: a 50-turn scripted run (file_read / grep / glob steps on a small tree)
 * against a zero-delay scripted server. Reports Scoot's own cost per tool turn (from the
 * server's reply to Scoot's next request) beside a bare node:http client replaying the very
 * same request bodies; the wall time of a run whose first reply is `final` beside a fresh
 * bare-client process making one request; and peak RSS of both.
 * The floor (issue 48): the same 50 turns driven by a bare loop (bench/lib/floor-client.mjs)
 * that builds each request from its history, parses the reply and the step, does the read the
 * step asks for, and appends the call's record with the one fdatasync a turn Scoot makes
 * (`strace -c -f -e trace=fsync,fdatasync` on a 50-turn run: 50 fdatasyncs, all on the audit
 * log's tool_call records) and the turn to an unsynced transcript. Runs interleaved.
 * Aims: trivial run within 0.1 s of the bare client, ≤ 6 ms own cost per tool turn and within
 * 2x of the floor, ≤ 80 MB.
 *
 *   npm run build && node bench/loop.mjs [runs]
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";
import { startBenchServer } from "./lib/server.mjs";
import { writeBenchTree } from "./lib/tree.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const BARE = path.join(here, "lib", "bare-client.mjs");
const FLOOR = path.join(here, "lib", "floor-client.mjs");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 7);
const TURNS = 50;
const TIME = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-loop-"));
const project = path.join(work, "project");
const home = path.join(work, "home");
writeBenchTree(project);

const step = (action, input) =>
  JSON.stringify({ thought: "next", action, action_input: JSON.stringify(input) });
const toolSteps = Array.from({ length: TURNS - 1 }, (_, i) => {
  const d = i % 5;
  const f = i % 10;
  if (i % 3 === 0) return step("file_read", { path: `pkg${d}/m${f}.ts`, limit: 20 });
  if (i % 3 === 1) return step("grep", { pattern: "note [0-3]", path: `pkg${d}/m${f}.ts` });
  return step("glob", { pattern: `pkg${d}/*.ts` });
});
const finalStep = JSON.stringify({ thought: "done", action: "final", action_input: "done" });

/** Runs a command: wall ms, peak RSS in MB and CPU ms (user + sys), the last two via /usr/bin/time when present. */
function measure(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const full = TIME ? [TIME, "-f", "%U %S %M", cmd, ...args] : [cmd, ...args];
    const t0 = performance.now();
    const child = spawn(full[0], full.slice(1), { cwd: project, env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${args.join(" ")} exited ${code}: ${err}`));
      const [user, sys, kb] = TIME
        ? err.trim().split("\n").at(-1).split(" ").map(Number)
        : [Number.NaN, Number.NaN, Number.NaN];
      resolve({ ms, mb: kb / 1024, cpuMs: (user + sys) * 1000 });
    });
  });
}

const server = await startBenchServer([]);
const env = {
  ...process.env,
  SCOOT_HOME: home,
  SCOOT_BACKEND_BASE_URL: server.url,
  SCOOT_AGENT_MAX_TURNS: String(TURNS + 5),
  SCOOT_AGENT_CONTEXT_BUDGET_BYTES: "0",
};
const scootGap = [];
const bareGap = [];
const floorGap = [];
// CPU ms per tool turn: a 50-turn run's CPU less a one-turn run's, over the 49 tool turns.
const scootCpu = [];
const floorCpu = [];
const scootRss = [];
const trivial = [];
const trivialBare = [];
const bareRss = [];
const bodiesFile = path.join(work, "bodies.jsonl");
for (let r = 0; r < RUNS; r++) {
  server.reset([...toolSteps, finalStep]);
  const run = await measure(process.execPath, [CLI, "-e", "benchmark goal"], env);
  const runCpu = run.cpuMs;
  scootRss.push(run.mb);
  scootGap.push(median(server.gaps()));
  fs.writeFileSync(bodiesFile, `${server.bodies.join("\n")}\n`);
  server.reset([...toolSteps, finalStep]);
  await measure(process.execPath, [BARE, server.url, bodiesFile], env);
  bareGap.push(median(server.gaps()));
  server.reset([...toolSteps, finalStep]);
  const floorRun = await measure(process.execPath, [FLOOR, server.url, bodiesFile, work], env);
  if (server.bodies.length !== TURNS)
    throw new Error(`the floor made ${server.bodies.length} requests of ${TURNS}`);
  floorGap.push(median(server.gaps()));

  server.reset([finalStep]);
  const one = await measure(process.execPath, [CLI, "-e", "trivial"], env);
  trivial.push(one.ms);
  scootCpu.push((runCpu - one.cpuMs) / (TURNS - 1));
  server.reset([finalStep]);
  const bare = await measure(process.execPath, [BARE, server.url], env);
  floorCpu.push((floorRun.cpuMs - bare.cpuMs) / (TURNS - 1));
  trivialBare.push(bare.ms);
  bareRss.push(bare.mb);
}
await server.close();
fs.rmSync(work, { recursive: true, force: true });

const own = median(scootGap);
const ownBase = median(bareGap);
const floor = median(floorGap);
// Each round's Scoot run and floor run are back to back: the median of the rounds' ratios is
// less moved by a load that changes between rounds than the ratio of the medians.
const floorRatio = median(scootGap.map((g, i) => g / floorGap[i]));
const tri = median(trivial);
const triBase = median(trivialBare);
const rows = [
  row({
    bench: "loop",
    figure: `own cost per tool turn (${TURNS}-turn run)`,
    value: own,
    valueSpread: iqr(scootGap),
    baseline: ownBase,
    baselineSpread: iqr(bareGap),
    unit: "ms",
    ratio: own / ownBase,
    aim: "≤ 6 ms",
    met: own <= 6,
  }),
  row({
    bench: "loop",
    figure: `own cost per tool turn (${TURNS}-turn run) vs the floor: a bare loop doing the same request, parse, read and one fdatasync a turn`,
    value: own,
    valueSpread: iqr(scootGap),
    baseline: floor,
    baselineSpread: iqr(floorGap),
    unit: "ms",
    ratio: floorRatio,
    aim: "≤ 2x the floor (median of the rounds' ratios)",
    met: floorRatio <= 2,
  }),
  row({
    bench: "loop",
    figure: "trivial run (first reply is final)",
    value: tri,
    valueSpread: iqr(trivial),
    baseline: triBase,
    baselineSpread: iqr(trivialBare),
    unit: "ms",
    ratio: tri / triBase,
    aim: "≤ bare + 100 ms",
    met: tri - triBase <= 100,
  }),
];
if (TIME) {
  rows.push(
    row({
      bench: "loop",
      figure: `CPU (user + sys) per tool turn: a ${TURNS}-turn run less a one-turn run, over ${TURNS - 1} turns, vs the floor's (less the bare client's one request)`,
      value: median(scootCpu),
      valueSpread: iqr(scootCpu),
      baseline: median(floorCpu),
      baselineSpread: iqr(floorCpu),
      unit: "ms",
      ratio: median(scootCpu) / median(floorCpu),
      aim: "(context: CPU time is what a loaded machine distorts least; /usr/bin/time counts in 10 ms steps)",
    }),
    row({
      bench: "loop",
      figure: `peak RSS (${TURNS}-turn run)`,
      value: median(scootRss),
      baseline: median(bareRss),
      unit: "MB",
      ratio: median(scootRss) / median(bareRss),
      aim: "≤ 80 MB",
      met: median(scootRss) <= 80,
    }),
  );
}
publish(rows);
