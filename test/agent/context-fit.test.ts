/** The history budget a context window allows, its calibration, and fitting to it. */
import { describe, expect, it } from "vitest";
import { compactHistory, historyBytes } from "../../src/agent/compact.js";
import {
  ANSWER_RESERVE,
  ContextFit,
  computeBudget,
  DEFAULT_BYTES_PER_TOKEN,
  MAX_BYTES_PER_TOKEN,
  MIN_OBSERVATION_BYTES,
} from "../../src/agent/context-fit.js";
import type { ContextWindow } from "../../src/backend/context-window.js";
import { type Config, defaultConfig } from "../../src/config/schema.js";
import type { Message } from "../../src/store/session.js";

const win = (tokens?: number, extra: Partial<ContextWindow> = {}): ContextWindow => ({
  ...(tokens === undefined ? {} : { tokens }),
  source: tokens === undefined ? "unknown" : "llama.cpp n_ctx",
  flavour: "llamacpp",
  notes: [],
  cached: false,
  ...extra,
});

function config(budget = 80_000): Config {
  const c = defaultConfig();
  c.agent.context_budget_bytes = budget;
  return c;
}

const SYSTEM = "s".repeat(2000);
function history(turns: number, obsBytes = 600): Message[] {
  const h: Message[] = [
    { role: "system", content: SYSTEM },
    { role: "user", content: "the goal" },
  ];
  for (let i = 0; i < turns; i++) {
    h.push({ role: "assistant", content: `{"thought":"t${i}","action":"bash","action_input":"echo ${i}"}` });
    h.push({ role: "user", content: `Observation from bash:\n${String(i).padEnd(obsBytes, ".")}` });
  }
  return h;
}
const PINNED = new Set([0, 1]);

describe("computeBudget", () => {
  const table: [string, number | undefined, number, number, { bytes: number; windowDriven: boolean }][] = [
    ["unknown window: the byte budget", undefined, 80_000, 3.5, { bytes: 80_000, windowDriven: false }],
    ["unknown window, byte budget off", undefined, 0, 3.5, { bytes: 0, windowDriven: false }],
    [
      "small window binds",
      2048,
      80_000,
      4,
      { bytes: Math.floor(2048 * (1 - ANSWER_RESERVE) * 4) - 300, windowDriven: true },
    ],
    ["large window: the byte budget binds", 131_072, 80_000, 4, { bytes: 80_000, windowDriven: false }],
    [
      "byte budget off: the window still binds",
      8192,
      0,
      3,
      { bytes: 8192 * 0.75 * 3 - 300, windowDriven: true },
    ],
  ];
  for (const [name, tokens, configured, ratio, want] of table) {
    it(name, () => {
      expect(
        computeBudget({
          window: win(tokens),
          configuredBytes: configured,
          bytesPerToken: ratio,
          schemaBytes: 300,
        }),
      ).toMatchObject(want);
    });
  }
});

describe("calibration from usage.prompt_tokens", () => {
  const usage = (prompt_tokens: number) => ({
    prompt_tokens,
    completion_tokens: 10,
    total_tokens: prompt_tokens + 10,
  });

  it("starts from the conservative default and follows the server's count", () => {
    const fit = new ContextFit(win(8192), config(), 300);
    expect(fit.ratio()).toBe(DEFAULT_BYTES_PER_TOKEN);
    const h = history(3);
    fit.calibrate(h, usage(Math.round(historyBytes(h) / 2.5)));
    expect(fit.ratio()).toBeCloseTo(2.5, 2);
    expect(fit.budget().bytes).toBe(Math.floor(8192 * 0.75 * fit.ratio()) - 300);
  });

  it("a count at the window's edge (the server may have cut the prompt) may lower the ratio, never raise it", () => {
    const fit = new ContextFit(win(8192), config(), 300);
    const h = history(60);
    // Would mean about 5 bytes per token: not believed at the edge.
    fit.calibrate(h, usage(8000));
    expect(historyBytes(h) / 8000).toBeGreaterThan(DEFAULT_BYTES_PER_TOKEN);
    expect(fit.ratio()).toBe(DEFAULT_BYTES_PER_TOKEN);
    // Would mean about 2 bytes per token: more tokens than thought, believed.
    const small = history(20);
    fit.calibrate(small, usage(8100));
    expect(fit.ratio()).toBeCloseTo(historyBytes(small) / 8100, 5);
    expect(fit.ratio()).toBeLessThan(DEFAULT_BYTES_PER_TOKEN);
  });

  const ignored: [string, number][] = [
    ["a tiny count", 5],
    ["not a number", Number.NaN],
  ];
  for (const [name, tokens] of ignored) {
    it(`ignores ${name}`, () => {
      const fit = new ContextFit(win(8192), config(), 300);
      fit.calibrate(history(3), usage(tokens));
      expect(fit.ratio()).toBe(DEFAULT_BYTES_PER_TOKEN);
    });
  }

  it("clamps a server that under-reports (cache hits) so the budget cannot balloon", () => {
    const fit = new ContextFit(win(8192), config(), 300);
    fit.calibrate(history(10), usage(40));
    expect(fit.ratio()).toBe(MAX_BYTES_PER_TOKEN);
  });

  it("does nothing without a known window or without usage", () => {
    const fit = new ContextFit(win(undefined), config(), 300);
    fit.calibrate(history(3), usage(100));
    fit.calibrate(history(3), undefined);
    expect(fit.ratio()).toBe(DEFAULT_BYTES_PER_TOKEN);
  });
});

