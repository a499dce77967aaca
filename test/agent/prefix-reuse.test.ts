/**
 * KV-cache-friendly history (issue 13, docs/context.md "Context budget and the server's cache"):
 * over a 40-turn scripted run with a small context budget, measure from the requests the
 * server received the share of request bytes that are a byte-identical prefix of the
 * previous request. Compaction with hysteresis keeps it high; compacting on every turn
 * (the old behaviour) would leave only the system prompt in common once the budget is hit.
 * The loop runs in process (test/helpers/loop.ts): which messages each request carries is
 * the loop's decision, and the in-process backend records each request as the server would.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { exitCodeFor } from "../../src/cli/run.js";
import { removeDir, tempDir } from "../helpers/cli.js";
import { type LoopHarness, loopHarness } from "../helpers/loop.js";
import type { ScriptItem } from "../helpers/scripted-server.js";

const TURNS = 40;
const BUDGET = 16_000;

let project: string;
let h: LoopHarness | undefined;
beforeEach(() => {
  project = tempDir("scoot-proj-");
  for (let i = 0; i < 8; i++) {
    fs.writeFileSync(
      path.join(project, `notes-${i}.txt`),
      `${`line ${i} of some project notes\n`.repeat(30)}`,
    );
  }
});
afterEach(async () => {
  await h?.backend.close();
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
  h = loopHarness(script, {
    cwd: project,
    configure: (c) => {
      c.agent.max_turns = TURNS + 5;
      c.agent.context_budget_bytes = BUDGET;
    },
  });
  const r = await h.run("read every notes file");
  expect(exitCodeFor(r), r.error).toBe(0);
  const raws = h.backend.completions().map((q) => q.raw);
  expect(raws).toHaveLength(TURNS);
  const compactions = (h.trace().match(/\[trace\] compacted/g) ?? []).length;
  // The budget was reached, more than once, but not on every turn.
  expect(compactions).toBeGreaterThan(1);
  expect(compactions).toBeLessThan(TURNS / 3);
  const share = prefixReuseShare(raws);
  console.log(
    `prefix reuse over ${TURNS} turns, budget ${BUDGET} bytes: ${(share * 100).toFixed(1)}% of request bytes (${compactions} compactions)`,
  );
  expect(share).toBeGreaterThanOrEqual(0.8);
});
