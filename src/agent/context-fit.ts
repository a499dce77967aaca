/**
 * Fitting the history into the model's real context window (docs/context.md "Context window").
 *
 * The history budget is the smaller of `agent.context_budget_bytes` and what the window allows
 * once room for the answer is reserved, converted from tokens to bytes with a ratio calibrated
 * from the `usage.prompt_tokens` the server reports for the requests Scoot actually sent. Before
 * the first report the ratio is a conservative default.
 *
 * Calibration uses history bytes / prompt tokens of the whole request. The request also holds
 * a fixed part (template, schema), so this ratio is lower than the true one on small requests,
 * and a budget computed from it never overshoots the window when the sampled request fitted.
 */
import type { ContextWindow } from "../backend/context-window.js";
import { describeWindow, windowFix } from "../backend/context-window.js";
import type { Usage } from "../backend/types.js";
import type { Config } from "../config/schema.js";
import { clip } from "../core/clip.js";
import type { Result } from "../core/types.js";
import type { Message } from "../store/session.js";
import { type Compaction, compactHistory, historyBytes, minimumBytes } from "./compact.js";
import { compactWithHysteresis } from "./hysteresis.js";

/** Share of the window left free for the model's answer. */
export const ANSWER_RESERVE = 0.25;
/**
 * Bytes per token before the server has reported any usage. Current tokenizers (Llama 3,
 * Qwen 2.5) give 4–4.5 for English prose and 3.3–3.8 for code and JSON; the first request is
 * mostly the system prompt (prose), so 3.5 leaves a margin there. From the second request on,
 * the server's own count replaces it.
 */
export const DEFAULT_BYTES_PER_TOKEN = 3.5;
/** Calibrated ratios are clamped here: a server that under-reports (cache hits) must not inflate the budget. */
export const MIN_BYTES_PER_TOKEN = 1;
export const MAX_BYTES_PER_TOKEN = 5;
/** A sample this small is mostly template overhead and says little about the ratio. */
const MIN_SAMPLE_TOKENS = 32;
/**
 * A count this close to the window may be of a prompt the server already cut (Ollama keeps the
 * tail and counts only that): such a sample may lower the ratio, never raise it.
 */
const EDGE_SHARE = 0.9;
/** Room one turn needs beyond the system prompt and the goal: a step, a short observation, a summary line. */
export const MIN_TURN_BYTES = 768;
/**
 * Hysteresis: when the window forces a compaction, compact the compactable part (everything
 * but the system prompt and the goal) to this share of its room, so the following turns append
 * to a stable prefix and the server's prompt cache keeps working.
 */
export const COMPACT_TO_SHARE = 0.5;
/** An observation is never clipped below this, however tight the window. */
export const MIN_OBSERVATION_BYTES = 256;
/** The observation's wrapper (`Observation from <action>:` and the untrusted-data markers). */
const OBSERVATION_WRAP_BYTES = 128;
/** What a `drop` summary and a message's own overhead cost (compact.ts MESSAGE_OVERHEAD is 32). */
const DROP_SUMMARY_BYTES = 192;
const MESSAGE_OVERHEAD = 32;

export type FitEventSink = (message: string) => void;

export interface BudgetInputs {
  window: ContextWindow;
  configuredBytes: number;
  bytesPerToken: number;
  /** Bytes of the step schema sent with every request. */
  schemaBytes: number;
}

export interface Budget {
  /** The effective history budget in bytes; 0 = no compaction (no window known, byte budget 0). */
  bytes: number;
  /** The window, not agent.context_budget_bytes, sets the budget. */
  windowDriven: boolean;
  /** What the window alone allows for the history (undefined when the window is unknown). */
  windowBytes?: number;
}

export function computeBudget(b: BudgetInputs): Budget {
  if (b.window.tokens === undefined) return { bytes: b.configuredBytes, windowDriven: false };
  const windowBytes = Math.max(
    0,
    Math.floor(b.window.tokens * (1 - ANSWER_RESERVE) * b.bytesPerToken) - b.schemaBytes,
  );
  // agent.context_budget_bytes = 0 switches the byte budget off; a known window still binds.
  if (b.configuredBytes > 0 && b.configuredBytes <= windowBytes)
    return { bytes: b.configuredBytes, windowDriven: false, windowBytes };
  return { bytes: windowBytes, windowDriven: true, windowBytes };
}

/** Tokens a window needs so that `bytes` of history fit after the answer reserve. */
function tokensFor(bytes: number, bytesPerToken: number): number {
  return Math.ceil(bytes / bytesPerToken / (1 - ANSWER_RESERVE));
}

/** The one-line error when even the system prompt, the schema and the goal do not fit. */
export function doesNotFitMessage(
  window: ContextWindow,
  pinnedBytes: number,
  schemaBytes: number,
  bytesPerToken: number,
): string {
  const need = tokensFor(pinnedBytes + schemaBytes + MIN_TURN_BYTES, bytesPerToken);
  return `the model's context window is ${describeWindow(window)}, but the system prompt, step schema and goal (${pinnedBytes + schemaBytes} bytes) with room for one turn and the answer need about ${need} tokens; ${windowFix(window.flavour, need)}, or set backend.context_window if the server's window is larger than discovered`;
}