describe("fitting the history", () => {
  it("unknown window: exactly today's compaction by agent.context_budget_bytes", () => {
    const said: string[] = [];
    const fit = new ContextFit(win(undefined), config(4000), 300, (m) => said.push(m));
    const h = history(10);
    const r = fit.compact(h, PINNED, "extractive");
    expect(r).toEqual(compactHistory(h, PINNED, 4000, "extractive"));
    expect(r.ok && r.value && r.value.afterBytes <= 4000).toBe(true);
    expect(said).toEqual([]);
  });

  it("window-driven: compacts to about half of the room, not just under the limit", () => {
    const said: string[] = [];
    const fit = new ContextFit(win(4096), config(), 300, (m) => said.push(m));
    const limit = fit.budget().bytes;
    const h = history(20, 300);
    expect(historyBytes(h)).toBeGreaterThan(limit);
    const r = fit.compact(h, PINNED, "extractive");
    if (!r.ok || !r.value) throw new Error("expected a compaction");
    const pinned = historyBytes(h.slice(0, 2));
    expect(r.value.afterBytes).toBeLessThanOrEqual(pinned + (limit - pinned) / 2);
    expect(said.join("\n")).toContain("compacting for the window");
  });

  it("drops older turns when an extractive summary does not fit the window, and says so", () => {
    const said: string[] = [];
    const fit = new ContextFit(win(1400), config(), 100, (m) => said.push(m));
    // Long distinct thoughts make an extractive summary of ~2 KB: more than the window leaves.
    const h = history(0);
    for (let i = 0; i < 14; i++) {
      h.push({
        role: "assistant",
        content: JSON.stringify({
          thought: `${i} ${"why ".repeat(38)}`,
          action: "bash",
          action_input: `echo ${i}`,
        }),
      });
      h.push({ role: "user", content: `Observation from bash:\n${i}` });
    }
    const r = fit.compact(h, PINNED, "extractive");
    expect(r.ok, r.ok ? "" : r.error).toBe(true);
    if (!r.ok || !r.value) throw new Error("expected a compaction");
    expect(r.value.afterBytes).toBeLessThanOrEqual(fit.budget().bytes);
    expect(said.join("\n")).toContain("dropped instead");
  });

  it("fails with the window, the size needed and the fix when the pinned part cannot fit", () => {
    const fit = new ContextFit(win(600), config(), 300);
    const r = fit.compact(history(0), PINNED, "extractive");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain("600 tokens (llama.cpp n_ctx)");
    expect(r.error).toMatch(/need about \d+ tokens/);
    expect(r.error).toContain("llama-server with -c 8192");
    expect(r.error).toContain("backend.context_window");
  });
});

describe("observation clipping", () => {
  it("the tool's own size when the window leaves room", () => {
    const fit = new ContextFit(win(131_072), config(), 300);
    expect(fit.observationLimit(history(1), PINNED, 8192)).toBe(8192);
  });

  it("what remains beside the system prompt, the goal and the step when the window is tight", () => {
    const said: string[] = [];
    const fit = new ContextFit(win(2048), config(), 300, (m) => said.push(m));
    const h = history(5);
    h.push({ role: "assistant", content: '{"thought":"x","action":"file_read","action_input":"{}"}' });
    const limit = fit.observationLimit(h, PINNED, 8192);
    expect(limit).toBeLessThan(8192);
    expect(limit).toBeGreaterThanOrEqual(MIN_OBSERVATION_BYTES);
    const kept = historyBytes([h[0]!, h[1]!, h.at(-1)!]);
    expect(kept + limit).toBeLessThanOrEqual(fit.budget().bytes);
    const out = fit.clipObservation("z".repeat(20_000), h, PINNED, "file_read", 8192);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(limit);
    expect(said.join("\n")).toContain(`clipped to ${limit} to fit the window (tool limit 8192)`);
  });

  it("never below the minimum, however tight", () => {
    const fit = new ContextFit(win(1500), config(), 300);
    const h = history(0);
    h.push({ role: "assistant", content: "a".repeat(3000) });
    expect(fit.observationLimit(h, PINNED, 8192)).toBe(MIN_OBSERVATION_BYTES);
  });
});
