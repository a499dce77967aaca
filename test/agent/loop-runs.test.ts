/**
 * Whole runs of the loop in process (test/helpers/loop.ts): corrections of invalid steps, the
 * turn limit, compaction, denials that let the run go on, `parallel` and file writes. These are
 * the loop's decisions, so they need no child process; the end-to-end tests in
 * test/e2e/agent.test.ts keep what needs the real binary (argv, stdout, exit on SIGINT, the
 * home on disk). The exit code asserted here is the one the CLI maps the result to.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { exitCodeFor } from "../../src/cli/run.js";
import { demoProject, removeDir } from "../helpers/cli.js";
import { type LoopHarness, type LoopOptions, loopHarness } from "../helpers/loop.js";
import { type ScriptItem, step } from "../helpers/scripted-server.js";

let project: string;
let h: LoopHarness | undefined;

beforeEach(() => {
  project = demoProject();
});
afterEach(async () => {
  await h?.backend.close();
  h = undefined;
  removeDir(project);
});

/** One run of `goal` with this script; the audit keeps what the default `audit.level` writes. */
async function scoot(script: ScriptItem[], opts: Omit<LoopOptions, "cwd"> = {}, goal = "go") {
  h = loopHarness(script, { cwd: project, auditLevel: "info", ...opts });
  const r = await h.run(goal);
  return { r, h };
}

describe("invalid steps", () => {
  it("are corrected and never executed, then the run fails after the limit", async () => {
    const marker = path.join(project, "should-not-exist");
    const { r, h } = await scoot([
      { reply: "I think I will list the files." },
      {
        reply: `${JSON.stringify({ thought: "a", action: "bash", action_input: `touch ${marker}` })} ${JSON.stringify({ thought: "b", action: "final", action_input: "x" })}`,
      },
      step("teleport", "somewhere"),
    ]);
    expect(exitCodeFor(r)).toBe(1);
    expect(r.error).toMatch(/3 invalid steps in a row/);
    expect(fs.existsSync(marker)).toBe(false);
    const bodies = h.backend.completions().map((q) => JSON.stringify(q.body));
    expect(bodies[1]).toContain("contains no JSON object");
    expect(bodies[2]).toContain("contains 2 JSON objects");
    const kinds = h.audit.kinds();
    expect(kinds.filter((k) => k === "system_error")).toHaveLength(4);
    expect(kinds).not.toContain("tool_call");
  });
  it("a fenced step with an object action_input is accepted; a bad tool input is corrected", async () => {
    const { r, h } = await scoot([
      step("file_edit", { path: "README.md" }),
      {
        reply: '```json\n{"thought":"read","action":"file_read","action_input":{"path":"README.md"}}\n```',
      },
      step("final", "ok"),
    ]);
    expect(exitCodeFor(r), r.error).toBe(0);
    const bodies = h.backend.completions().map((q) => JSON.stringify(q.body));
    expect(bodies[1]).toContain("invalid action_input for file_edit");
    expect(bodies[2]).toContain("# Demo");
  });
});

describe("limits", () => {
  it("max_turns without final exits 1", async () => {
    const { r, h } = await scoot([step("glob", { pattern: "*" }), step("glob", { pattern: "*" })], {
      configure: (c) => {
        c.agent.max_turns = 2;
      },
    });
    expect(exitCodeFor(r)).toBe(1);
    expect(r.error).toContain("agent.max_turns = 2");
    expect(h.audit.records.at(-1)).toMatchObject({ kind: "system_error" });
  });
});

describe("context compaction", () => {
  it("shrinks the request bodies the server receives", async () => {
    const big = "x".repeat(3000);
    fs.writeFileSync(path.join(project, "big.txt"), big);
    const reads = Array.from({ length: 6 }, () => step("file_read", { path: "big.txt" }));
    const { r, h } = await scoot([...reads, step("final", "ok")], {
      configure: (c) => {
        c.agent.context_budget_bytes = 12000;
      },
    });
    expect(exitCodeFor(r), r.error).toBe(0);
    expect(h.trace()).toContain("compacted");
    const sizes = h.backend.completions().map((q) => q.raw.length);
    // Without compaction each request would be ~3 KB bigger than the last.
    expect(Math.max(...sizes.slice(4))).toBeLessThan(sizes[0]! + 12000);
    const last = JSON.stringify(h.backend.completions().at(-1)!.body);
    expect(last).toContain("[Compacted history]");
    expect(last).toContain("Files read: big.txt");
    // The transcript keeps everything.
    expect(h.session.messages.filter((m) => m.content.includes(big))).toHaveLength(6);
  });
  it("fails before calling the backend when even the minimum does not fit", async () => {
    const { r, h } = await scoot([step("final", "never")], {
      configure: (c) => {
        c.agent.context_budget_bytes = 100;
      },
    });
    expect(exitCodeFor(r)).toBe(1);
    expect(r.error).toContain("context_budget_bytes");
    expect(h.backend.completions()).toHaveLength(0);
  });
});

describe("policy in runs", () => {
  it("guarded denies a catastrophic command and the run goes on", async () => {
    const { r, h } = await scoot([step("bash", "rm -rf /"), step("final", "refused")]);
    expect(exitCodeFor(r)).toBe(0);
    expect(h.audit.kinds()).toContain("policy_deny");
  });
});

describe("parallel and writes through the loop", () => {
  it("parallel runs its children through the gate and returns them in call order", async () => {
    const { r, h } = await scoot([
      step("parallel", {
        calls: [
          { action: "file_read", input: { path: "README.md" } },
          { action: "grep", input: JSON.stringify({ pattern: "beta", path: "src/b.ts" }) },
          { action: "file_read", input: { path: ".env" } },
        ],
      }),
      step("file_write", { path: "notes/out.txt", content: "written" }),
      step("file_edit", { path: "notes/out.txt", old: "written", new: "edited" }),
      step("final", "ok"),
    ]);
    expect(exitCodeFor(r), r.error).toBe(0);
    const messages = (h.backend.completions()[1]!.body as { messages: { content: string }[] }).messages;
    const obs = messages.at(-1)!.content;
    const a = obs.indexOf("# Demo");
    const b = obs.indexOf("1:export const beta");
    const c = obs.indexOf("denied");
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(a);
    expect(c).toBeGreaterThan(b);
    expect(fs.readFileSync(path.join(project, "notes", "out.txt"), "utf8")).toBe("edited");
  });
});

describe("reasoning is thinking: shown, audited, never sent back", () => {
  it("a <think> block in the reply is set aside, audited, and left out of the history", async () => {
    const stepText = JSON.stringify({ thought: "done", action: "final", action_input: "ok" });
    const { r, h } = await scoot(
      [
        {
          reply: `<think>secret plan: draft {"action": "bash"}</think>\n${JSON.stringify({ thought: "list", action: "glob", action_input: '{"pattern": "*"}' })}`,
        },
        { reply: stepText },
      ],
      {},
      "do the work",
    );
    expect(exitCodeFor(r), r.error).toBe(0);
    expect(h.trace()).toMatch(/\[trace\] step: set aside the <think> block/);
    expect(h.audit.records.some((e) => e.kind === "thought" && e.msg.startsWith("secret plan"))).toBe(true);
    const request = (h.backend.completions()[1]!.body as { messages: unknown[] }).messages;
    expect(JSON.stringify(request)).not.toContain("secret plan");
  });
});
