/**
 * `scoot doctor --model`: does the configured model work with Scoot? A few fixed goals run
 * through the real loop against the configured server and model, in a throwaway project (read
 * only: nothing is changed, no session or audit of the user's is written), and each says how it
 * went: whether it reached the right answer, how many replies were valid steps at the first try
 * and how many needed a correction, which structured-output mode the server honoured, and the
 * seconds per turn. Local-model users ask this first; it answers with their own server.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AgentEvent } from "../agent/events.js";
import { runGoal } from "../agent/loop.js";
import { buildSystemPrompt } from "../agent/prompt.js";
import { createBackend } from "../backend/client.js";
import type { Backend, StructuredLevel } from "../backend/types.js";
import type { Config } from "../config/schema.js";
import { buildGateSettings } from "../policy/settings.js";
import { createAuditLog } from "../store/audit-writer.js";
import { enabledTools } from "../tools/registry.js";
import type { Check } from "./doctor-check.js";

/** The turns one goal may take: each needs one or two; more means the model is lost. */
const GOAL_MAX_TURNS = 6;
/** How long one goal may take in all (a slow local model on a small machine included). */
const GOAL_DEADLINE_MS = 120_000;
/** The audit of the throwaway project is small; this bounds it anyway. */
const SCRATCH_AUDIT_BYTES = 1024 * 1024;

interface Goal {
  name: string;
  goal: string;
  /** The answer must contain this (case-insensitive). */
  expect: string;
}

const GOALS: readonly Goal[] = [
  { name: "answer", goal: "Give the final answer right away: the single word ready.", expect: "ready" },
  { name: "read", goal: "Read the file notes.txt and answer with its first word only.", expect: "apple" },
  {
    name: "list",
    goal: "Find the .txt files in this directory with glob, then answer with how many there are, as a digit.",
    expect: "2",
  },
];

interface GoalReport {
  goal: Goal;
  stop: string;
  answer?: string;
  error?: string;
  replies: number;
  corrections: number;
  latencies: number[];
}

function scratchProject(dir: string): string {
  const project = path.join(dir, "project");
  fs.mkdirSync(project, { recursive: true });
  fs.writeFileSync(path.join(project, "notes.txt"), "apple banana cherry\n");
  fs.writeFileSync(path.join(project, "todo.txt"), "water the plants\n");
  return project;
}

async function runOne(
  goal: Goal,
  config: Config,
  backend: Backend,
  dir: string,
  project: string,
): Promise<GoalReport> {
  const tools = enabledTools({ hasMcp: false, hasSkills: false });
  const events: AgentEvent[] = [];
  const audit = createAuditLog({
    file: path.join(dir, "audit.jsonl"),
    level: "info",
    toFile: true,
    maxRetained: 1,
    maxFileBytes: SCRATCH_AUDIT_BYTES,
  });
  const runConfig: Config = { ...config, agent: { ...config.agent, max_turns: GOAL_MAX_TURNS } };
  try {
    const r = await runGoal(
      {
        config: runConfig,
        mode: "readonly",
        cwd: project,
        backend,
        audit,
        session: { id: `doctor-${goal.name}`, path: path.join(dir, `${goal.name}.jsonl`), append: () => {} },
        sessionId: `doctor-${goal.name}`,
        runId: goal.name,
        gateSettings: buildGateSettings(runConfig, project, { mode: "readonly" }),
        tools,
        services: {},
        childEnv: { PATH: process.env.PATH },
        toolTimeoutMs: config.tools.timeout_ms,
        signal: AbortSignal.timeout(GOAL_DEADLINE_MS),
        history: [
          {
            role: "system",
            content: buildSystemPrompt({ tools: [...tools.values()], mode: "readonly", cwd: project }),
          },
        ],
        onEvent: (e) => void events.push(e),
      },
      goal.goal,
    );
    return {
      goal,
      stop: r.stop,
      ...(r.answer !== undefined ? { answer: r.answer } : {}),
      ...(r.error !== undefined ? { error: r.error } : {}),
      replies: events.filter((e) => e.type === "reply").length,
      corrections: events.filter((e) => e.type === "malformed").length,
      latencies: events.flatMap((e) => (e.type === "reply" ? [e.latencyMs] : [])),
    };
  } finally {
    audit.close();
  }
}

function goalCheck(r: GoalReport): Check {
  const name = `model ${r.goal.name}`;
  if (r.stop !== "final")
    return { name, status: "FAIL", detail: `no answer (${r.stop}): ${r.error ?? "no detail"}` };
  const right = (r.answer ?? "").toLowerCase().includes(r.goal.expect);
  const said = JSON.stringify((r.answer ?? "").slice(0, 60));
  const turns = `${r.replies} repl${r.replies === 1 ? "y" : "ies"}, ${r.corrections} correction${r.corrections === 1 ? "" : "s"}`;
  if (!right)
    return { name, status: "WARN", detail: `answered ${said}, expected "${r.goal.expect}" (${turns})` };
  return { name, status: r.corrections === 0 ? "OK" : "WARN", detail: `answered ${said} (${turns})` };
}

function summary(model: string, reports: readonly GoalReport[], levels: ReadonlySet<StructuredLevel>): Check {
  const replies = reports.reduce((n, r) => n + r.replies, 0);
  const corrections = reports.reduce((n, r) => n + r.corrections, 0);
  const latencies = reports.flatMap((r) => r.latencies);
  const perTurn = latencies.length > 0 ? latencies.reduce((a, b) => a + b, 0) / latencies.length / 1000 : 0;
  const modes = levels.size > 0 ? [...levels].join(", ") : "none";
  const failed = reports.some((r) => r.stop !== "final");
  const detail = `${model}: ${replies - corrections} of ${replies} replies were valid steps at the first try, ${corrections} needed a correction; structured output honoured: ${modes}; ${perTurn.toFixed(1)} s per turn`;
  return { name: "model", status: failed ? "FAIL" : corrections > 0 ? "WARN" : "OK", detail };
}

export async function modelChecks(config: Config, token: string | undefined): Promise<Check[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-doctor-model-"));
  try {
    const project = scratchProject(dir);
    const inner = createBackend(config.backend, { ...(token !== undefined ? { token } : {}) });
    const levels = new Set<StructuredLevel>();
    // The mode each reply was sent with: what the server honoured (auto steps down on a 400).
    const backend: Backend = {
      ...inner,
      complete: async (req) => {
        const r = await inner.complete(req);
        if (r.ok) levels.add(r.value.level);
        return r;
      },
    };
    const reports: GoalReport[] = [];
    for (const goal of GOALS) reports.push(await runOne(goal, config, backend, dir, project));
    return [...reports.map(goalCheck), summary(config.backend.model, reports, levels)];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
