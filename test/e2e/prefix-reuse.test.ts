/**
 * KV-cache-friendly history (issue 13, README "Context budget and the server's cache"):
 * over a 40-turn scripted run with a small context budget, measure from the requests the
 * server received the share of request bytes that are a byte-identical prefix of the
 * previous request. Compaction with hysteresis keeps it high; compacting on every turn
 * (the old behaviour) would leave only the system prompt in common once the budget is hit.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, type ScriptItem, startScriptedServer } from "../helpers/scripted-server.js";

const TURNS = 40;
const BUDGET = 16_000;

let home: string;
let project: string;
let server: ScriptedServer | undefined;
beforeEach(() => {
  home = tempDir("scoot-home-");
  project = tempDir("scoot-proj-");
  for (let i = 0; i < 8; i++) {
    fs.writeFileSync(
      path.join(project, `notes-${i}.txt`),
      `${`line ${i} of some project notes\n`.repeat(30)}`,
    );
  }
});
afterEach(async () => {
  await server?.close();
  removeDir(home);
  removeDir(project);
});

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return Buffer.byteLength(a.slice(0, i));
}

/** Share of request bytes (requests 2..n) that repeat the previous request's leading bytes. */
function prefixReuseShare(raws: string[]): number {
  let shared = 0;
  let total = 0;
  for (let i = 1; i < raws.length; i++) {
    shared += commonPrefix(raws[i - 1]!, raws[i]!);
    total += Buffer.byteLength(raws[i]!);
  }
  return total === 0 ? 0 : shared / total;
}

it(`a ${TURNS}-turn run with a ${BUDGET}-byte budget reuses most of each request's prefix`, async () => {
  const script: ScriptItem[] = [];
  for (let t = 1; t < TURNS; t++) {
    script.push({
      reply: {
        thought: `turn ${t}: read the next notes file`,
        action: "file_read",
        action_input: JSON.stringify({ path: `notes-${t % 8}.txt` }),
      },
    });
  }
  script.push({ reply: { thought: "done", action: "final", action_input: "read them all" } });
  server = await startScriptedServer(script);
  const r = await runCli(["--trace", "-e", "read every notes file"], {
    home,
    cwd: project,
    env: {
      SCOOT_BACKEND_BASE_URL: server.url,
      SCOOT_AGENT_MAX_TURNS: String(TURNS + 5),
      SCOOT_AGENT_CONTEXT_BUDGET_BYTES: String(BUDGET),
    },
    timeoutMs: 60_000,
  });
  expect(r.code, r.stderr).toBe(0);
  const raws = server.completions().map((q) => q.raw);
  expect(raws).toHaveLength(TURNS);
  const compactions = (r.stderr.match(/\[trace\] compacted/g) ?? []).length;
  // The budget was reached, more than once, but not on every turn.
  expect(compactions).toBeGreaterThan(1);
  expect(compactions).toBeLessThan(TURNS / 3);
  const share = prefixReuseShare(raws);
  console.log(
    `prefix reuse over ${TURNS} turns, budget ${BUDGET} bytes: ${(share * 100).toFixed(1)}% of request bytes (${compactions} compactions)`,
  );
  expect(share).toBeGreaterThanOrEqual(0.8);
});
