/**
 * The model's real context window, through the CLI's commands: doctor names the
 * window and its source for each server flavour; a 30-turn run whose observations would overflow
 * a 2048-token window stays under it on every request; a system prompt that cannot fit stops
 * before any model call; backend.context_window overrides; bad discovery answers fall back.
 * Most cases run the commands in this process (`runInProcess`, the routing main runs); the first
 * case of each table and the cache a later process reads run the built CLI.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { runCli, runInProcess } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import {
  type RecordedRequest,
  type ScriptedServer,
  type ScriptedServerOptions,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";
import { FLAVOURS, type Flavour, flavourRoutes, SOURCE } from "../helpers/window-servers.js";

const WINDOW = 2048;
const TURNS = 30;

const scene = useScene({ home: "scoot-home-", project: "scoot-proj-" });

beforeEach(() => {
  const lines = Array.from(
    { length: 800 },
    (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog ${i}`,
  );
  fs.writeFileSync(path.join(scene.project, "big.txt"), `${lines.join("\n")}\n`);
});

async function serve(
  routes: ScriptedServerOptions["routes"],
  script: ScriptItem[] = [],
): Promise<ScriptedServer> {
  scene.server = await startScriptedServer(script, { routes });
  return scene.server;
}

/** `binary`: the built CLI in a process of its own, else the same command in this process. */
function scoot(args: string[], env: Record<string, string> = {}, binary = false) {
  return (binary ? runCli : runInProcess)(args, {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server!.url, ...env },
  });
}

/** The scripted server's own token count (about four bytes per token of the request). */
const promptTokens = (r: RecordedRequest) => Math.max(1, Math.ceil(Buffer.byteLength(r.raw) / 4));

function contextLine(stdout: string): string {
  const line = stdout.split("\n").find((l) => /^\w+\s+context\s/.test(l));
  if (!line) throw new Error(`no context line in:\n${stdout}`);
  return line;
}

describe("doctor names the window and where it came from", () => {
  for (const flavour of FLAVOURS) {
    it(flavour, async () => {
      await serve(flavourRoutes(flavour, WINDOW));
      const r = await scoot(["doctor"], {}, flavour === FLAVOURS[0]);
      const line = contextLine(r.stdout);
      expect(line).toContain(SOURCE[flavour]);
      expect(line).toMatch(/history budget \d+ bytes/);
      expect(line).toMatch(/system prompt \d+ bytes/);
      if (flavour === "none") {
        expect(line).toMatch(/^OK\s+context\s+unknown/);
        expect(line).toContain("history budget 80000 bytes (agent.context_budget_bytes)");
      } else {
        expect(line).toMatch(new RegExp(`^WARN\\s+context\\s+${WINDOW} tokens`));
        expect(line).toContain("(set by the window)");
      }
    });
  }

  const fixes: [Flavour, string][] = [
    ["ollama-loaded", "OLLAMA_CONTEXT_LENGTH=8192"],
    ["llamacpp", "-c 8192"],
    ["vllm", "--max-model-len 8192"],
    ["lmstudio", "--context-length 8192"],
  ];
  for (const [flavour, fix] of fixes) {
    it(`${flavour}: the WARN names that server's fix`, async () => {
      await serve(flavourRoutes(flavour, 4096));
      expect(contextLine((await scoot(["doctor"])).stdout)).toContain(fix);
    });
  }

  it("a large window is OK and the byte budget stays in charge", async () => {
    await serve(flavourRoutes("vllm", 32_768));
    const line = contextLine((await scoot(["doctor"])).stdout);
    expect(line).toMatch(/^OK\s+context\s+32768 tokens \(vLLM max_model_len\)/);
    expect(line).toContain("history budget 80000 bytes (agent.context_budget_bytes)");
  });

  it("a window the system prompt cannot fit in is a FAIL with the fix", async () => {
    await serve(flavourRoutes("ollama-loaded", 1024));
    const r = await scoot(["doctor"]);
    expect(r.code).toBe(1);
    const line = contextLine(r.stdout);
    expect(line).toMatch(/^FAIL\s+context\s+1024 tokens \(Ollama loaded\)/);
    expect(line).toContain("OLLAMA_CONTEXT_LENGTH=");
  });

  it("--json carries the same check", async () => {
    await serve(flavourRoutes("llamacpp", WINDOW));
    const j = JSON.parse((await scoot(["doctor", "--json"])).stdout);
    const c = j.checks.find((x: { name: string }) => x.name === "context");
    expect(c).toMatchObject({ status: "WARN" });
    expect(c.detail).toContain("2048 tokens (llama.cpp n_ctx)");
  });
});

