/**
 * Compaction with hysteresis (docs/context.md "Context budget and the server's cache"). Local servers
 * (llama.cpp, Ollama, vLLM) reuse their KV cache for the unchanged prefix of a request.
 * Compacting to just under the budget would rewrite the summary on nearly every turn once the
 * budget is reached, so each request would share only the system prompt with the one before.
 * Instead, once the history exceeds the budget it is compacted down to about half of it;
 * the following turns append to that stable prefix until the budget is exceeded again.
 */

import type { Result } from "../core/types.js";
import type { Message } from "../store/session.js";
import { type Compaction, compactHistory, historyBytes } from "./compact.js";

/** Compact down to this share of the budget once it is exceeded. */
export const HYSTERESIS_TARGET = 0.5;

export function compactWithHysteresis(
  messages: readonly Message[],
  pinned: ReadonlySet<number>,
  budget: number,
  style: "extractive" | "drop",
): Result<Compaction | undefined> {
  if (budget <= 0 || historyBytes(messages) <= budget) return { ok: true, value: undefined };
  const low = compactHistory(messages, pinned, Math.floor(budget * HYSTERESIS_TARGET), style);
  // When even the minimum does not fit half the budget, fit the budget itself (as before).
  if (low.ok) return low;
  const full = compactHistory(messages, pinned, budget, style);
  if (full.ok || style === "drop") return full;
  // An extractive summary can take up to a few KB: when it leaves no room, the older turns are
  // dropped with a count marker instead, and only a history that cannot fit even so fails.
  return compactHistory(messages, pinned, budget, "drop");
}
