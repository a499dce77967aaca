/**
 * KV-cache-friendly history (issue 13, docs/context.md "Context budget and the server's cache"):
 * over a 40-turn scripted run with a small context budget, measure from the requests the
 * server received the share of request bytes that are a byte-identical prefix of the
 * previous request. Compaction with hysteresis keeps it high; compacting on every turn
 * (the old behaviour) would leave only the system prompt in common once the budget is hit.
 * The loop runs in process (test/helpers/loop.ts): which messages each request carries is
 * the loop's decision, and the in-process backend records each request as the server would.
 *
 * The guard (issue 48): what a turn adds — the usage the server reports, a binding plan's
 * checklist and its progress, the note of a nested AGENTS.md the model reads below — is
 * appended; a request edits or drops an earlier message only at a compaction.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ContextFit } from "../../src/agent/context-fit.js";
import { approvedInSession } from "../../src/agent/plan-file.js";
import { stepSchema } from "../../src/agent/step.js";
import type { ContextWindow } from "../../src/backend/context-window.js";
import { exitCodeFor } from "../../src/cli/run.js";
import { removeDir, tempDir } from "../helpers/cli.js";
import { type LoopHarness, loopHarness, trackNestedInstructions } from "../helpers/loop.js";
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

/** Whether `prev` is exactly the first messages of `cur`: nothing earlier edited, dropped or moved. */
function appendsTo(prev: readonly unknown[], cur: readonly unknown[]): boolean {
  if (cur.length < prev.length) return false;
  return prev.every((m, i) => JSON.stringify(m) === JSON.stringify(cur[i]));
}

/** git without the machine's or the user's configuration (the nested AGENTS.md must be committed to be guidance). */
function git(cwd: string, ...args: string[]): void {
  execFileSync(
    "git",
    ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", ...args],
    {
      cwd,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      stdio: "ignore",
    },
  );
}

it.each([
  ["a 14 000-byte budget", undefined],
  ["the server's 4096-token window, the budget calibrated by the usage it reports", 4096],
])(
  "nothing added per turn edits an earlier message (%s): each request is the previous one plus appended messages, but at a compaction",
  async (_, windowTokens) => {
    // Issue 48: usage the server reports, a binding plan's checklist and its progress, and a
    // nested AGENTS.md found when the model reads below it — each must reach the model appended.
    const root = fs.realpathSync(project);
    fs.mkdirSync(path.join(root, "sub"));
    fs.writeFileSync(
      path.join(root, "sub", "AGENTS.md"),
      "SUB-GUIDANCE: tests for sub/ live in sub/test/.\n",
    );
    fs.writeFileSync(path.join(root, "sub", "file.txt"), "plain text\n");
    git(root, "init", "-q");
    git(root, "add", "-A");
    git(root, "commit", "-q", "-m", "work");
    const plan = {
      steps: [
        { title: "Read the notes", files: Array.from({ length: 8 }, (_, i) => `notes-${i}.txt`) },
        { title: "Read below sub", files: ["sub/file.txt"] },
      ],
    };
    const read = (file: string, step: number, status: string): ScriptItem => ({
      reply: {
        thought: `read ${file}`,
        action: "file_read",
        action_input: JSON.stringify({ path: file }),
        plan_step: step,
        plan_status: status,
      },
    });
    const script: ScriptItem[] = [
      ...Array.from({ length: 10 }, (_, i) =>
        read(`notes-${i % 8}.txt`, 1, i === 9 ? "done" : "in_progress"),
      ),
      read("sub/file.txt", 2, "in_progress"),
      ...Array.from({ length: 6 }, (_, i) => read(`notes-${i}.txt`, 2, "in_progress")),
      {
        reply: {
          thought: "done",
          action: "final",
          action_input: "read them all",
          plan_step: 2,
          plan_status: "done",
        },
      },
    ];
    h = loopHarness(script, {
      cwd: root,
      configure: (c) => {
        c.agent.max_turns = script.length + 5;
        // With a window, the window sets the budget (the configured default is larger).
        if (windowTokens === undefined) c.agent.context_budget_bytes = 14_000;
      },
    });
    if (windowTokens !== undefined) {
      const window: ContextWindow = {
        tokens: windowTokens,
        source: "llama.cpp n_ctx",
        flavour: "llamacpp",
        notes: [],
        cached: false,
      };
      h.deps.fit = new ContextFit(
        window,
        h.deps.config,
        JSON.stringify(stepSchema([...h.deps.tools.keys()], plan.steps.length)).length,
      );
    }
    h.deps.plan = approvedInSession(plan, "repl", true);
    trackNestedInstructions(h, root);

    const r = await h.run("read the notes, then what is below sub");
    expect(exitCodeFor(r), r.error).toBe(0);
    const requests = h.backend.completions().map((q) => (q.body as { messages: unknown[] }).messages);
    expect(requests).toHaveLength(script.length);
    // Each part of the guard was exercised: usage came back, progress was recorded, the nested note was added.
    expect(r.usage.prompt_tokens).toBeGreaterThan(0);
    expect(h.audit.kinds().filter((k) => k === "plan").length).toBeGreaterThan(3);
    expect(h.trace()).toContain(`project instructions: added ${path.join(root, "sub", "AGENTS.md")}`);
    expect(requests.some((m) => JSON.stringify(m).includes("SUB-GUIDANCE"))).toBe(true);

    const compactions = (h.trace().match(/\[trace\] compacted/g) ?? []).length;
    expect(compactions).toBeGreaterThanOrEqual(1);
    const breaks: number[] = [];
    for (let i = 1; i < requests.length; i++)
      if (!appendsTo(requests[i - 1]!, requests[i]!)) breaks.push(i + 1);
    // A break happens only at a compaction: as many requests broke the prefix as there were compactions.
    expect(breaks, `requests that edited an earlier message: ${breaks.join(", ")}`).toHaveLength(compactions);
  },
);
