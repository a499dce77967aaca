/**
 * Approval as a phase of the call pipeline (docs/safety.md "Approval"): which calls ask, what
 * "always" remembers, what a refusal tells the model, and that the gate decides first. The
 * loop runs in-process with real tools on real files, a real audit log in a temp home and
 * an approver that answers from a list (the interface the keyboard and ACP implement).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ApprovalAnswer, type Approver, approvalMemory, callSummary } from "../../src/agent/approval.js";
import type { Ready } from "../../src/agent/call-record.js";
import { needsApproval } from "../../src/agent/decide.js";
import { type AgentEvent, wireEvent } from "../../src/agent/events.js";
import { type RunDeps, runGoal } from "../../src/agent/loop.js";
import { defaultConfig, type PolicyMode } from "../../src/config/schema.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import { createAuditLog } from "../../src/store/audit-writer.js";
import { openCheckpointWriter, readCheckpoints, sha256 } from "../../src/store/checkpoints.js";
import type { Message } from "../../src/store/session.js";
import { TOOLS_BY_NAME } from "../../src/tools/registry.js";
import { preparedCall } from "../helpers/calls.js";
import { scriptedBackend } from "../helpers/scripted-backend.js";
import { type ScriptItem, step } from "../helpers/scripted-server.js";

let project: string;
let home: string;
beforeEach(() => {
  project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-approval-")));
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-approval-home-")));
  fs.writeFileSync(path.join(project, "notes.txt"), "alpha\nbeta\n");
});
afterEach(() => {
  fs.rmSync(project, { recursive: true, force: true });
  fs.rmSync(home, { recursive: true, force: true });
});

describe("which calls ask", () => {
  const table: [string, unknown, boolean][] = [
    ["bash", "ls", true],
    ["file_write", { path: "a", content: "" }, true],
    ["file_edit", { path: "a", old: "x", new: "y" }, true],
    ["http_request", { method: "POST", url: "https://example.com" }, true],
    ["http_request", { method: "DELETE", url: "https://example.com" }, true],
    ["http_request", { method: "PATCH", url: "https://example.com" }, true],
    ["http_request", { method: "PUT", url: "https://example.com" }, true],
    ["http_request", { method: "GET", url: "https://example.com" }, false],
    ["http_request", { method: "HEAD", url: "https://example.com" }, false],
    ["mcp_call", { server: "s", tool: "t", args: {} }, true],
    ["file_read", { path: "a" }, false],
    ["grep", { pattern: "x", path: "a" }, false],
    ["glob", { pattern: "*" }, false],
    ["outline", { path: "a" }, false],
    ["recall", { query: "x" }, false],
    ["skill", { name: "x" }, false],
    ["parallel", { calls: [{ action: "file_read", input: '{"path":"a"}' }] }, false],
  ];
  it.each(table)("%s %j asks: %s", (action, input, asks) => {
    const tool = TOOLS_BY_NAME.get(action)!;
    const parsed = tool.parse(typeof input === "string" ? input : JSON.stringify(input));
    expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
    if (!parsed.ok) return;
    expect(needsApproval(tool.effects(parsed.value).capability)).toBe(asks);
  });

  it("the summary is the tool and its key argument on one line", () => {
    const summary = (action: string, input: string | object) => callSummary(preparedCall(action, input));
    expect(summary("bash", "npm test")).toBe("bash  npm test");
    expect(summary("file_edit", { path: "src/calc.py", old: "a", new: "b" })).toBe("file_edit  src/calc.py");
    expect(summary("http_request", { method: "POST", url: "https://x.test/a" })).toBe(
      "http_request  POST https://x.test/a",
    );
    expect(summary("mcp_call", { server: "s", tool: "t", args: {} })).toBe("mcp_call  s/t");
    expect(summary("bash", "echo a\necho b")).not.toContain("\n");
  });
});

/** An approver that answers from a list and keeps every question. */
function answering(...answers: (ApprovalAnswer | Error | "wait")[]): Approver & { asked: Ready[] } {
  const asked: Ready[] = [];
  return {
    asked,
    async ask(request, signal) {
      asked.push(request);
      const a = answers.shift();
      if (a === undefined) throw new Error(`unexpected question: ${callSummary(request)}`);
      if (a instanceof Error) throw a;
      if (a === "wait") {
        return new Promise((resolve) =>
          signal.addEventListener("abort", () => resolve({ kind: "once" }), { once: true }),
        );
      }
      return a;
    },
  };
}

