#!/usr/bin/env node
/**
 * The model's cache (issue 48; docs/context.md "Context budget and the server's cache"): a local
 * server reuses its KV cache only for the unchanged prefix of each request. Over a 10-turn and a
 * 300-turn run (two reads in three turns, a listing in the third, on the bench tree) against a
 * scripted server that reports usage as bytes / 4, read from the requests the server received:
 * the characters to prefill per turn (after the common prefix with the previous request) and the
 * prefix breaks (a request that changed or dropped an item the previous one carried) per 100
 * turns. Scoot runs with its default budget, so the 300-turn run compacts; every break should be
 * a compaction, and a 10-turn run should have none.
 *
 * Peers, where they install from the npm registry into the OS temp dir at bench time (kept
 * there between runs): pi (`@mariozechner/pi-coding-agent`, native tool calls `read` and `ls`)
 * and Codex (`@openai/codex`, a native binary; the Responses API and its `exec_command` tool),
 * both told a 40 000-token window, so the 300-turn run passes it as Scoot's passes its budget.
 * When a peer cannot be installed or run here, it is said to be skipped, and why.
 * The counts are deterministic for a given build: one run of each.
 *
 *   npm run build && node bench/prefix.mjs
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { installNpmPeer, installPi, piLaunch, runAgent } from "./lib/npm-peer.mjs";
import { prefixStats } from "./lib/prefix-stats.mjs";
import { publish, row } from "./lib/report.mjs";
import { startResponsesServer } from "./lib/responses-server.mjs";
import { peerMix, peerScootScript, scootEnv } from "./lib/scale-fixtures.mjs";
import { writeBenchTree } from "./lib/tree.mjs";
import { startUsageServer } from "./lib/usage-server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const RUNS = [10, 300];
/** The peers' context window in tokens: about Scoot's 80 000-byte default budget at 4 bytes a token, doubled for their reserve (pi keeps 16 384 tokens back). */
const PEER_WINDOW = 40_000;
/** Aim for the long run: no more breaks than today's compactions (8 in 300 turns). */
const LONG_BREAKS_PER_100 = 8 / 3;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-prefix-"));
const project = path.join(work, "project");
writeBenchTree(project);

const run = (cmd, args, env) => runAgent(project, cmd, args, env);

const server = await startUsageServer([]);
const results = []; // { agent, turns, stats } or { agent, skipped }

for (const turns of RUNS) {
  server.reset(peerScootScript(turns));
  const home = path.join(work, `home-${turns}`);
  const env = scootEnv(home, {
    SCOOT_BACKEND_BASE_URL: server.url,
    SCOOT_AGENT_MAX_TURNS: String(turns + 5),
  });
  const trace = await run(process.execPath, [CLI, "-e", "benchmark goal", "--trace"], env);
  const compactions = (trace.match(/\[trace\] compacted/g) ?? []).length;
  results.push({ agent: "Scoot", turns, stats: prefixStats(server.bodies), compactions });
}

/**
 * Each of RUNS with a peer (`runTurns` scripts its server and runs it): the prefix figures of the
 * requests in `bodies` (the server's own list, emptied by its reset), or why it did not finish.
 */
async function peerRuns(agent, bodies, runTurns) {
  for (const turns of RUNS) {
    try {
      await runTurns(turns);
      if (bodies.length < turns) throw new Error(`${agent} made ${bodies.length} requests of ${turns}`);
      results.push({ agent, turns, stats: prefixStats(bodies) });
    } catch (e) {
      results.push({ agent, turns, skipped: `did not finish the scripted run: ${e.message.slice(0, 200)}` });
    }
  }
}

const pi = installPi();
if (pi.error) results.push({ agent: "pi", skipped: pi.error });
else {
  const { env, args } = piLaunch({
    piHome: path.join(work, "pi"),
    work,
    baseUrl: server.url,
    contextWindow: PEER_WINDOW,
  });
  await peerRuns(`pi ${pi.version}`, server.bodies, async (turns) => {
    server.reset([...peerMix(turns).map(([, p]) => ({ toolCall: p })), "done"]);
    await run(process.execPath, [pi.cli, ...args], env);
  });
}

