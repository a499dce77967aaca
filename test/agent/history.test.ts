/**
 * A true history (docs/sessions.md "What the model is told"): what the person did outside the
 * model's steps reaches the model, and user and assistant messages alternate in every request.
 * Each case runs real agent sessions (src/agent/session-runner.ts: the real loop, tools, gate,
 * transcript and checkpoints in a real home) against the scripted model server, then reads
 * the next goal's request body as the server got it and the session file on disk.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Approver } from "../../src/agent/approval.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { type AgentSession, openAgentSession } from "../../src/agent/session-runner.js";
import { undoLastRun } from "../../src/agent/undo-report.js";
import { ensureHome, homePaths } from "../../src/config/home.js";
import { loadConfig } from "../../src/config/load.js";
import { loadResumeTarget } from "../../src/store/resume-target.js";
import { readSession, sessionPath } from "../../src/store/session.js";
import { processesWith, uniqueSleepArg, waitForProcess } from "../helpers/procs.js";
import { useScene } from "../helpers/scene.js";
import {
  type RecordedRequest,
  type ScriptedServer,
  startScriptedServer,
  step,
  stepText,
} from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-history-home-", project: "scoot-history-project-", realProject: true });

interface Msg {
  role: string;
  content: string;
}

/** The messages of one chat request, as the server received them. */
function messagesOf(req: RecordedRequest | undefined): Msg[] {
  if (!req) throw new Error("no such request: the server got fewer completion requests");
  return (req.body as { messages: Msg[] }).messages;
}

/** Every place two messages of one role follow each other (a strict chat template refuses them). */
function repeatedRoles(messages: readonly Msg[]): string[] {
  const out: string[] = [];
  for (let i = 1; i < messages.length; i++)
    if (messages[i]!.role === messages[i - 1]!.role) out.push(`${i - 1},${i}: ${messages[i]!.role}`);
  return out;
}

function transcript(id: string): Msg[] {
  const paths = homePaths(scene.home);
  return readSession(sessionPath(paths.sessions, id)).messages;
}

interface Opened {
  agent: AgentSession;
  events: AgentEvent[];
  /** Resolves at the first event that passes `test`. */
  when(test: (e: AgentEvent) => boolean): Promise<AgentEvent>;
}

async function open(
  server: ScriptedServer,
  sessionId: string,
  extra: { retries?: number; resume?: boolean; approver?: Approver } = {},
): Promise<Opened> {
  const env = { ...process.env, SCOOT_BACKEND_BASE_URL: server.url };
  const paths = homePaths(scene.home);
  ensureHome(paths);
  const loaded = loadConfig(paths.root, env);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const events: AgentEvent[] = [];
  const waiters: { test: (e: AgentEvent) => boolean; resolve: (e: AgentEvent) => void }[] = [];
  let resume: ReturnType<typeof loadResumeTarget> | undefined;
  if (extra.resume) {
    resume = loadResumeTarget(paths.sessions, sessionId);
    if (!resume.ok) throw new Error(resume.error);
  }
  const opened = await openAgentSession({
    config: loaded.value.config,
    paths,
    cwd: scene.project,
    env,
    sessionId,
    mode: "guarded",
    retries: extra.retries ?? 0,
    onWarning: () => {},
    onEvent: (e) => {
      events.push(e);
      for (const w of [...waiters])
        if (w.test(e)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(e);
        }
    },
    ...(resume?.ok ? { resume: resume.value.messages } : {}),
    ...(extra.approver ? { approver: extra.approver } : {}),
  });
  if (!opened.ok) throw new Error(opened.error);
  return {
    agent: opened.value,
    events,
    when: (test) => new Promise((resolve) => waiters.push({ test, resolve })),
  };
}

const final = (answer: string) => step("final", answer, "t");
const quiet = { out() {}, err() {}, raw() {}, color: false };

