/**
 * The ACP session mode `plan` (issue 35; docs/editors.md "Plan mode in the editor"): each prompt
 * is planned in readonly, the plan is shown (`plan` update) and the editor is asked to run it
 * before anything has an effect; allowed, a second run carries it out under the session's
 * policy mode with its progress as `plan` updates, the approval audited with the plan's hash;
 * refused, nothing runs and the next prompt plans again with the person's feedback. The
 * official SDK's client plays the editor (it validates every message against the v1 schema)
 * and drives the built CLI against the scripted model server.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { planSha256 } from "../../src/tools/plan-shape.js";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { auditEvents } from "../helpers/audit-file.js";
import { needsBuiltCli, runCli, spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, step, stepFields } from "../helpers/scripted-server.js";

needsBuiltCli();
const scene = useScene({
  home: "scoot-acp-plan-home-",
  project: "scoot-acp-plan-project-",
  realProject: true,
  model: true,
});

const PLAN = {
  steps: [{ title: "write the notes", files: ["notes.txt"] }, { title: "tidy up" }],
};
/** What only a planning run's prompt holds: the plan action's description. */
const PLAN_TOOL = "Give the plan and stop; nothing is executed";

/** Everything the test editor received or was asked, in arrival order. */
type Seen =
  | { kind: "update"; update: acp.SessionUpdate }
  | { kind: "permission"; request: acp.RequestPermissionRequest };

let child: ChildProcess | undefined;
let connection: acp.ClientConnection | undefined;
let seen: Seen[] = [];
let answer: (
  request: acp.RequestPermissionRequest,
  signal: AbortSignal,
) => Promise<acp.RequestPermissionOutcome> | acp.RequestPermissionOutcome;

const allowOnce = (): acp.RequestPermissionOutcome => ({ outcome: "selected", optionId: "allow_once" });
const rejectOnce = (): acp.RequestPermissionOutcome => ({ outcome: "selected", optionId: "reject_once" });

beforeEach(() => {
  seen = [];
  answer = allowOnce;
});
afterEach(async () => {
  await stop();
});

async function stop(): Promise<void> {
  const [c, conn] = [child, connection];
  child = undefined;
  connection = undefined;
  await closeAgent(conn, c);
}

async function start(args: string[] = [], env: Record<string, string> = {}): Promise<acp.ClientConnection> {
  child = spawnCli(["acp", ...args], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_BACKEND_MAX_RETRIES: "0", ...env },
  });
  connection = acp
    .client({ name: "scoot-plan-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      seen.push({ kind: "update", update: params.update });
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
      seen.push({ kind: "permission", request: params });
      return { outcome: await answer(params, signal) };
    })
    .connect(agentStream(child));
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  return connection;
}

async function planSession(c: acp.ClientConnection, before?: string): Promise<string> {
  const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
    cwd: scene.project,
    mcpServers: [],
  });
  if (before) await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: before });
  await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "plan" });
  return sessionId;
}
const ask = (c: acp.ClientConnection, sessionId: string, text: string) =>
  c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

const updates = () => seen.flatMap((s) => (s.kind === "update" ? [s.update] : []));
const of = <K extends acp.SessionUpdate["sessionUpdate"]>(kind: K) =>
  updates().filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);
const permissions = () => seen.flatMap((s) => (s.kind === "permission" ? [s.request] : []));
const said = () =>
  of("agent_message_chunk")
    .map((u) => (u.content.type === "text" ? u.content.text : ""))
    .join("");
/** Each `plan` update as `status content` lines. */
const planViews = () => of("plan").map((u) => u.entries.map((e) => `${e.status} ${e.content}`));
const notes = () => path.join(scene.project, "notes.txt");
const request = (i: number) => JSON.stringify(scene.model.completions()[i]!.body);
const records = (kind: string) =>
  auditEvents(scene.home)
    .filter((e) => e.kind === kind)
    .map((e) => e.msg);

/** A model step that says which plan step it works on. */
function progress(action: string, input: unknown, planStep: number, status: string): ScriptItem {
  return { reply: { ...stepFields(action, input), plan_step: planStep, plan_status: status } };
}