describe("a long run fits a 2048-token window", () => {
  const script = (): ScriptItem[] => [
    ...Array.from({ length: TURNS - 1 }, (_, i) => step("file_read", { path: "big.txt" }, `read part ${i}`)),
    step("final", "read it all"),
  ];

  for (const flavour of FLAVOURS.filter((f) => f !== "none")) {
    it(`${flavour}: ${TURNS} turns, every request under the window`, async () => {
      const s = await serve(flavourRoutes(flavour, WINDOW), script());
      const r = await scoot(
        ["-e", "read big.txt again and again", "--json", "--trace"],
        {},
        flavour === "vllm",
      );
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ status: "final", turns: TURNS, answer: "read it all" });
      expect(out.usage.context_window).toBe(WINDOW);
      const sent = s.completions();
      expect(sent).toHaveLength(TURNS);
      const tokens = sent.map(promptTokens);
      const bytes = sent.map((q) => Buffer.byteLength(q.raw));
      // Under the window with the answer's reserve left free, measured as the server counts.
      for (const t of tokens) expect(t).toBeLessThanOrEqual(WINDOW * 0.75);
      for (const b of bytes) expect(b).toBeLessThanOrEqual(WINDOW * 4);
      // The fit had work to do: without it the 8 KB observations would have overflowed.
      expect(r.stderr).toContain("to fit the window (tool limit 8192)");
      expect(r.stderr).toContain("compacting for the window");
      expect(r.stderr.match(/\[trace\] context: window /g)).toHaveLength(1);
      expect(r.stderr).toContain(`window ${WINDOW} tokens (${SOURCE[flavour]}`);
      // What the assertions measured, for the report.
      console.log(
        `${flavour}: max prompt_tokens ${Math.max(...tokens)} of ${WINDOW}, max request ${Math.max(...bytes)} bytes`,
      );
    });
  }

  it("a server whose tokenizer counts twice as many tokens: calibration from its usage keeps every request under", async () => {
    // About 2 bytes per token (dense code, CJK): the 3.5 default alone would overflow a 4096 window.
    const window = 4096;
    const reported: number[] = [];
    const counted =
      (item: ScriptItem): ScriptItem =>
      (req) => {
        const prompt_tokens = Math.ceil(Buffer.byteLength(req.raw) / 2);
        reported.push(prompt_tokens);
        return { ...(item as { reply: object }), usage: { prompt_tokens } };
      };
    const s = await serve(flavourRoutes("llamacpp", window), script().map(counted));
    const r = await scoot(["-e", "read big.txt again and again", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(s.completions()).toHaveLength(TURNS);
    expect(reported).toHaveLength(TURNS);
    // The first request is sent before any count is known; from then on the reserve holds.
    for (const t of reported) expect(t).toBeLessThanOrEqual(window);
    for (const t of reported.slice(1)) expect(t).toBeLessThanOrEqual(window * 0.75);
    console.log(`2 bytes/token: max prompt_tokens ${Math.max(...reported)} of ${window}`);
  });

  it("without a window the same run overflows it: the test has teeth", async () => {
    const s = await serve(flavourRoutes("none", WINDOW), script());
    const r = await scoot(["-e", "read big.txt again and again", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).usage.context_window).toBeNull();
    expect(Math.max(...s.completions().map(promptTokens))).toBeGreaterThan(WINDOW);
  });
});

/** Mean share of each request's bytes that repeat the previous request byte for byte from the start. */
function prefixReuse(sent: RecordedRequest[]): number {
  let sum = 0;
  for (let i = 1; i < sent.length; i++) {
    const prev = Buffer.from(sent[i - 1]!.raw);
    const cur = Buffer.from(sent[i]!.raw);
    let n = 0;
    while (n < prev.length && n < cur.length && prev[n] === cur[n]) n++;
    sum += n / cur.length;
  }
  return sum / (sent.length - 1);
}

