/**
 * Backend-chaos drill: a model server that, request by request (seeded), drops the connection,
 * stalls (never answers, or answers after the deadline), rate-limits (429 with and without a
 * small Retry-After), fails (500), sends garbage, or sends a valid step. With a 400 ms backend
 * deadline and 2 retries, a series of short `-e` runs (a glob or two, then final) must each end
 * one of two ways — exit 0 with the answer, or exit 1 with one clear error line naming the
 * backend URL — and never hang. The audit log parses, and each failed run left a `system_error`.
 *
 * "Never hangs" is not a timing assertion: each run gets a kill timer computed from the
 * configuration (turns × attempts × (deadline + longest wait) + slack); a run still alive when
 * it fires fails the drill.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, removeDir, runCli, tempDir } from "../helpers/cli.js";
import { type RecordedRequest, type ScriptItem, startScriptedServer } from "../helpers/scripted-server.js";
import { allAuditEvents, auditLive, checkJsonl, drillRng, jsonlFiles } from "./lib.js";

const RUNS = 15;
const TIMEOUT_MS = 400;
const MAX_RETRIES = 2;
/** Retry-After values the server sends (seconds): small, so the drill stays quick. */
const RETRY_AFTER_S = [0, 1] as const;
/** A stalled reply arrives this long after the deadline (the client must not wait for it). */
const LATE_BY_MS = 300;
/** The client's own backoff before retry r is at most 250·2^r ms (src/backend/retry.ts). */
const MAX_BACKOFF_MS = 250 * 2 ** (MAX_RETRIES - 1);
/** Longest wait between attempts: the larger of the backoff and the Retry-After we send. */
const MAX_WAIT_MS = Math.max(MAX_BACKOFF_MS, Math.max(...RETRY_AFTER_S) * 1000);
/** Turns per run (and agent.max_turns): at most two globs, then final. */
const MAX_STEPS = 3;
/** Process start, config load and exit on a loaded 2-core machine, with room to spare. */
const SLACK_MS = 15_000;
/** The kill timer of one run: if it fires, the run hung. */
const RUN_BOUND_MS = MAX_STEPS * (MAX_RETRIES + 1) * (TIMEOUT_MS + MAX_WAIT_MS) + SLACK_MS;

type Chaos = "drop" | "hang" | "late" | "429-retry-after" | "429" | "500" | "garbage" | "valid";

const WEIGHTS: Record<Chaos, number> = {
  drop: 10,
  hang: 6,
  late: 6,
  "429-retry-after": 8,
  "429": 6,
  "500": 10,
  garbage: 4,
  valid: 50,
};

const rng = drillRng("backend-chaos");
let base: string;
let home: string;
let project: string;

beforeAll(() => {
  base = tempDir("scoot-drill-chaos-");
  home = path.join(base, "home");
  project = path.join(base, "project");
  fs.mkdirSync(path.join(project, "src"), { recursive: true });
  fs.writeFileSync(path.join(project, "src", "a.ts"), "export const a = 1;\n");
});
afterAll(() => removeDir(base));

/** The run's plan, read back from its goal: how many glob steps before the final. */
function planOf(req: RecordedRequest): { globs: number; answer: string } {
  const body = req.body as { messages?: { role: string; content: string }[] };
  const goal = body.messages?.find((m) => m.role === "user")?.content ?? "";
  const m = /chaos run (\d+) globs=(\d+)/.exec(goal);
  return { globs: Number(m?.[2] ?? 1), answer: `answer ${m?.[1] ?? "?"}` };
}

/** The valid step for this point of the run: globs first, then final. */
function validStep(req: RecordedRequest): ScriptItem {
  const body = req.body as { messages?: { role: string }[] };
  const done = (body.messages ?? []).filter((m) => m.role === "assistant").length;
  const plan = planOf(req);
  const step =
    done < plan.globs
      ? { thought: "look", action: "glob", action_input: JSON.stringify({ pattern: "src/*.ts" }) }
      : { thought: "done", action: "final", action_input: plan.answer };
  return { reply: step };
}

