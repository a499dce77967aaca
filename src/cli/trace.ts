/**
 * `--trace`: progress on stderr. Markers come *before* each blocking step (`thinking`
 * before a backend call, `running: <action>` before a tool) so a stalled run shows where.
 */
import { type AgentEvent, denialReason } from "../agent/events.js";
import type { RunResult } from "../agent/loop.js";
import { clip } from "../core/clip.js";
import { redact } from "../core/redact.js";

const TRACE_INPUT_MAX = 300;
/**
 * The project instructions line names every AGENTS.md read, clipped, left out or refused, by
 * absolute path: it is bounded by the files of one repository, not by model output.
 */
const TRACE_PROJECT_MAX = 4000;

function one(text: string, max = TRACE_INPUT_MAX): string {
  return clip(redact(text), max).replace(/\s*\n\s*/g, " ⏎ ");
}

export function traceLine(e: AgentEvent): string | undefined {
  switch (e.type) {
    case "run":
      return `[trace] run ${e.runId} in session ${e.sessionId}: ${one(e.goal)}`;
    case "thinking":
      return `[trace] turn ${e.turn}: thinking`;
    case "reply":
      return `[trace] reply in ${e.latencyMs} ms${e.usage ? ` (${e.usage.total_tokens} tokens)` : ""}`;
    case "step":
      return `[trace] thought: ${one(e.thought)}\n[trace] action: ${e.call ? `${e.call.action} ${one(e.call.raw)}` : `${e.action} ${one(e.input)}`}`;
    case "step_note":
      return `[trace] step: ${one(e.note)}`;
    case "malformed":
      return `[trace] invalid step (${e.consecutive} in a row): ${one(e.error)}`;
    case "deny":
      return `[trace] denied: ${e.call.action}: ${one(denialReason(e.call))}`;
    case "refused":
      return `[trace] refused: ${e.call.action}: ${one(e.call.approval?.reason ?? "by the user")}`;
    case "running":
      return `[trace] running: ${e.call.action}`;
    case "observation":
      return `[trace] observation: ${e.bytes} bytes${e.clippedTo < e.bytes ? ` (clipped to ${e.clippedTo})` : ""}`;
    case "compacted":
      return `[trace] compacted ${e.removed} messages: ${e.beforeBytes} → ${e.afterBytes} bytes`;
    case "context":
      return `[trace] context: ${one(e.message)}`;
    case "final":
      return "[trace] final answer";
    case "error":
      return `[trace] error: ${one(e.message)}`;
    case "project":
      return `[trace] project instructions: ${one(e.message, TRACE_PROJECT_MAX)}`;
    case "mcp":
      return `[trace] mcp: ${one(e.message)}`;
    case "sandbox":
      return `[trace] sandbox: ${one(e.message)}`;
    case "backend": {
      const b = e.event;
      if (b.type === "retry")
        return `[trace] backend retry ${b.attempt} in ${b.delayMs} ms: ${one(b.reason)}`;
      if (b.type === "downgrade") return `[trace] structured output ${b.from} → ${b.to} (HTTP ${b.status})`;
      if (b.type === "warning") return `[trace] backend warning: ${one(b.message)}`;
      if (b.type === "stream_off") return `[trace] streaming off for this process: ${one(b.reason)}`;
      return undefined;
    }
  }
}

export function traceSummary(r: RunResult): string {
  return `[trace] done: status=${r.status} turns=${r.turns} tool_calls=${r.toolCalls} denials=${r.denials} refusals=${r.refusals} errors=${r.errors} tokens=${r.usage.total_tokens} (prompt ${r.usage.prompt_tokens}, completion ${r.usage.completion_tokens}) wall=${r.wallMs} ms`;
}
