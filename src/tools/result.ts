/** The two ways a tool call ends, as values (see ToolResult in types.ts). */
import type { ToolDetails, ToolResult } from "./types.js";

/** A call that did its work. */
export function done(text: string, details?: ToolDetails): ToolResult {
  return details ? { text, details } : { text };
}

/** A call that did not: an error, a refusal of the tool's own, a stop. */
export function failed(text: string, details?: ToolDetails): ToolResult {
  return details ? { text, failed: true, details } : { text, failed: true };
}

/**
 * What ended a call whose signal fired: the caller aborts it with a TimeoutError for the
 * deadline and with anything else for an interrupt.
 */
export function stoppedBy(signal: AbortSignal): ToolDetails {
  const reason: unknown = signal.reason;
  return { stopped: reason instanceof Error && reason.name === "TimeoutError" ? "deadline" : "interrupted" };
}

/**
 * Every built-in tool now returns a ToolResult, so this passes its argument through; it
 * stays for callers written when a tool could answer in plain text (a failure unmarked).
 */
export function asResult(r: ToolResult | string): ToolResult {
  return typeof r === "string" ? { text: r } : r;
}
