/**
 * The call pipeline's seams: a `parallel` call's children are validated and judged once, when
 * the call is prepared, and run as judged; a record that cannot be written comes back as a
 * "not recorded" value (never an exception), from the call itself or from a child it started.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallEnv } from "../../src/agent/call-prepare.js";
import type { Prepared } from "../../src/agent/call-record.js";
import { createCallPipeline } from "../../src/agent/calls.js";
import { defaultConfig } from "../../src/config/schema.js";
import type { Effects, Result } from "../../src/core/types.js";
import { decide } from "../../src/policy/gate.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import { TOOLS_BY_NAME } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";
import { makeToolContext } from "../helpers/tool-context.js";

let project: string;

beforeAll(() => {
  project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-calls-once-")));
  fs.writeFileSync(path.join(project, "a.txt"), "alpha\n");
  fs.writeFileSync(path.join(project, "b.txt"), "bravo\n");
  fs.writeFileSync(path.join(project, ".env"), "TOKEN=x\n");
});
afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

/** The real tools and gate, with every parse and every gate decision counted by call text. */
function countingEnv() {
  const parses: string[] = [];
  const judged: Effects[] = [];
  const tools = new Map<string, AnyTool>();
  for (const [name, tool] of TOOLS_BY_NAME) {
    tools.set(name, {
      ...tool,
      parse: (raw: string) => {
        parses.push(`${name} ${raw}`);
        return tool.parse(raw);
      },
    } as AnyTool);
  }
  const env: CallEnv = {
    settings: buildGateSettings(defaultConfig(), project, { mode: "guarded" }),
    tools,
    judge: (effects, settings) => {
      judged.push(effects);
      return decide(effects, settings);
    },
  };
  return { env, parses, judged };
}

type Sink = (kind: string, msg: string) => Result<void>;

function pipeline(env: CallEnv, audit: Sink) {
  const {
    call: _c,
    gate: _g,
    signal: _s,
    timeoutMs: _t,
    ...base
  } = makeToolContext({
    cwd: project,
    mode: "guarded",
  });
  return createCallPipeline({ env, audit, base, timeoutMs: 10_000 });
}

const OK: Result<void> = { ok: true, value: undefined };
const fanOut = JSON.stringify({
  calls: [
    { action: "file_read", input: { path: "a.txt" } },
    { action: "file_read", input: { path: ".env" } },
    { action: "file_read", input: { path: "b.txt" } },
  ],
});

function readyOf(p: Prepared) {
  if (p.kind !== "ready") throw new Error(`expected a ready call, got ${p.kind}`);
  return p;
}

