#!/usr/bin/env node
/**
 * Scoot beside a peer agent, pi (`@mariozechner/pi-coding-agent`), in the same 50-turn run
 * against the same scripted server: two reads in three turns, a directory listing in the
 * third, on a small tree. Both clients ask to stream and get the reply as one burst of SSE
 * chunks; Scoot is scripted with its JSON steps, pi with native tool calls. The figure is each
 * agent's own cost per tool turn (the server's last reply byte to the next request).
 *
 * pi is installed from the npm registry at bench time into a directory under the OS temp
 * dir (never into this repository); when that fails the peer is skipped with the reason.
 * pi's grep and find need ripgrep and fd, which it would download, so the mix leaves them out.
 * Aim: Scoot ≤ 0.5x pi.
 *
 *   npm run build && node bench/peer.mjs [runs]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { installPi, piLaunch, runAgent } from "./lib/npm-peer.mjs";
import { iqr, median, publish, row } from "./lib/report.mjs";
import { peerMix, peerScootScript } from "./lib/scale-fixtures.mjs";
import { startBenchServer } from "./lib/server.mjs";
import { writeBenchTree } from "./lib/tree.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 7);
const TURNS = 50;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-peer-"));
const project = path.join(work, "project");
const home = path.join(work, "home");
const piHome = path.join(work, "pi");
writeBenchTree(project);

/** The same work for both: [Scoot's step, pi's tool call] per turn. */
const turns = peerMix(TURNS);
const scootScript = peerScootScript(TURNS);
const piScript = [...turns.map(([, p]) => ({ toolCall: p })), "done"];

const run = (cmd, args, env) => runAgent(project, cmd, args, env);

const peer = installPi();
const server = await startBenchServer([], { sse: true });
const scootEnv = {
  ...process.env,
  SCOOT_HOME: home,
  SCOOT_BACKEND_BASE_URL: server.url,
  SCOOT_AGENT_MAX_TURNS: String(TURNS + 5),
  SCOOT_AGENT_CONTEXT_BUDGET_BYTES: "0",
};
const pi = peer.cli
  ? piLaunch({ piHome, work, baseUrl: server.url, contextWindow: 1_000_000 })
  : { env: undefined, args: [] };

const scootGap = [];
const piGap = [];
let peerProblem = peer.error;
for (let r = 0; r < RUNS; r++) {
  server.reset(scootScript);
  await run(process.execPath, [CLI, "-e", "benchmark goal"], scootEnv);
  scootGap.push(median(server.gaps()));
  if (peerProblem) continue;
  server.reset(piScript);
  try {
    await run(process.execPath, [peer.cli, ...pi.args], pi.env);
    const gaps = server.gaps();
    if (gaps.length < TURNS - 2) throw new Error(`pi made ${gaps.length + 1} requests of ${TURNS}`);
    piGap.push(median(gaps));
  } catch (e) {
    peerProblem = `pi ${peer.version} did not finish the scripted run: ${e.message.slice(0, 300)}`;
  }
}
await server.close();
fs.rmSync(work, { recursive: true, force: true });

const own = median(scootGap);
if (peerProblem) {
  console.error(`peer skipped: ${peerProblem}`);
  publish([
    row({
      bench: "peer",
      figure: `own cost per tool turn (${TURNS}-turn run, read/list, SSE); peer skipped: ${peerProblem.replaceAll("|", "/")}`,
      value: own,
      valueSpread: iqr(scootGap),
      unit: "ms",
      aim: "≤ 0.5x pi",
    }),
  ]);
} else {
  const base = median(piGap);
  publish([
    row({
      bench: "peer",
      figure: `own cost per tool turn (${TURNS}-turn run, read/list, SSE) vs pi ${peer.version}`,
      value: own,
      valueSpread: iqr(scootGap),
      baseline: base,
      baselineSpread: iqr(piGap),
      unit: "ms",
      ratio: own / base,
      aim: "≤ 0.5x pi",
      met: own / base <= 0.5,
    }),
  ]);
}