const log: Chaos[] = [];

function chaos(req: RecordedRequest): ScriptItem {
  const c = rng.weighted(WEIGHTS);
  log.push(c);
  switch (c) {
    case "drop":
      return { drop: true };
    case "hang":
      return { hang: true };
    case "late":
      return { ...(validStep(req) as { reply: object }), delayMs: TIMEOUT_MS + LATE_BY_MS };
    case "429-retry-after":
      return { status: 429, retryAfter: rng.pick(RETRY_AFTER_S) };
    case "429":
      return { status: 429 };
    case "500":
      return { status: 500 };
    case "garbage":
      return { malformed: true };
    case "valid":
      return validStep(req);
  }
}

describe("backend-chaos drill", () => {
  it(`${RUNS} runs against a misbehaving backend each end cleanly, none hangs`, async () => {
    // Enough function items for every attempt of every run.
    const server = await startScriptedServer(
      Array.from({ length: RUNS * MAX_STEPS * (MAX_RETRIES + 1) + 10 }, () => chaos),
    );
    const results: { id: string; globs: number; r: CliResult }[] = [];
    try {
      for (let i = 0; i < RUNS; i++) {
        const globs = rng.int(1, MAX_STEPS - 1);
        const id = `chaos-${i}`;
        const before = log.length;
        const r = await runCli(["-e", `chaos run ${i} globs=${globs}`, "--session-id", id], {
          home,
          cwd: project,
          env: {
            SCOOT_BACKEND_BASE_URL: server.url,
            SCOOT_BACKEND_TIMEOUT_MS: String(TIMEOUT_MS),
            SCOOT_BACKEND_MAX_RETRIES: String(MAX_RETRIES),
            SCOOT_AGENT_MAX_TURNS: String(MAX_STEPS),
          },
          // The hang guard: collect() SIGKILLs the CLI and rejects if this fires.
          timeoutMs: RUN_BOUND_MS,
        });
        console.log(
          `[drill backend-chaos] run ${i} (globs=${globs}): exit ${r.code} after ${log.slice(before).join(",")}`,
        );
        results.push({ id, globs, r });
      }
    } finally {
      await server.close();
    }

    const url = `${server.url}/chat/completions`;
    const events = allAuditEvents(home);
    for (const { id, globs, r } of results) {
      const mine = events.filter((e) => e.session_id === id);
      expect(r.signal, `${id} was killed: it hung`).toBeNull();
      if (r.code === 0) {
        expect(r.stdout, id).toBe(`answer ${id.slice("chaos-".length)}\n`);
        expect(mine.filter((e) => e.kind === "tool_call")).toHaveLength(globs);
        expect(mine.at(-1)?.kind).toBe("final");
      } else {
        expect(r.code, `${id}: ${r.stderr}`).toBe(1);
        expect(r.stdout, id).toBe("");
        // One clear line, naming the backend URL.
        const lines = r.stderr.split("\n").filter((l) => l.trim() !== "");
        expect(lines, id).toHaveLength(1);
        expect(lines[0], id).toContain(url);
        expect(lines[0], id).toMatch(/^scoot: backend failed: /);
        expect(mine.filter((e) => e.kind === "system_error").length, id).toBeGreaterThan(0);
        expect(mine.at(-1)?.kind, id).toBe("system_error");
        expect(mine.at(-1)?.msg, id).toContain(url);
      }
    }
    // The drill must have exercised both endings.
    const codes = results.map((x) => x.r.code);
    console.log(`[drill backend-chaos] exits: ${codes.join(" ")}`);
    expect(codes).toContain(0);

    // The audit log (and every transcript) parses.
    expect(fs.existsSync(auditLive(home))).toBe(true);
    for (const f of jsonlFiles(home)) {
      const c = checkJsonl(f);
      expect(c.bad, f).toEqual([]);
      expect(c.torn, f).toBeUndefined();
    }
  });
});
