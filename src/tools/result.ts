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

/** A result from a tool that still answers in plain text (a failure is not marked). */
export function asResult(r: ToolResult | string): ToolResult {
  return typeof r === "string" ? { text: r } : r;
}