describe("after /undo the next request names the restored files", () => {
  it("the note reaches the next goal in its user message, is in the transcript, and survives a resume", async () => {
    fs.writeFileSync(path.join(scene.project, "notes.md"), "original\n");
    const server = await startScriptedServer([
      step("file_write", { path: "notes.md", content: "rewritten by the model\n" }),
      step("file_write", { path: "made.txt", content: "new\n" }),
      final("both written"),
      final("second answer"),
      final("after resume"),
    ]);
    scene.server = server;
    const s = await open(server, "undo-note");
    expect((await s.agent.run("rewrite the notes", new AbortController().signal)).status).toBe("final");

    const undone = undoLastRun(quiet, homePaths(scene.home), "undo-note", scene.project, {
      force: false,
      what: "/undo",
      guard: s.agent.undoGuard(),
    });
    expect(undone).toEqual({
      ok: true,
      goal: "rewrite the notes",
      restored: ["notes.md"],
      removed: ["made.txt"],
    });
    expect(fs.readFileSync(path.join(scene.project, "notes.md"), "utf8")).toBe("original\n");
    expect(s.agent.noteUndo(undone)).toEqual({ ok: true, value: undefined });

    expect((await s.agent.run("what is in notes.md now?", new AbortController().signal)).answer).toBe(
      "second answer",
    );
    const sent = messagesOf(server.completions()[3]);
    expect(repeatedRoles(sent)).toEqual([]);
    // One user message: the note first, then the person's goal.
    const last = sent.at(-1)!;
    expect(last.role).toBe("user");
    expect(last.content).toMatch(
      /^\[scoot: the user ran \/undo: the file changes of the goal "rewrite the notes"/,
    );
    expect(last.content).toContain('Restored to what they held before that goal: "notes.md".');
    expect(last.content).toContain('Removed (that goal created them): "made.txt".');
    expect(last.content.endsWith("\n\nwhat is in notes.md now?")).toBe(true);
    // The transcript keeps the note as its own line, before the goal.
    const lines = transcript("undo-note").map((m) => m.content);
    const noteAt = lines.findIndex((c) => c.startsWith("[scoot: the user ran /undo"));
    expect(noteAt).toBeGreaterThan(0);
    expect(lines[noteAt + 1]).toBe("what is in notes.md now?");
    await s.agent.close();

    // --resume: the conversation is rebuilt from the transcript, the note with it, merged the same way.
    const again = await open(server, "undo-note", { resume: true });
    await again.agent.run("go on", new AbortController().signal);
    const resumed = messagesOf(server.completions()[4]);
    expect(repeatedRoles(resumed)).toEqual([]);
    expect(resumed.some((m) => m.role === "user" && m.content.includes('"notes.md"'))).toBe(true);
    await again.agent.close();
  });

  it("an undo the model is told of before any goal of this process (a resumed REPL) reaches the first request", async () => {
    const server = await startScriptedServer([
      step("file_write", { path: "a.txt", content: "x\n" }),
      final("written"),
      final("resumed answer"),
    ]);
    scene.server = server;
    const first = await open(server, "undo-early");
    await first.agent.run("make a.txt", new AbortController().signal);
    await first.agent.close();

    const s = await open(server, "undo-early", { resume: true });
    const undone = undoLastRun(quiet, homePaths(scene.home), "undo-early", scene.project, {
      force: false,
      what: "/undo",
      guard: s.agent.undoGuard(),
    });
    expect(undone.removed).toEqual(["a.txt"]);
    s.agent.noteUndo(undone);
    await s.agent.run("is a.txt there?", new AbortController().signal);
    const sent = messagesOf(server.completions()[2]);
    expect(repeatedRoles(sent)).toEqual([]);
    expect(sent.at(-1)!.content).toMatch(
      /^\[scoot: the user ran \/undo[^\n]*"a\.txt"[^\n]*\n\nis a\.txt there\?$/,
    );
    await s.agent.close();
  });

  it("an undo that put nothing back tells the model nothing", async () => {
    const server = await startScriptedServer([final("one"), final("two")]);
    scene.server = server;
    const s = await open(server, "undo-none");
    await s.agent.run("hello", new AbortController().signal);
    const undone = undoLastRun(quiet, homePaths(scene.home), "undo-none", scene.project, {
      force: false,
      what: "/undo",
      guard: s.agent.undoGuard(),
    });
    expect(undone).toEqual({ ok: false, restored: [], removed: [] });
    s.agent.noteUndo(undone);
    await s.agent.run("again", new AbortController().signal);
    expect(messagesOf(server.completions()[1]).at(-1)).toEqual({ role: "user", content: "again" });
    expect(transcript("undo-none").some((m) => m.content.startsWith("[scoot:"))).toBe(false);
    await s.agent.close();
  });
});

describe("an interrupted call gets an observation", () => {
  it("bash sleep aborted while running: the observation says who stopped it and after how long", async () => {
    const sleepArg = uniqueSleepArg(30);
    const server = await startScriptedServer([step("bash", `sleep ${sleepArg}`), final("next answer")]);
    scene.server = server;
    const s = await open(server, "interrupted-call");
    const controller = new AbortController();
    const running = s.when((e) => e.type === "running");
    const done = s.agent.run("wait a while", controller.signal);
    await running;
    const startedAt = Date.now();
    // The command is really running before the stop (a stop before it starts is another case).
    expect(await waitForProcess(`sleep ${sleepArg}`, 10_000)).toBe(true);
    const waited = Date.now() - startedAt;
    controller.abort(new Error("interrupted"));
    const r = await done;
    const bound = Date.now() - startedAt;
    expect(r.stop).toBe("interrupted");
    expect(processesWith(`sleep ${sleepArg}`)).toEqual([]);

    const lines = transcript("interrupted-call");
    const observation = lines.find((m) => m.content.startsWith("Observation from bash"));
    const seconds = /interrupted by the user after (\d+\.\d) s/.exec(observation?.content ?? "");
    expect(seconds, observation?.content).not.toBeNull();
    // The real seconds from the call's start to the stop: at least what the test waited, at
    // most what it saw in all (each rounded to the one decimal shown).
    expect(Number(seconds![1])).toBeGreaterThanOrEqual(Math.floor(waited / 100) / 10);
    expect(Number(seconds![1])).toBeLessThanOrEqual(Math.ceil(bound / 100) / 10);
    // Then the note that the goal stopped, on the assistant's side.
    expect(lines.at(-1)).toEqual({
      role: "assistant",
      content: "[scoot: this goal stopped before a final answer: interrupted by the user]",
    });

    await s.agent.run("and now?", new AbortController().signal);
    const sent = messagesOf(server.completions()[1]);
    expect(repeatedRoles(sent)).toEqual([]);
    // Every call in the request has its observation right after it.
    const callAt = sent.findIndex((m) => m.role === "assistant" && m.content.includes('"bash"'));
    expect(sent[callAt + 1]!.content).toMatch(
      /^Observation from bash:[\s\S]*interrupted by the user after \d+\.\d s/,
    );
    await s.agent.close();
  });
});

describe("a call stopped while its approval question was open", () => {
  it("did not run, and its observation says so", async () => {
    const server = await startScriptedServer([
      step("file_write", { path: "asked.txt", content: "x\n" }),
      final("next answer"),
    ]);
    scene.server = server;
    let asked!: () => void;
    const questionOpen = new Promise<void>((resolve) => {
      asked = resolve;
    });
    // A person who never answers: the question stays open until the run is stopped.
    const approver: Approver = {
      ask: (_call, signal) =>
        new Promise((resolve) => {
          asked();
          signal.addEventListener("abort", () => resolve({ kind: "refuse", reason: "interrupted" }), {
            once: true,
          });
        }),
    };
    const s = await open(server, "interrupted-approval", { approver });
    const controller = new AbortController();
    const done = s.agent.run("write it", controller.signal);
    await questionOpen;
    controller.abort(new Error("interrupted"));
    expect((await done).stop).toBe("interrupted");
    expect(fs.existsSync(path.join(scene.project, "asked.txt"))).toBe(false);
    const lines = transcript("interrupted-approval").slice(-3);
    expect(lines.map((m) => m.role)).toEqual(["assistant", "user", "assistant"]);
    expect(lines[1]!.content).toContain(
      "interrupted by the user before it ran (it was waiting for approval); nothing of it ran",
    );
    await s.agent.run("go on", new AbortController().signal);
    expect(repeatedRoles(messagesOf(server.completions()[1]))).toEqual([]);
    await s.agent.close();
  });
});

describe("an interrupted reply is kept and marked [interrupted]", () => {
  it("a final answer cut off mid-stream stays in the history and the transcript as a final step, redacted", async () => {
    const secret = "sk-abcdefghijklmnopqrstuvwxyz0123456789";
    const server = await startScriptedServer([
      {
        stream: [
          `{"thought":"t","action":"final","action_input":"The key is ${secret} and the answer is fort`,
        ],
        hold: true,
      },
      final("second answer"),
    ]);
    scene.server = server;
    const s = await open(server, "interrupted-answer");
    const controller = new AbortController();
    let shown = "";
    const arrived = s.when((e) => {
      if (e.type === "answer_delta") shown += e.text;
      return shown.includes("the answer is");
    });
    const done = s.agent.run("tell me", controller.signal);
    await arrived;
    controller.abort(new Error("interrupted"));
    const r = await done;
    expect(r.stop).toBe("interrupted");
    // Nothing said the streamed text was withdrawn: it stands, cut.
    expect(s.events.some((e) => e.type === "answer_withdrawn")).toBe(false);

    const kept = transcript("interrupted-answer").at(-1)!;
    expect(kept.role).toBe("assistant");
    expect(JSON.parse(kept.content)).toEqual({
      thought: "t",
      action: "final",
      action_input: "The key is [REDACTED] and the answer is fort [interrupted]",
    });

    await s.agent.run("finish it", new AbortController().signal);
    const sent = messagesOf(server.completions()[1]);
    expect(repeatedRoles(sent)).toEqual([]);
    expect(sent.at(-2)!.role).toBe("assistant");
    expect(JSON.parse(sent.at(-2)!.content).action_input).toBe(
      `The key is ${secret} and the answer is fort [interrupted]`,
    );
    expect(sent.at(-1)).toEqual({ role: "user", content: "finish it" });
    await s.agent.close();

    // --resume rebuilds the same conversation from the transcript (the secret redacted there).
    server.push(final("resumed answer"));
    const again = await open(server, "interrupted-answer", { resume: true });
    await again.agent.run("once more", new AbortController().signal);
    const resumed = messagesOf(server.completions()[2]);
    expect(repeatedRoles(resumed)).toEqual([]);
    expect(resumed.map((m) => m.content)).toContain(
      JSON.stringify({
        thought: "t",
        action: "final",
        action_input: "The key is [REDACTED] and the answer is fort [interrupted]",
      }),
    );
    await again.agent.close();
  });

  it("a thought cut off mid-stream is kept as far as it came, then the mark", async () => {
    const server = await startScriptedServer([
      { stream: ['{"thought":"first I will read the', " config file and"], hold: true },
      final("second answer"),
    ]);
    scene.server = server;
    const s = await open(server, "interrupted-thought");
    const controller = new AbortController();
    let thought = "";
    const arrived = s.when((e) => {
      if (e.type === "thought_delta") thought += e.text;
      return thought.includes("config file");
    });
    const done = s.agent.run("look around", controller.signal);
    await arrived;
    controller.abort(new Error("interrupted"));
    expect((await done).stop).toBe("interrupted");
    expect(transcript("interrupted-thought").at(-1)).toEqual({
      role: "assistant",
      content: '{"thought":"first I will read the config file and\n[interrupted]',
    });
    await s.agent.run("go on", new AbortController().signal);
    const sent = messagesOf(server.completions()[1]);
    expect(repeatedRoles(sent)).toEqual([]);
    expect(sent.at(-2)!.content.endsWith("\n[interrupted]")).toBe(true);
    await s.agent.close();
  });

  it("a whole tool step that arrived before the stop did not run, and its observation says so", async () => {
    const server = await startScriptedServer([
      // The thought ends in a space: streamed text is shown up to white space (stream-redact.ts).
      {
        stream: [stepText("file_write", { path: "never.txt", content: "x" }, "write the file ")],
        hold: true,
      },
      final("second answer"),
    ]);
    scene.server = server;
    const s = await open(server, "interrupted-step");
    const controller = new AbortController();
    let thought = "";
    const arrived = s.when((e) => {
      if (e.type === "thought_delta") thought += e.text;
      return thought === "write the file ";
    });
    const done = s.agent.run("write", controller.signal);
    await arrived;
    controller.abort(new Error("interrupted"));
    expect((await done).stop).toBe("interrupted");
    expect(fs.existsSync(path.join(scene.project, "never.txt"))).toBe(false);
    const lines = transcript("interrupted-step").slice(-3);
    expect(lines.map((m) => m.role)).toEqual(["assistant", "user", "assistant"]);
    expect(lines[1]!.content).toContain(
      "interrupted by the user before it ran (its reply was still arriving)",
    );
    await s.agent.run("go on", new AbortController().signal);
    expect(repeatedRoles(messagesOf(server.completions()[1]))).toEqual([]);
    await s.agent.close();
  });
});

describe("a failed goal is followed by a note saying it failed and why", () => {
  it("the backend answers 500 until the retries run out: the next request alternates and carries the reason", async () => {
    const fail = { status: 500, retryAfter: 0, body: { error: { message: "the GPU fell over" } } };
    const server = await startScriptedServer([fail, fail, final("recovered")]);
    scene.server = server;
    const s = await open(server, "failed-goal", { retries: 1 });
    const r = await s.agent.run("first goal", new AbortController().signal);
    expect(r.stop).toBe("backend");
    expect(server.completions()).toHaveLength(2);
    expect((await s.agent.run("second goal", new AbortController().signal)).answer).toBe("recovered");

    const sent = messagesOf(server.completions()[2]);
    expect(repeatedRoles(sent)).toEqual([]);
    expect(sent.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(sent[1]!.content).toBe("first goal");
    expect(sent[2]!.content).toMatch(
      /^\[scoot: this goal stopped before a final answer: backend failed: .*500/,
    );
    expect(sent[2]!.content).toContain("the GPU fell over");
    expect(sent[3]!.content).toBe("second goal");
    // The transcript has the note too, so a resumed session alternates the same way.
    expect(transcript("failed-goal").map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    await s.agent.close();
  });

  it("too many invalid steps: the note is merged into the last reply, so roles still alternate", async () => {
    const server = await startScriptedServer([
      { reply: "no step" },
      { reply: "still none" },
      { reply: "nope" },
      final("fine"),
    ]);
    scene.server = server;
    const s = await open(server, "malformed-goal");
    expect((await s.agent.run("first", new AbortController().signal)).stop).toBe("malformed");
    await s.agent.run("second", new AbortController().signal);
    const sent = messagesOf(server.completions()[3]);
    expect(repeatedRoles(sent)).toEqual([]);
    expect(sent.at(-2)!.content).toMatch(
      /^nope\n\n\[scoot: this goal stopped before a final answer: the model sent 3 invalid steps/,
    );
    await s.agent.close();
  });
});

describe("a transcript from before these notes", () => {
  it("two user lines in a row (a failed goal of an older version) are merged when it is resumed", async () => {
    const paths = homePaths(scene.home);
    ensureHome(paths);
    fs.mkdirSync(paths.sessions, { recursive: true });
    const lines = [
      { role: "system", content: "old prompt" },
      { role: "user", content: "goal that failed" },
      { role: "user", content: "goal after it" },
      { role: "assistant", content: stepText("final", "an answer") },
    ];
    fs.writeFileSync(sessionPath(paths.sessions, "old"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const server = await startScriptedServer([final("resumed")]);
    scene.server = server;
    const s = await open(server, "old", { resume: true });
    await s.agent.run("third goal", new AbortController().signal);
    const sent = messagesOf(server.completions()[0]);
    expect(repeatedRoles(sent)).toEqual([]);
    expect(sent[1]).toEqual({ role: "user", content: "goal that failed\n\ngoal after it" });
    await s.agent.close();
  });
});
