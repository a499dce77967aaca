/**
 * The loop's phases (turn → ask → step → call → record) with an in-process backend that
 * replays scripted replies, real tools on real files in a temp project, and an in-memory
 * audit log and transcript (the stores have their own tests; here we see what the loop asks
 * of them and in which order). End-to-end runs through the built CLI are in test/e2e/.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runGoal } from "../../src/agent/loop.js";
import type { PolicyMode } from "../../src/config/schema.js";
import type { AuditKind } from "../../src/store/audit-writer.js";
import { TOOLS_BY_NAME } from "../../src/tools/registry.js";
import { loopHarness } from "../helpers/loop.js";
import { type ScriptItem, step } from "../helpers/scripted-server.js";

let project: string;
beforeEach(() => {
  project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-loop-")));
  fs.writeFileSync(path.join(project, "notes.txt"), "alpha\nbeta\n");
  fs.writeFileSync(path.join(project, ".env"), "KEY=hunter2\n");
});
afterEach(() => fs.rmSync(project, { recursive: true, force: true }));

function harness(script: ScriptItem[], opts: { mode?: PolicyMode; failKind?: AuditKind } = {}) {
  const h = loopHarness(script, {
    cwd: project,
    systemPrompt: "system prompt",
    tools: TOOLS_BY_NAME,
    childEnv: {},
    ...opts,
  });
  return { ...h, audited: h.audit.records, transcript: h.session.messages, kinds: () => h.audit.kinds() };
}

describe("loop phases", () => {
  it("a first reply that is final: run → backend → thought → final, audit bound to the run", async () => {
    const h = harness([step("final", "done")]);
    const r = await runGoal(h.deps, "say done");
    expect(r).toMatchObject({ status: "final", answer: "done", turns: 1, toolCalls: 0 });
    expect(h.kinds()).toEqual(["run", "backend", "thought", "final"]);
    expect(new Set(h.audited.map((a) => a.runId))).toEqual(new Set(["run-1"]));
    // The goal went to the backend after the system prompt.
    expect(h.backend.calls[0]!.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("a tool step: tool_call is audited before the observation, which returns wrapped", async () => {
    const h = harness([step("file_read", { path: "notes.txt" }), step("final", "ok")]);
    const r = await runGoal(h.deps, "read notes");
    expect(r.status).toBe("final");
    expect(r.toolCalls).toBe(1);
    expect(h.kinds()).toEqual([
      "run",
      "backend",
      "thought",
      "tool_call",
      "observation",
      "backend",
      "thought",
      "final",
    ]);
    expect(h.audited[3]!.msg).toBe('file_read {"path":"notes.txt"}');
    const seen = h.backend.calls[1]!.messages.at(-1)!.content;
    expect(seen).toContain("Observation from file_read:");
    expect(seen).toContain("alpha\nbeta");
  });

  it("a denied step: policy_deny, no tool_call, and the model hears the reason", async () => {
    const h = harness([step("file_read", { path: ".env" }), step("final", "refused")]);
    const r = await runGoal(h.deps, "read secrets");
    expect(r).toMatchObject({ status: "final", denials: 1, toolCalls: 0 });
    expect(h.kinds()).toEqual([
      "run",
      "backend",
      "thought",
      "policy_deny",
      "observation",
      "backend",
      "thought",
      "final",
    ]);
    expect(h.backend.calls[1]!.messages.at(-1)!.content).toContain(
      "denied by policy (guarded): read: .env is a secret-like name",
    );
    expect(JSON.stringify(h.backend.calls)).not.toContain("hunter2");
  });

  it("an invalid step is corrected, never executed, and max_malformed_steps stops the run", async () => {
    const h = harness([{ reply: "no json here" }, step("nope", "x"), step("file_read", { path: 3 })]);
    h.deps.config.agent.max_malformed_steps = 3;
    const r = await runGoal(h.deps, "g");
    expect(r.status).toBe("failed");
    expect(r.error).toContain("the model sent 3 invalid steps in a row");
    expect(h.kinds().filter((k) => k === "thought" || k === "tool_call")).toEqual([]);
    expect(h.backend.calls[1]!.messages.at(-1)!.content).toContain("was not a valid step");
  });

  it("a parallel step with an invalid child is an invalid step: no thought, no call", async () => {
    const bad = {
      calls: [
        { action: "file_read", input: { path: "notes.txt" } },
        { action: "outline", input: { path: 5, bogus: 1 } },
      ],
    };
    const h = harness([step("parallel", bad), step("final", "ok")]);
    const r = await runGoal(h.deps, "g");
    expect(r.status).toBe("final");
    expect(h.kinds().slice(0, 3)).toEqual(["run", "backend", "system_error"]);
    expect(h.audited[2]!.msg).toContain(
      'invalid action_input for parallel: parallel: calls[1]: outline: unknown field "bogus"; allowed: path',
    );
  });

  it("parallel children go through the pipeline: each audited, a denied one audited as policy_deny", async () => {
    const calls = {
      calls: [
        { action: "file_read", input: { path: "notes.txt" } },
        { action: "file_read", input: { path: ".env" } },
      ],
    };
    const h = harness([step("parallel", calls), step("final", "ok")]);
    const r = await runGoal(h.deps, "g");
    expect(r.status).toBe("final");
    const turn = h.kinds().slice(3, h.kinds().indexOf("observation") + 1);
    expect(turn[0]).toBe("tool_call"); // the parallel call itself, first
    expect([...turn].sort()).toEqual(["observation", "policy_deny", "tool_call", "tool_call"]);
    expect(h.audited.find((a) => a.kind === "policy_deny")!.msg).toContain(".env is a secret-like name");
    expect(h.audited.filter((a) => a.kind === "tool_call").map((a) => a.msg)).toContain(
      'file_read {"path":"notes.txt"}',
    );
    const seen = h.backend.calls[1]!.messages.at(-1)!.content;
    expect(seen).toContain("alpha");
    expect(seen).toContain('[2] file_read {"path":".env"}\ndenied: read: .env is a secret-like name');
  });

  it("when tool_call cannot be audited, the tool does not run and the run stops", async () => {
    const h = harness([step("file_write", { path: "out.txt", content: "x" }), step("final", "ok")], {
      failKind: "tool_call",
    });
    const r = await runGoal(h.deps, "write");
    expect(r.status).toBe("failed");
    expect(r.error).toContain("no tool runs without an audit record");
    expect(fs.existsSync(path.join(project, "out.txt"))).toBe(false);
    expect(h.backend.calls).toHaveLength(1);
  });

  it("a parallel child whose audit fails does not run, and the run stops after the parent", async () => {
    let toolCalls = 0;
    const h = harness([
      step("parallel", { calls: [{ action: "file_read", input: { path: "notes.txt" } }] }),
      step("final", "ok"),
    ]);
    const real = h.deps.audit;
    h.deps.audit = {
      emit(sid, kind, msg, runId) {
        // The parent's record succeeds, the child's does not.
        if (kind === "tool_call" && ++toolCalls === 2) return { ok: false, error: "disk full (test)" };
        return real.emit(sid, kind, msg, runId);
      },
      flush: () => real.flush(),
      close: () => real.close(),
    };
    const r = await runGoal(h.deps, "g");
    expect(r.status).toBe("failed");
    expect(r.error).toContain("disk full (test)");
    expect(h.backend.calls).toHaveLength(1);
  });

  it("turn: an over-budget history is compacted before the backend is asked", async () => {
    fs.writeFileSync(path.join(project, "big.txt"), `${"y".repeat(1500)}\n`);
    const reads = Array.from({ length: 6 }, () => step("file_read", { path: "big.txt" }));
    const h = harness([...reads, step("final", "ok")]);
    const compacted: number[] = [];
    h.deps.onEvent = (e) => {
      if (e.type === "compacted") compacted.push(e.removed);
    };
    h.deps.config.agent.context_budget_bytes = 6000;
    const r = await runGoal(h.deps, "g");
    expect(r.error).toBeUndefined();
    expect(r.status).toBe("final");
    expect(compacted.length).toBeGreaterThan(0);
    for (const req of h.backend.calls) {
      // Pinned system prompt and goal survive every compaction; the request fits the budget.
      expect(req.messages[0]!.content).toBe("system prompt");
      expect(req.messages[1]!.content).toBe("g");
      expect(req.messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0)).toBeLessThanOrEqual(6000);
    }
    // The transcript keeps everything.
    expect(h.transcript.filter((m) => m.content.includes("y".repeat(1500)))).toHaveLength(6);
  });
});
