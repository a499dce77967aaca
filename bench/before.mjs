#!/usr/bin/env node
/**
 * This build beside the build before a change (bench/lib/before.mjs; `BENCH_BEFORE=<ref>`,
 * default the main before issue 31), interleaved in one run, on the figures that change set
 * out to move or keep:
 * - `scoot --version` and a trivial run: unchanged within 10%;
 * - own cost per tool turn on the peer mix (50 turns of reads and listings, SSE): the figure
 *   bench/peer.mjs holds against pi (aim there ≤ 0.5x pi), here against the before build;
 * - peak RSS of a 300-turn run (the scale mix, default budget): < 70 MB;
 * - the first `sessions list` of 5,000 transcripts (no listing index yet): < 400 ms.
 *
 *   npm run build && node bench/before.mjs [runs]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeCli } from "./lib/before.mjs";
import { measure, TIME } from "./lib/measure.mjs";
import { iqr, median, publish, row } from "./lib/report.mjs";
import { peerScootScript, scaleTurnScript, scootEnv, writeSessions } from "./lib/scale-fixtures.mjs";
import { startBenchServer } from "./lib/server.mjs";
import { writeBenchTree } from "./lib/tree.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const NOW = path.join(here, "..", "dist", "scoot.cjs");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 5);
const STARTS = 21;
const PEER_TURNS = 50;
const SCALE_TURNS = 300;
const SESSIONS = 5000;

const before = beforeCli();
if (before.error) {
  console.error(`before/after skipped: ${before.error}`);
  process.exit(0);
}
const builds = { now: NOW, before: before.cli };
const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-before-run-"));
const project = path.join(work, "project");
writeBenchTree(project);

async function ok(cli, args, env, cwd = project) {
  const r = await measure(process.execPath, [cli, ...args], { env, cwd });
  if (r.code !== 0)
    throw new Error(`${path.relative(work, cli)} ${args.join(" ")} exited ${r.code}: ${r.err}`);
  return r;
}

const figures = {};
const add = (name, build, v) => {
  figures[name] ??= { now: [], before: [] };
  figures[name][build].push(v);
};

const sse = await startBenchServer([], { sse: true });
const plain = await startBenchServer([]);
try {
  const homes = Object.fromEntries(Object.keys(builds).map((b) => [b, path.join(work, `home-${b}`)]));
  for (let i = 0; i < STARTS; i++)
    for (const [b, cli] of Object.entries(builds))
      add("version", b, (await ok(cli, ["--version"], scootEnv(homes[b]))).ms);
  for (let r = 0; r < RUNS; r++) {
    for (const [b, cli] of Object.entries(builds)) {
      const home = homes[b];
      plain.reset([JSON.stringify({ thought: "done", action: "final", action_input: "done" })]);
      add(
        "trivial",
        b,
        (await ok(cli, ["-e", "trivial"], scootEnv(home, { SCOOT_BACKEND_BASE_URL: plain.url }))).ms,
      );
      sse.reset(peerScootScript(PEER_TURNS));
      await ok(
        cli,
        ["-e", "benchmark goal"],
        scootEnv(home, {
          SCOOT_BACKEND_BASE_URL: sse.url,
          SCOOT_AGENT_MAX_TURNS: String(PEER_TURNS + 5),
          SCOOT_AGENT_CONTEXT_BUDGET_BYTES: "0",
        }),
      );
      add("turn", b, median(sse.gaps()));
      plain.reset(scaleTurnScript(SCALE_TURNS));
      const long = await ok(
        cli,
        ["-e", "scale benchmark goal"],
        scootEnv(home, { SCOOT_BACKEND_BASE_URL: plain.url, SCOOT_AGENT_MAX_TURNS: String(SCALE_TURNS + 5) }),
      );
      add("rss", b, long.mb);
    }
  }
  // The listing: the same transcripts for both, the listing index removed before each first listing.
  const listHome = path.join(work, "home-sessions");
  const dir = path.join(listHome, "state", "sessions");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeSessions(dir, SESSIONS, 40);
  // Files changed within the index's racy window are never remembered (docs/sessions.md).
  await new Promise((r) => setTimeout(r, 2500));
  for (let r = 0; r < RUNS; r++) {
    for (const [b, cli] of Object.entries(builds)) {
      fs.rmSync(path.join(dir, "list-index.json"), { force: true });
      add("list", b, (await ok(cli, ["sessions", "list"], scootEnv(listHome), work)).ms);
    }
  }
} finally {
  await sse.close();
  await plain.close();
  fs.rmSync(work, { recursive: true, force: true });
}

const compare = (name, figure, unit, aim, met) => {
  const now = median(figures[name].now);
  const was = median(figures[name].before);
  return row({
    bench: "before",
    figure: `${figure}, this build vs ${before.ref}`,
    value: now,
    valueSpread: iqr(figures[name].now),
    baseline: was,
    baselineSpread: iqr(figures[name].before),
    unit,
    ratio: now / was,
    aim,
    met: met?.(now, was),
  });
};
const within10 = (now, was) => now / was <= 1.1;
const rows = [
  compare("version", "scoot --version", "ms", "within 10%", within10),
  compare("trivial", "trivial run (first reply is final)", "ms", "within 10%", within10),
  compare(
    "turn",
    `own cost per tool turn (${PEER_TURNS}-turn peer mix, SSE)`,
    "ms",
    "(the aim against pi: peer row)",
  ),
  compare(
    "list",
    `first sessions list, ${SESSIONS} sessions (no listing index)`,
    "ms",
    "< 400 ms",
    (now) => now < 400,
  ),
];
if (TIME) rows.push(compare("rss", `peak RSS (${SCALE_TURNS}-turn run)`, "MB", "< 70 MB", (now) => now < 70));
publish(rows);