export class ContextFit {
  private bytesPerToken = DEFAULT_BYTES_PER_TOKEN;

  constructor(
    readonly window: ContextWindow,
    private readonly config: Config,
    private readonly schemaBytes: number,
    private readonly say: FitEventSink = () => {},
  ) {}

  ratio(): number {
    return this.bytesPerToken;
  }

  budget(): Budget {
    return computeBudget({
      window: this.window,
      configuredBytes: this.config.agent.context_budget_bytes,
      bytesPerToken: this.bytesPerToken,
      schemaBytes: this.schemaBytes,
    });
  }

  /** After each reply: learn bytes per token from what the server counted for the history it got. */
  calibrate(sent: readonly Message[], usage: Usage | undefined): void {
    if (!usage || this.window.tokens === undefined) return;
    const tokens = usage.prompt_tokens;
    if (!Number.isFinite(tokens) || tokens < MIN_SAMPLE_TOKENS) return;
    const ratio = Math.min(MAX_BYTES_PER_TOKEN, Math.max(MIN_BYTES_PER_TOKEN, historyBytes(sent) / tokens));
    this.bytesPerToken =
      tokens >= this.window.tokens * EDGE_SHARE ? Math.min(this.bytesPerToken, ratio) : ratio;
  }

  /**
   * Before each backend call: compact when over the budget. Window-driven compaction goes well
   * under the limit (hysteresis) and falls back to dropping older turns when an extractive
   * summary does not fit the window. Fails, before any model call, when the system prompt,
   * schema and goal alone do not fit.
   */
  compact(
    history: readonly Message[],
    pinned: ReadonlySet<number>,
    style: Config["agent"]["compactor"],
  ): Result<Compaction | undefined> {
    const budget = this.budget();
    if (!budget.windowDriven) return compactWithHysteresis(history, pinned, budget.bytes, style);
    const pinnedBytes = historyBytes(history.filter((_, i) => pinned.has(i)));
    if (pinnedBytes + MIN_TURN_BYTES > budget.bytes)
      return {
        ok: false,
        error: doesNotFitMessage(this.window, pinnedBytes, this.schemaBytes, this.bytesPerToken),
      };
    if (historyBytes(history) <= budget.bytes) return { ok: true, value: undefined };
    const target = pinnedBytes + Math.floor((budget.bytes - pinnedBytes) * COMPACT_TO_SHARE);
    const attempts: [number, Config["agent"]["compactor"]][] = [
      [target, style],
      [budget.bytes, style],
      [target, "drop"],
      [budget.bytes, "drop"],
    ];
    for (const [to, how] of attempts) {
      const r = compactHistory(history, pinned, to, how);
      if (!r.ok) continue;
      if (r.value) {
        const dropped = how !== style ? ` (an ${style} summary did not fit: dropped instead)` : "";
        this.say(
          `compacting for the window: ${r.value.beforeBytes} → ${r.value.afterBytes} bytes, budget ${budget.bytes} bytes${dropped}`,
        );
      }
      return r;
    }
    // What the smallest compaction still holds, so the size asked for is the size needed.
    const minimum = minimumBytes(history, pinned);
    return {
      ok: false,
      error: `the context window ${describeWindow(this.window)} leaves ${budget.bytes} bytes for the history, and the system prompt, the goal and the latest step need at least ${minimum} bytes; ${windowFix(this.window.flavour, tokensFor(minimum + this.schemaBytes, this.bytesPerToken))}, or set backend.context_window`,
    };
  }

  /**
   * Clips a tool's result to its own clip size, or to less when the window leaves less room
   * beside what every request keeps (system prompt, goal, the step just taken), and says so.
   */
  clipObservation(
    raw: string,
    history: readonly Message[],
    pinned: ReadonlySet<number>,
    action: string,
    toolClip: number,
  ): string {
    const limit = this.observationLimit(history, pinned, toolClip);
    const rawBytes = Buffer.byteLength(raw);
    if (limit < toolClip && rawBytes > limit)
      this.say(
        `${action} observation of ${rawBytes} bytes clipped to ${limit} to fit the window (tool limit ${toolClip})`,
      );
    return clip(raw, limit);
  }

  observationLimit(history: readonly Message[], pinned: ReadonlySet<number>, toolClip: number): number {
    const budget = this.budget();
    if (!budget.windowDriven || budget.bytes <= 0) return toolClip;
    const keep = history.filter((_, i) => pinned.has(i) || i === history.length - 1);
    const room =
      budget.bytes - historyBytes(keep) - DROP_SUMMARY_BYTES - OBSERVATION_WRAP_BYTES - MESSAGE_OVERHEAD;
    return Math.min(toolClip, Math.max(MIN_OBSERVATION_BYTES, room));
  }
}