describe("compaction driven by the window keeps a stable prefix (hysteresis)", () => {
  it("compacts well under the limit, so most requests extend the previous one", async () => {
    const medium = Array.from({ length: 30 }, (_, i) => `entry ${i}: ${"data ".repeat(8)}`).join("\n");
    fs.writeFileSync(path.join(scene.project, "medium.txt"), medium);
    const turns = 40;
    const script = () => [
      ...Array.from({ length: turns - 1 }, (_, i) => step("file_read", { path: "medium.txt" }, `pass ${i}`)),
      step("final", "done"),
    ];
    const windowed = await serve(flavourRoutes("vllm", 8192), script());
    const r = await scoot(["-e", "read medium.txt forty times", "--trace"], { SCOOT_AGENT_MAX_TURNS: "50" });
    expect(r.code, r.stderr).toBe(0);
    const compactions = (r.stderr.match(/context: compacting for the window/g) ?? []).length;
    const windowShare = prefixReuse(windowed.completions());
    const budget = Number(/history budget (\d+) bytes \(set by the window\)/.exec(r.stderr)?.[1]);
    await windowed.close();

    // The same budget as a plain byte budget takes the same hysteresis (src/agent/hysteresis.ts,
    // test/e2e/prefix-reuse.test.ts): both compact rarely and keep most of each prefix.
    const plain = await serve(flavourRoutes("none", 0), script());
    const p = await scoot(["-e", "read medium.txt forty times", "--trace"], {
      SCOOT_AGENT_CONTEXT_BUDGET_BYTES: String(budget),
      SCOOT_AGENT_MAX_TURNS: "50",
    });
    expect(p.code, p.stderr).toBe(0);
    const plainCompactions = (p.stderr.match(/\[trace\] compacted /g) ?? []).length;
    const plainShare = prefixReuse(plain.completions());
    console.log(
      `prefix reuse: window-driven ${(windowShare * 100).toFixed(1)}% (${compactions} compactions), byte budget ${(plainShare * 100).toFixed(1)}% (${plainCompactions} compactions)`,
    );
    expect(compactions).toBeGreaterThan(0);
    // Compacting to the limit would compact on nearly every turn once the budget binds (about
    // 30 of 40 here, reuse about 35%); halving it compacts about 5 times (reuse about 79%).
    expect(compactions).toBeLessThan(turns / 4);
    expect(plainCompactions).toBeLessThan(turns / 4);
    expect(windowShare).toBeGreaterThan(0.7);
    expect(plainShare).toBeGreaterThan(0.7);
  });
});

describe("a system prompt that cannot fit", () => {
  it("stops before any model call with one line naming the window, the size and the fix; exit 1", async () => {
    const s = await serve(flavourRoutes("ollama-loaded", 1024), [step("final", "never")]);
    const r = await scoot(["-e", "hello"]);
    expect(r.code).toBe(1);
    expect(s.completions()).toHaveLength(0);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("1024 tokens (Ollama loaded)");
    expect(lines[0]).toMatch(/need about \d+ tokens/);
    expect(lines[0]).toContain("OLLAMA_CONTEXT_LENGTH=");
    expect(lines[0]).toContain("backend.context_window");
  });

  it("a configured window too small says so with the same line", async () => {
    const s = await serve(flavourRoutes("none", 0), [step("final", "never")]);
    const r = await scoot(["-e", "hello"], { SCOOT_BACKEND_CONTEXT_WINDOW: "600" });
    expect(r.code).toBe(1);
    expect(s.completions()).toHaveLength(0);
    expect(r.stderr).toContain("600 tokens (configured)");
  });
});

describe("backend.context_window overrides discovery", () => {
  it("doctor and the run use the configured window; the discovery endpoints are not asked", async () => {
    const s = await serve(flavourRoutes("llamacpp", WINDOW), [step("final", "ok")]);
    const env = { SCOOT_BACKEND_CONTEXT_WINDOW: "65536" };
    const d = await scoot(["doctor"], env);
    expect(contextLine(d.stdout)).toMatch(/^OK\s+context\s+65536 tokens \(configured\)/);
    const r = await scoot(["-e", "hi", "--json"], env);
    expect(JSON.parse(r.stdout).usage.context_window).toBe(65_536);
    expect(s.requests.filter((q) => q.path === "/props")).toHaveLength(0);
  });
});

describe("discovery that hangs or answers garbage", () => {
  const cases: [string, ScriptedServerOptions["routes"], RegExp][] = [
    [
      "hangs",
      { "GET /props": () => ({ hang: true }) },
      /discovery: GET http:\/\/127\.0\.0\.1:\d+\/props: no answer within 1500 ms; falling back/,
    ],
    [
      "answers garbage",
      { "GET /api/ps": () => ({ body: "<html>oops" }) },
      /discovery: GET http:\/\/127\.0\.0\.1:\d+\/api\/ps: answered something that is not JSON; falling back/,
    ],
  ];
  for (const [name, routes, line] of cases) {
    it(`${name}: the run falls back to the byte budget with a trace line`, async () => {
      await serve(routes, [step("final", "fine")]);
      const r = await scoot(["-e", "hi", "--trace"], {}, name === cases[0]![0]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("fine\n");
      expect(r.stderr).toMatch(line);
      expect(r.stderr).toContain("[trace] context: window unknown");
      expect(r.stderr).toContain("history budget 80000 bytes (agent.context_budget_bytes)");
    });
  }

  it("the cached answer is reused by the next run: no discovery requests", async () => {
    const s = await serve(flavourRoutes("vllm", 16_384), [step("final", "one"), step("final", "two")]);
    // Processes of their own: the cache is the file the first leaves for the next.
    await scoot(["-e", "first"], {}, true);
    const before = s.requests.filter((q) => q.method === "GET").length;
    const r = await scoot(["-e", "second", "--trace"], {}, true);
    expect(r.stderr).toContain("16384 tokens (vLLM max_model_len) [cached]");
    expect(s.requests.filter((q) => q.method === "GET").length).toBe(before);
  });
});