describe("mode plan", () => {
  it("is offered with the policy modes, in availableModes and the mode config option", async () => {
    const c = await start();
    const created = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    expect(created.modes?.availableModes.find((m) => m.id === "plan")).toEqual({
      id: "plan",
      name: "Plan",
      description: "plans first in read-only; runs the plan after you approve it",
    });
    const option = created.configOptions?.find((o) => o.id === "mode");
    expect(JSON.stringify(option)).toContain('"value":"plan"');
    const set = await c.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId: created.sessionId,
      configId: "mode",
      value: "plan",
    });
    expect(set.configOptions.find((o) => o.id === "mode")).toMatchObject({ currentValue: "plan" });
    expect(of("current_mode_update").map((u) => u.currentModeId)).toEqual(["plan"]);
    expect(records("mode").at(-1)).toBe(
      "policy mode guarded -> plan (acp session/set_mode; plans in readonly, an approved plan runs in guarded)",
    );
  });

  it("the plan update, then the question, before any effect; allowed, it runs with its progress shown and the approval audited", async () => {
    let atQuestion: { disk: boolean; requests: number } | undefined;
    answer = () => {
      atQuestion ??= { disk: fs.existsSync(notes()), requests: scene.model.completions().length };
      return allowOnce();
    };
    scene.model.push(
      step("plan", PLAN),
      progress("file_write", { path: "notes.txt", content: "hi\n" }, 1, "done"),
      progress("final", "done", 2, "skipped"),
    );
    const c = await start();
    const sessionId = await planSession(c);
    expect((await ask(c, sessionId, "write the notes")).stopReason).toBe("end_turn");

    // The planning request: readonly, the plan action offered.
    expect(request(0)).toContain(PLAN_TOOL);
    // Nothing ran and no execution was asked of the model before the answer.
    expect(atQuestion).toEqual({ disk: false, requests: 1 });
    const [question, write] = permissions();
    const questionAt = seen.findIndex((s) => s.kind === "permission");
    const firstPlanAt = seen.findIndex((s) => s.kind === "update" && s.update.sessionUpdate === "plan");
    expect(firstPlanAt).toBeGreaterThanOrEqual(0);
    expect(firstPlanAt).toBeLessThan(questionAt);
    expect(question!.toolCall).toMatchObject({
      title: "Run the plan (2 steps)",
      kind: "think",
      rawInput: PLAN,
      content: [
        {
          type: "content",
          content: { type: "text", text: "1. write the notes\n   files: notes.txt\n2. tidy up\n" },
        },
      ],
    });
    expect(question!.options.map((o) => [o.optionId, o.name, o.kind])).toEqual([
      ["allow_once", "Run the plan", "allow_once"],
      ["reject_once", "Don't run it", "reject_once"],
    ]);
    // The question names a tool_call sent before it, the only one so far.
    const callsBefore = seen
      .slice(0, questionAt)
      .flatMap((s) => (s.kind === "update" && s.update.sessionUpdate === "tool_call" ? [s.update] : []));
    expect(callsBefore.map((u) => u.toolCallId)).toEqual([question!.toolCall.toolCallId]);

    // Allowed: the execution run's request carries the plan beside the goal, in the normal prompt.
    expect(request(1)).toContain("approved plan");
    expect(request(1)).toContain("write the notes");
    expect(request(1)).not.toContain(PLAN_TOOL);
    expect(write!.toolCall.title).toBe("Write notes.txt");
    expect(fs.readFileSync(notes(), "utf8")).toBe("hi\n");
    expect(planViews()).toEqual([
      ["pending write the notes", "pending tidy up"],
      // The run that carries it out begins.
      ["pending write the notes", "pending tidy up"],
      ["completed write the notes", "pending tidy up"],
      ["completed write the notes", "completed tidy up (skipped)"],
    ]);
    expect(said()).toBe("done");
    expect(records("approval")).toContain(
      `plan approved sha256=${planSha256(PLAN)} steps=2 by=user via=acp binding=off`,
    );
  });

  it("refused: nothing runs, the turn ends saying so, and the next prompt is planned again with the feedback", async () => {
    answer = rejectOnce;
    scene.model.push(step("plan", PLAN));
    const c = await start();
    const sessionId = await planSession(c);
    expect((await ask(c, sessionId, "write the notes")).stopReason).toBe("end_turn");
    expect(scene.model.completions()).toHaveLength(1);
    expect(fs.existsSync(notes())).toBe(false);
    expect(said()).toMatch(/^The plan was not run: you did not approve it\. Say what to change/);
    const question = permissions()[0]!.toolCall.toolCallId;
    expect(of("tool_call_update").find((u) => u.toolCallId === question)).toMatchObject({
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: "not run: the user did not approve it" } }],
    });
    expect(records("approval")).toEqual([
      `plan not run sha256=${planSha256(PLAN)} steps=2 via=acp: the user did not approve it`,
    ]);

    seen = [];
    scene.model.push(step("plan", { steps: [{ title: "write notes.md", files: ["notes.md"] }] }));
    expect((await ask(c, sessionId, "use notes.md instead")).stopReason).toBe("end_turn");
    expect(scene.model.completions()).toHaveLength(2);
    // Planned again (the plan action offered), with the conversation: the first plan, that it
    // was not run, and the feedback.
    const again = request(1);
    expect(again).toContain(PLAN_TOOL);
    expect(again).toContain("write the notes");
    expect(again).toContain("the plan above was not run: the user did not approve it");
    expect(again).toContain("use notes.md instead");
    expect(permissions().map((r) => r.toolCall.title)).toEqual(["Run the plan (1 step)"]);
    expect(fs.existsSync(path.join(scene.project, "notes.md"))).toBe(false);
    // The agent's record of the refusal and the session's own records share one hash chain.
    const verify = await runCli(["audit", "verify"], { home: scene.home });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it("plan_binding strict: a write to a file the plan does not name is refused while it runs", async () => {
    scene.model.push(
      step("plan", PLAN),
      step("file_write", { path: "other.txt", content: "stray\n" }),
      step("final", "could not"),
    );
    const c = await start([], { SCOOT_AGENT_PLAN_BINDING: "strict" });
    const sessionId = await planSession(c);
    expect((await ask(c, sessionId, "write the notes")).stopReason).toBe("end_turn");
    expect(fs.existsSync(path.join(scene.project, "other.txt"))).toBe(false);
    const failed = of("tool_call_update").filter((u) => u.status === "failed");
    expect(JSON.stringify(failed)).toContain("not in the approved plan");
    // Only the plan was asked about: the narrowing refuses before anyone is asked.
    expect(permissions().map((r) => r.toolCall.title)).toEqual(["Run the plan (2 steps)"]);
    expect(records("approval")).toContain(
      `plan approved sha256=${planSha256(PLAN)} steps=2 by=user via=acp binding=strict`,
    );
    expect(records("policy_deny").join("\n")).toContain("not in the approved plan");
  });

  it("cancelled while the question waits: the prompt answers cancelled and nothing runs", async () => {
    answer = (_req, signal) =>
      new Promise((resolve) => signal.addEventListener("abort", () => resolve({ outcome: "cancelled" })));
    scene.model.push(step("plan", PLAN), step("file_write", { path: "notes.txt", content: "no\n" }));
    const c = await start();
    const sessionId = await planSession(c);
    const pending = ask(c, sessionId, "write the notes");
    const end = Date.now() + 10_000;
    while (permissions().length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await pending).stopReason).toBe("cancelled");
    expect(scene.model.completions()).toHaveLength(1);
    expect(fs.existsSync(notes())).toBe(false);
    expect(records("approval")).toEqual([
      `plan not run sha256=${planSha256(PLAN)} steps=2 via=acp: the prompt was cancelled`,
    ]);
  });

  it("under --unattended nobody can approve: the plan is shown, not run, and the turn says so", async () => {
    scene.model.push(step("plan", PLAN), step("file_write", { path: "notes.txt", content: "no\n" }));
    const c = await start(["--unattended"]);
    const sessionId = await planSession(c);
    expect((await ask(c, sessionId, "write the notes")).stopReason).toBe("end_turn");
    expect(permissions()).toEqual([]);
    expect(planViews()).toEqual([["pending write the notes", "pending tidy up"]]);
    expect(said()).toMatch(/^The plan was not run: nobody can approve it here \(scoot acp --unattended\)/);
    expect(scene.model.completions()).toHaveLength(1);
    expect(fs.existsSync(notes())).toBe(false);
  });

  it("agent.default_mode = plan: a new session starts in plan mode", async () => {
    const c = await start([], { SCOOT_AGENT_DEFAULT_MODE: "plan" });
    const created = await c.agent.request(acp.methods.agent.session.new, {
      cwd: scene.project,
      mcpServers: [],
    });
    expect(created.modes?.currentModeId).toBe("plan");
  });

  it("persists with the session: a reload comes back in plan mode over the same policy mode, and replays the plan as text", async () => {
    answer = rejectOnce;
    scene.model.push(step("plan", PLAN));
    let c = await start();
    const sessionId = await planSession(c, "readonly");
    await ask(c, sessionId, "write the notes");

    await stop();
    seen = [];
    c = await start();
    const loaded = await c.agent.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: scene.project,
      mcpServers: [],
    });
    expect(loaded.modes?.currentModeId).toBe("plan");
    expect(loaded.configOptions?.find((o) => o.id === "mode")).toMatchObject({ currentValue: "plan" });
    expect(said()).toBe("Plan:\n1. write the notes\n   files: notes.txt\n2. tidy up\n");
    expect(of("tool_call")).toEqual([]);

    // Approved now, the plan runs in the mode the session had before plan mode: readonly.
    seen = [];
    answer = allowOnce;
    scene.model.push(
      step("plan", PLAN),
      step("file_write", { path: "notes.txt", content: "hi\n" }),
      step("final", "could not"),
    );
    expect((await ask(c, sessionId, "write them now")).stopReason).toBe("end_turn");
    expect(fs.existsSync(notes())).toBe(false);
    expect(JSON.stringify(of("tool_call_update"))).toMatch(/denied by policy: .*readonly/);

    // Leaving plan mode for the same policy mode: audited, plans no more.
    await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "readonly" });
    expect(records("mode").at(-1)).toBe("policy mode plan -> readonly (acp session/set_mode)");
    scene.model.push(step("final", "plain answer"));
    seen = [];
    await ask(c, sessionId, "just answer");
    expect(request(scene.model.completions().length - 1)).not.toContain(PLAN_TOOL);
    expect(said()).toBe("plain answer");
  });
});