function harness(
  replies: ScriptItem[],
  opts: {
    approver?: Approver;
    mode?: PolicyMode;
    signal?: AbortSignal;
    level?: "error";
    /** `tools.approval_safe_commands` (default true). */
    safeCommands?: boolean;
  } = {},
) {
  const config = defaultConfig();
  if (opts.level) config.audit.level = opts.level;
  if (opts.safeCommands !== undefined) config.tools.approval_safe_commands = opts.safeCommands;
  const auditFile = path.join(home, "logs", "audit.jsonl");
  fs.mkdirSync(path.dirname(auditFile), { recursive: true });
  const audit = createAuditLog({
    file: auditFile,
    level: config.audit.level,
    toFile: true,
    maxRetained: 8,
    maxFileBytes: 16 * 1024 * 1024,
  });
  const transcript: Message[] = [];
  const events: AgentEvent[] = [];
  const mode = opts.mode ?? "guarded";
  const backend = scriptedBackend(replies);
  const sessions = path.join(home, "state", "sessions");
  fs.mkdirSync(sessions, { recursive: true });
  fs.writeFileSync(path.join(sessions, "s.jsonl"), "");
  const deps: RunDeps = {
    config,
    mode,
    cwd: project,
    backend,
    audit,
    session: { id: "s", path: path.join(sessions, "s.jsonl"), append: (m) => void transcript.push(m) },
    sessionId: "s",
    runId: "run-1",
    gateSettings: buildGateSettings(config, project, { mode }),
    tools: TOOLS_BY_NAME,
    services: {},
    childEnv: { PATH: process.env.PATH },
    toolTimeoutMs: 10_000,
    signal: opts.signal ?? new AbortController().signal,
    history: [{ role: "system", content: "system prompt" }],
    onEvent: (e) => events.push(e),
    checkpoints: openCheckpointWriter(path.join(home, "state"), "s", sessions),
    ...(opts.approver ? { approval: { approver: opts.approver, memory: approvalMemory() } } : {}),
  };
  const records = () => {
    audit.flush();
    return fs
      .readFileSync(auditFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string; msg: string });
  };
  return { deps, backend, events, records };
}

const finalStep = step("final", "done");