// Codex: a native binary in a platform package of @openai/codex; it speaks only the Responses
// API, so it gets the Responses server (bench/lib/responses-server.mjs) and its own shell tool
// (`head -n 20` for a read, `ls` for a listing), with the same window as pi.
const codex = installNpmPeer("@openai/codex", "codex", "scoot-bench-peer-codex");
if (codex.error) results.push({ agent: "Codex", skipped: codex.error });
else {
  const responses = await startResponsesServer([]);
  const codexHome = path.join(work, "codex");
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(
    path.join(codexHome, "config.toml"),
    [
      'model = "bench"',
      'model_provider = "bench"',
      `model_context_window = ${PEER_WINDOW}`,
      "[model_providers.bench]",
      'name = "bench"',
      `base_url = "${responses.url}"`,
      'wire_api = "responses"',
      "",
    ].join("\n"),
  );
  const env = { ...process.env, CODEX_HOME: codexHome, HOME: work };
  const args = [
    "exec",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    "benchmark goal",
  ];
  await peerRuns(`Codex ${codex.version}`, responses.bodies, async (turns) => {
    const calls = peerMix(turns).map(([s]) => ({
      toolCall: {
        name: "exec_command",
        arguments: {
          cmd: s.action === "glob" ? `ls ${path.dirname(s.input.pattern)}` : `head -n 20 ${s.input.path}`,
        },
      },
    }));
    responses.reset([...calls, "done"]);
    await run(codex.cli, args, env);
  });
  await responses.close();
}
await server.close();
fs.rmSync(work, { recursive: true, force: true });

const rows = [];
const skips = results.filter((r) => r.skipped);
for (const r of skips)
  console.error(`${r.agent} skipped${r.turns ? ` (${r.turns}-turn run)` : ""}: ${r.skipped}`);
const piName = pi.version ? `pi ${pi.version}` : "pi";
const codexName = codex.version ? `Codex ${codex.version}` : "Codex";
for (const turns of RUNS) {
  const ours = results.find((r) => r.agent === "Scoot" && r.turns === turns);
  const p = results.find((r) => r.agent === piName && r.turns === turns && r.stats)?.stats;
  const c = results.find((r) => r.agent === codexName && r.turns === turns && r.stats)?.stats;
  const s = ours.stats;
  const long = turns >= 100;
  const breaksOf = (name, x) => (x ? `; ${name}: ${x.breaks} in ${x.requests}` : `; ${name} skipped`);
  const prefillOf = (name, x) => (x ? `; ${name}: mean ${Math.round(x.prefillMean)}, first ${x.first}` : "");
  rows.push(
    row({
      bench: "prefix",
      figure: `prefix breaks per 100 turns, ${turns}-turn run (Scoot: ${s.breaks} in ${s.requests} requests, ${ours.compactions} compactions${breaksOf(piName, p)}${breaksOf(codexName, c)}; baseline: pi)`,
      value: Number(s.breaksPer100.toFixed(2)),
      ...(p ? { baseline: Number(p.breaksPer100.toFixed(2)) } : {}),
      unit: "",
      aim: long ? `≤ ${LONG_BREAKS_PER_100.toFixed(2)}, each a compaction` : "0",
      met: long ? s.breaksPer100 <= LONG_BREAKS_PER_100 && s.breaks <= ours.compactions : s.breaks === 0,
    }),
    row({
      bench: "prefix",
      figure: `characters to prefill per turn, median, ${turns}-turn run (Scoot: mean ${Math.round(s.prefillMean)}, first ${s.first}${prefillOf(piName, p)}${prefillOf(codexName, c)}; baseline: pi)`,
      value: s.prefillMedian,
      ...(p ? { baseline: p.prefillMedian, ratio: s.prefillMedian / p.prefillMedian } : {}),
      unit: "",
      aim: "(informational)",
    }),
  );
}
for (const r of skips)
  rows.push(
    row({
      bench: "prefix",
      figure: `${r.agent}${r.turns ? `, ${r.turns}-turn run` : ""} skipped: ${r.skipped.replaceAll("|", "/")}`,
      value: "—",
      unit: "",
      aim: "(peer)",
    }),
  );
publish(rows);