describe("parallel: each child judged once", () => {
  it("prepare validates and judges every child once; running them judges nothing again", async () => {
    const { env, parses, judged } = countingEnv();
    const audited: string[] = [];
    const calls = pipeline(env, (kind, msg) => {
      audited.push(`${kind} ${msg}`);
      return OK;
    });
    const ready = readyOf(calls.prepare("parallel", fanOut));
    // The parent and its three children: four decisions, one parse each.
    expect(judged).toHaveLength(4);
    expect(parses.filter((p) => p.startsWith("file_read "))).toEqual([
      'file_read {"path":"a.txt"}',
      'file_read {"path":".env"}',
      'file_read {"path":"b.txt"}',
    ]);
    expect(ready.children?.map((c) => c.kind)).toEqual(["ready", "denied", "ready"]);

    const signal = new AbortController().signal;
    const approved = await calls.approve(ready, signal);
    if (approved.kind !== "approved") throw new Error(`expected approved, got ${approved.kind}`);
    const ran = await calls.run(approved, signal);
    if (ran.kind !== "ran") throw new Error(`expected ran, got ${ran.error}`);

    expect(judged).toHaveLength(4);
    expect(parses.filter((p) => p.startsWith("file_read "))).toHaveLength(3);
    expect(ran.text).toContain("alpha");
    expect(ran.text).toContain("bravo");
    expect(ran.text).toContain('[2] file_read {"path":".env"}\ndenied: read: .env is a secret-like name');
    // The same records as before: the parent first, then each child's tool_call or denial.
    expect(audited[0]).toBe(`tool_call parallel ${fanOut}`);
    expect([...audited.slice(1)].sort()).toEqual([
      'policy_deny file_read {"path":".env"} -- read: .env is a secret-like name; Scoot does not read secrets',
      'tool_call file_read {"path":"a.txt"}',
      'tool_call file_read {"path":"b.txt"}',
    ]);
  });

  it("no record is changed after it is made: approve and run each return a new one, the same call by id", async () => {
    const { env } = countingEnv();
    const calls = pipeline(env, () => OK);
    // Frozen, deeply enough that any phase writing into a record (or a child's) throws.
    const ready = readyOf(calls.prepare("parallel", fanOut));
    for (const c of ready.children ?? []) Object.freeze(c);
    Object.freeze(ready);
    const signal = new AbortController().signal;
    const approved = await calls.approve(ready, signal);
    if (approved.kind !== "approved") throw new Error(`expected approved, got ${approved.kind}`);
    Object.freeze(approved.ready);
    const ran = await calls.run(approved, signal);
    if (ran.kind !== "ran") throw new Error(`expected ran, got ${ran.error}`);
    expect(ready.approval).toBeUndefined();
    expect(approved.ready).not.toBe(ready);
    expect(approved.ready.id).toBe(ready.id);
    expect(approved.ready.approval).toEqual({ answer: "not_needed" });
    expect(approved.ready.result).toBeUndefined();
    expect(ran.record.id).toBe(ready.id);
    expect(ran.record.result?.text).toContain("alpha");
    // The children as they ended: the two reads ran, the secret stayed denied.
    expect(ran.record.children?.map((c) => [c.kind, c.kind === "ready" && c.result !== undefined])).toEqual([
      ["ready", true],
      ["denied", false],
      ["ready", true],
    ]);
  });

  it("a call the tool did not declare is not run", async () => {
    const { env } = countingEnv();
    let seen = "";
    const sneaky = {
      ...TOOLS_BY_NAME.get("parallel")!,
      run: async (_input: unknown, ctx: { call: (a: string, r: string) => Promise<string> }) => {
        seen = await ctx.call("file_read", '{"path":".env"}');
        return { text: "done" };
      },
    } as AnyTool;
    const tools = new Map(env.tools);
    tools.set("parallel", sneaky);
    const calls = pipeline({ ...env, tools }, () => OK);
    const ready = readyOf(
      calls.prepare(
        "parallel",
        JSON.stringify({ calls: [{ action: "file_read", input: { path: "a.txt" } }] }),
      ),
    );
    const signal = new AbortController().signal;
    const approved = await calls.approve(ready, signal);
    if (approved.kind !== "approved") throw new Error("expected approved");
    await calls.run(approved, signal);
    expect(seen).toBe("file_read: not run: it is not one of the calls parallel declared");
  });
});

describe("a record that cannot be written is a value", () => {
  it("a call whose tool_call record fails is not recorded and does not run", async () => {
    const { env } = countingEnv();
    const calls = pipeline(env, () => ({ ok: false, error: "disk full (test)" }));
    const target = path.join(project, "never.txt");
    const ready = readyOf(calls.prepare("file_write", JSON.stringify({ path: "never.txt", content: "x" })));
    const signal = new AbortController().signal;
    const approved = await calls.approve(ready, signal);
    if (approved.kind !== "approved") throw new Error("expected approved");
    const ran = await calls.run(approved, signal);
    expect(ran).toEqual({ kind: "not_recorded", error: "disk full (test)" });
    expect(fs.existsSync(target)).toBe(false);
  });

  it("a denial that cannot be recorded is not recorded", () => {
    const { env } = countingEnv();
    const calls = pipeline(env, () => ({ ok: false, error: "read-only file system (test)" }));
    const p = calls.prepare("file_read", '{"path":".env"}');
    if (p.kind !== "denied") throw new Error(`expected denied, got ${p.kind}`);
    expect(calls.deny(p)).toEqual({ kind: "not_recorded", error: "read-only file system (test)" });
  });

  it("a child whose record fails makes its parent not recorded; the child does not run", async () => {
    const { env } = countingEnv();
    const audited: string[] = [];
    const calls = pipeline(env, (kind, msg) => {
      // The parent's record is written; a child's denial is not.
      if (kind === "policy_deny") return { ok: false, error: "disk full (test)" };
      audited.push(`${kind} ${msg}`);
      return OK;
    });
    const ready = readyOf(calls.prepare("parallel", fanOut));
    const signal = new AbortController().signal;
    const approved = await calls.approve(ready, signal);
    if (approved.kind !== "approved") throw new Error("expected approved");
    expect(await calls.run(approved, signal)).toEqual({ kind: "not_recorded", error: "disk full (test)" });
    expect(audited[0]).toBe(`tool_call parallel ${fanOut}`);
  });
});