describe("the approval phase", () => {
  it("a refusal: the file is untouched, the model is told with the reason, nothing is tool_call-audited", async () => {
    const approver = answering({ kind: "refuse", reason: "not on Fridays" });
    const h = harness([step("file_write", { path: "notes.txt", content: "gone\n" }), finalStep], {
      approver,
    });
    const r = await runGoal(h.deps, "overwrite");
    expect(r.status).toBe("final");
    expect(fs.readFileSync(path.join(project, "notes.txt"), "utf8")).toBe("alpha\nbeta\n");
    const observation = h.backend.calls[1]!.messages.at(-1)!.content;
    expect(observation).toContain("the user refused this file_write call: not on Fridays");
    // The question carried the diff of the change before it was made.
    const change = approver.asked[0]!.change!;
    expect({ path: change.shown, before: change.before?.toString(), after: change.after }).toEqual({
      path: "notes.txt",
      before: "alpha\nbeta\n",
      after: { ok: true, value: "gone\n" },
    });
    expect(callSummary(approver.asked[0]!)).toBe("file_write  notes.txt");
    const kinds = h.records().map((e) => `${e.kind}:${e.msg.split(":")[0]}`);
    expect(kinds).toContain("approval:asked");
    expect(kinds).toContain("approval:answer=refuse");
    expect(kinds.some((k) => k.startsWith("tool_call"))).toBe(false);
    expect(h.events.some((e) => e.type === "refused" && e.call.approval?.reason === "not on Fridays")).toBe(
      true,
    );
    expect(readCheckpoints(path.join(home, "state"), "s").entries).toEqual([]);
  });

  it("the gate decides first: a denied call is never put to the person", async () => {
    const approver = answering();
    const h = harness([step("file_write", { path: "notes.txt", content: "x" }), finalStep], {
      approver,
      mode: "readonly",
    });
    await runGoal(h.deps, "write");
    expect(approver.asked).toEqual([]);
    expect(h.records().some((e) => e.kind === "policy_deny")).toBe(true);
    expect(h.records().some((e) => e.kind === "approval")).toBe(false);
  });

  it("reads and parallel reads never ask", async () => {
    const approver = answering();
    const h = harness(
      [
        step("file_read", { path: "notes.txt" }),
        step("grep", { pattern: "beta", path: "notes.txt" }),
        step("parallel", {
          calls: [
            { action: "file_read", input: '{"path":"notes.txt"}' },
            { action: "glob", input: '{"pattern":"*"}' },
          ],
        }),
        finalStep,
      ],
      { approver },
    );
    const r = await runGoal(h.deps, "read");
    expect(r.status).toBe("final");
    expect(approver.asked).toEqual([]);
  });

  it("'always' on `git status` holds for `git status …` only: `git clean -fdx` and a compound command still ask", async () => {
    const approver = answering({ kind: "always" }, { kind: "refuse" }, { kind: "refuse" });
    const h = harness(
      [
        step("bash", "git status"),
        step("bash", "git  status --short"),
        step("bash", "git clean -fdx"),
        step("bash", "git status; touch pwned"),
        finalStep,
      ],
      // `git status` is a known-safe command: asked here only with those turned off.
      { approver, safeCommands: false },
    );
    await runGoal(h.deps, "git");
    expect(approver.asked.map((a) => a.rememberKey)).toEqual([
      "bash:git status",
      "bash:git clean -fdx",
      "bash:git status; touch pwned",
    ]);
    expect(fs.existsSync(path.join(project, "pwned"))).toBe(false);
    expect(
      h
        .records()
        .filter((e) => e.kind === "approval")
        .map((e) => e.msg),
    ).toEqual([
      "asked: bash git status",
      "answer=always (bash:git status): bash git status",
      'allowed by an earlier "always" (bash:git status): bash git  status --short',
      "asked: bash git clean -fdx",
      "answer=refuse: bash git clean -fdx",
      "asked: bash git status; touch pwned",
      "answer=refuse: bash git status; touch pwned",
    ]);
  });

  it("a known-safe command runs unasked in guarded mode, shown and audited; its writing variant asks", async () => {
    const approver = answering({ kind: "refuse" });
    const h = harness([step("bash", "ls -la"), step("bash", "git diff --output=notes.txt"), finalStep], {
      approver,
    });
    await runGoal(h.deps, "look");
    expect(approver.asked.map((a) => a.raw)).toEqual(["git diff --output=notes.txt"]);
    const ran = h.events.flatMap((e) => (e.type === "running" ? [e.call] : []));
    expect(ran.map((c) => [c.raw, c.approval?.answer])).toEqual([["ls -la", "known_safe"]]);
    expect(h.backend.calls[1]!.messages.at(-1)!.content).toContain("notes.txt");
    const approvals = h
      .records()
      .filter((e) => e.kind === "approval")
      .map((e) => [e.msg, (e as { call?: unknown }).call]);
    expect(approvals).toEqual([
      ["allowed as a known-safe command: bash ls -la", { tool: "bash", decision: "run" }],
      ["asked: bash git diff --output=notes.txt", { tool: "bash", decision: "ask" }],
      [
        "answer=refuse: bash git diff --output=notes.txt",
        { tool: "bash", decision: "refuse", outcome: "refused" },
      ],
    ]);
    expect(fs.readFileSync(path.join(project, "notes.txt"), "utf8")).toBe("alpha\nbeta\n");
  });

  it.each<[string, { safeCommands?: boolean; mode?: PolicyMode }]>([
    ["tools.approval_safe_commands = false", { safeCommands: false }],
    ["unrestricted mode", { mode: "unrestricted" }],
  ])("%s: a known-safe command asks as every command does", async (_name, opts) => {
    const approver = answering({ kind: "once" });
    const h = harness([step("bash", "ls -la"), finalStep], { approver, ...opts });
    await runGoal(h.deps, "look");
    expect(approver.asked.map((a) => a.raw)).toEqual(["ls -la"]);
    expect(h.records().map((e) => e.msg.split(":")[0])).toContain("asked");
  });

  it("'always' on a write covers that file however it is spelled, and no other", async () => {
    fs.mkdirSync(path.join(project, "sub"));
    const approver = answering({ kind: "always" }, { kind: "refuse" });
    const h = harness(
      [
        step("file_write", { path: "./a.txt", content: "1" }),
        step("file_write", { path: "sub/../a.txt", content: "2" }),
        step("file_write", { path: "b.txt", content: "3" }),
        finalStep,
      ],
      { approver },
    );
    await runGoal(h.deps, "write");
    expect(approver.asked.map((a) => a.rememberKey)).toEqual(["file_write:a.txt", "file_write:b.txt"]);
    expect(fs.readFileSync(path.join(project, "a.txt"), "utf8")).toBe("2");
    expect(fs.existsSync(path.join(project, "b.txt"))).toBe(false);
  });

  it("an approver that fails is a refusal, never a yes", async () => {
    const approver = answering(new Error("the terminal went away"));
    const h = harness([step("file_write", { path: "new.txt", content: "x" }), finalStep], { approver });
    await runGoal(h.deps, "write");
    expect(fs.existsSync(path.join(project, "new.txt"))).toBe(false);
    expect(h.backend.calls[1]!.messages.at(-1)!.content).toContain("no answer: the terminal went away");
  });

  it("an interrupt while the question waits stops the run; the call does not run", async () => {
    const controller = new AbortController();
    const approver = answering("wait");
    const h = harness([step("file_write", { path: "new.txt", content: "x" }), finalStep], {
      approver,
      signal: controller.signal,
    });
    const running = runGoal(h.deps, "write");
    await new Promise((r) => setTimeout(r, 50));
    controller.abort(new Error("interrupted"));
    const r = await running;
    expect(r.status).toBe("interrupted");
    expect(fs.existsSync(path.join(project, "new.txt"))).toBe(false);
    expect(h.records().some((e) => e.kind === "tool_call")).toBe(false);
  });

  it("a file changed while the question waited is not overwritten with the approved change", async () => {
    const target = path.join(project, "notes.txt");
    const approver: Approver = {
      async ask() {
        // The person edits the file in their editor before answering.
        fs.writeFileSync(target, "alpha\nbeta\nmy edit\n");
        return { kind: "once" };
      },
    };
    const h = harness([step("file_write", { path: "notes.txt", content: "model\n" }), finalStep], {
      approver,
    });
    await runGoal(h.deps, "write");
    expect(fs.readFileSync(target, "utf8")).toBe("alpha\nbeta\nmy edit\n");
    expect(h.backend.calls[1]!.messages.at(-1)!.content).toContain("changed after this call was prepared");
    expect(readCheckpoints(path.join(home, "state"), "s").entries).toEqual([]);
  });

  it("questions and answers are in the security record whatever audit.level says", async () => {
    const approver = answering({ kind: "once" });
    const h = harness([step("bash", "true"), finalStep], { approver, level: "error" });
    await runGoal(h.deps, "run");
    const kinds = h.records().map((e) => e.kind);
    expect(kinds).toEqual(["approval", "approval", "tool_call"]);
  });
});

