/**
 * Each way a run can stop, driven through the real loop (test/helpers/loop.ts), and what the
 * stop reason becomes for its callers: the coarse status and the CLI's exit code. A refusal
 * goes through the real backend client against the loopback server, since telling it apart
 * from any other unusable reply is the client's job.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunStop } from "../../src/agent/run-stop.js";
import { RUN_STOPS, statusOf } from "../../src/agent/run-stop.js";
import { createBackend } from "../../src/backend/client.js";
import { exitCodeFor } from "../../src/cli/run.js";
import { defaultConfig } from "../../src/config/schema.js";
import { enabledTools } from "../../src/tools/registry.js";
import { demoProject, removeDir } from "../helpers/cli.js";
import { type LoopHarness, type LoopOptions, loopHarness } from "../helpers/loop.js";
import {
  type ScriptedServer,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";

let project: string;
let h: LoopHarness | undefined;
let server: ScriptedServer | undefined;

beforeEach(() => {
  project = demoProject();
});
afterEach(async () => {
  await h?.backend.close();
  await server?.close();
  h = undefined;
  server = undefined;
  removeDir(project);
});

const REFUSAL_JSON = JSON.stringify({
  choices: [
    {
      message: { role: "assistant", content: null, refusal: "I can't help with that." },
      finish_reason: "stop",
    },
  ],
});
const REFUSAL_SSE = [
  `data: ${JSON.stringify({ choices: [{ delta: { refusal: "I can't help" } }] })}`,
  `data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: "stop" }] })}`,
  "data: [DONE]",
  "",
  "",
].join("\n\n");

interface Case {
  stop: RunStop;
  why: string;
  script: ScriptItem[];
  opts?: Omit<LoopOptions, "cwd">;
  /** The loopback server answers through the real client (for what only the wire can say). */
  wire?: { stream: boolean };
  /** The run's signal is aborted before it starts. */
  aborted?: boolean;
  error?: RegExp;
}

const readme = step("file_read", { path: "README.md" });

const CASES: Case[] = [
  { stop: "final", why: "the model answers", script: [step("final", "done")] },
  {
    stop: "plan",
    why: "a planning run's model sends its plan",
    script: [step("plan", { steps: [{ title: "one" }] })],
    opts: { tools: enabledTools({ hasMcp: false, hasSkills: false, planning: true }) },
  },
  {
    stop: "max_turns",
    why: "agent.max_turns turns without an answer",
    script: [readme, readme],
    opts: {
      configure: (c) => {
        c.agent.max_turns = 2;
      },
    },
    error: /agent\.max_turns = 2/,
  },
  {
    stop: "malformed",
    why: "agent.max_malformed_steps invalid steps in a row",
    script: [{ reply: "no step" }, { reply: "still none" }],
    opts: {
      configure: (c) => {
        c.agent.max_malformed_steps = 2;
      },
    },
    error: /2 invalid steps in a row/,
  },
  { stop: "backend", why: "the backend call fails", script: [{ status: 400 }], error: /backend failed/ },
  {
    stop: "refused",
    why: "the reply is the model's refusal (plain JSON)",
    script: [{ raw: REFUSAL_JSON, contentType: "application/json" }],
    wire: { stream: false },
    error: /refusal: I can't help/,
  },
  {
    stop: "refused",
    why: "the reply is the model's refusal (streamed)",
    script: [{ raw: REFUSAL_SSE, contentType: "text/event-stream" }],
    wire: { stream: true },
    error: /the model refused: I can't help/,
  },
  {
    stop: "budget",
    why: "the history cannot fit the context budget, so the backend is not called",
    script: [step("final", "never")],
    opts: {
      configure: (c) => {
        c.agent.context_budget_bytes = 100;
      },
    },
    error: /run stopped before calling the backend/,
  },
  {
    stop: "not_recorded",
    why: "an audit record cannot be written",
    script: [step("final", "never")],
    opts: { failKind: "backend" },
    error: /no tool runs without an audit record/,
  },
  {
    stop: "interrupted",
    why: "the run is cancelled",
    script: [step("final", "never")],
    aborted: true,
    error: /interrupted/,
  },
];

describe("a run says why it stopped", () => {
  it("every stop reason has a row below", () => {
    expect(new Set(CASES.map((c) => c.stop))).toEqual(new Set(RUN_STOPS));
  });

  it.each(CASES)("$stop: $why", async (c) => {
    h = loopHarness(c.wire ? [] : c.script, { cwd: project, auditLevel: "info", ...c.opts });
    if (c.wire) {
      server = await startScriptedServer(c.script);
      h.deps.backend = createBackend({
        ...defaultConfig().backend,
        base_url: server.url,
        model: "test-model",
        stream: c.wire.stream,
        max_retries: 0,
      });
    }
    if (c.aborted) {
      const controller = new AbortController();
      controller.abort(new Error("interrupted"));
      h.deps.signal = controller.signal;
    }
    const r = await h.run("go");
    expect(r.stop, r.error).toBe(c.stop);
    expect(r.status).toBe(statusOf(c.stop));
    // A plan is a run that did what it was asked: exit 0, as an answer.
    const ok = c.stop === "final" || c.stop === "plan";
    expect(exitCodeFor(r)).toBe(ok ? 0 : c.stop === "interrupted" ? 130 : 1);
    if (c.error) expect(r.error).toMatch(c.error);
    else expect(r.error).toBeUndefined();
  });
});

describe("statusOf", () => {
  it("keeps the three statuses older outputs carry, and plan for a planning run", () => {
    expect(RUN_STOPS.map((s) => [s, statusOf(s)])).toEqual([
      ["final", "final"],
      ["plan", "plan"],
      ["max_turns", "failed"],
      ["malformed", "failed"],
      ["backend", "failed"],
      ["refused", "failed"],
      ["budget", "failed"],
      ["not_recorded", "failed"],
      ["interrupted", "interrupted"],
    ]);
  });
});