describe("file changes through the pipeline", () => {
  it("a write keeps the earlier content first and reports the change with both sides", async () => {
    const h = harness([
      step("file_edit", { path: "notes.txt", old: "beta", new: "gamma" }),
      step("file_write", { path: "fresh.txt", content: "new file\n" }),
      finalStep,
    ]);
    await runGoal(h.deps, "change");
    const changed = h.events.filter((e) => e.type === "file_changed");
    // Each event carries its call's record: the change reported is the one that call planned.
    for (const e of changed) expect(e.call?.change?.shown).toBe(e.path);
    expect(changed.map(wireEvent)).toEqual([
      { type: "file_changed", path: "notes.txt", before: "alpha\nbeta\n", after: "alpha\ngamma\n" },
      { type: "file_changed", path: "fresh.txt", before: null, after: "new file\n" },
    ]);
    const { entries } = readCheckpoints(path.join(home, "state"), "s");
    expect(entries.map((e) => [path.basename(e.path), e.before.kind, e.after])).toEqual([
      ["notes.txt", "content", sha256(Buffer.from("alpha\ngamma\n"))],
      ["fresh.txt", "absent", sha256(Buffer.from("new file\n"))],
    ]);
    const dir = path.join(home, "state", "checkpoints", "s");
    for (const f of fs.readdirSync(dir)) expect(fs.statSync(path.join(dir, f)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  });

  it("a call that fails changes nothing: no checkpoint, no file_changed", async () => {
    const h = harness([step("file_edit", { path: "notes.txt", old: "nowhere", new: "x" }), finalStep]);
    await runGoal(h.deps, "edit");
    expect(h.events.some((e) => e.type === "file_changed")).toBe(false);
    expect(readCheckpoints(path.join(home, "state"), "s").entries).toEqual([]);
  });

  it("a checkpoint that cannot be written stops the run before the change: the file is untouched", async () => {
    const h = harness([step("file_write", { path: "notes.txt", content: "x" }), finalStep]);
    // A file where the checkpoint directory must go: nothing can be kept.
    fs.mkdirSync(path.join(home, "state", "checkpoints"), { recursive: true });
    fs.writeFileSync(path.join(home, "state", "checkpoints", "s"), "in the way");
    const r = await runGoal(h.deps, "write");
    expect(fs.readFileSync(path.join(project, "notes.txt"), "utf8")).toBe("alpha\nbeta\n");
    // Stopped as for an audit record that cannot be written: the model is not asked again.
    expect(r.stop).toBe("not_recorded");
    expect(r.error).toMatch(
      /cannot keep the undo checkpoint: .*; stopping: no file changes without its undo checkpoint$/,
    );
    expect(h.backend.calls).toHaveLength(1);
    expect(h.records().some((e) => e.kind === "tool_call")).toBe(false);
  });
});
