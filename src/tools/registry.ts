/**
 * The tool registry: the list of tools. Everything else about a tool (input validation,
 * declared effects, clip size, whether it may be a `parallel` child, when it is enabled) lives
 * on the tool itself; the step schema, the system prompt, `policy check` and the call
 * pipeline read it from there. Adding a tool is one file and one line here.
 */
import { bashTool } from "./bash.js";
import { fileEditTool } from "./file_edit.js";
import { fileReadTool } from "./file_read.js";
import { fileWriteTool } from "./file_write.js";
import { finalTool } from "./final.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { httpRequestTool } from "./http_request.js";
import { mcpCallTool } from "./mcp_call.js";
import { outlineTool } from "./outline.js";
import { parallelTool } from "./parallel.js";
import { planTool } from "./plan.js";
import { recallTool } from "./recall.js";
import { skillTool } from "./skill.js";
import type { AnyTool, RunFeatures } from "./types.js";

export const TOOLS: readonly AnyTool[] = [
  bashTool,
  fileReadTool,
  fileWriteTool,
  fileEditTool,
  grepTool,
  globTool,
  outlineTool,
  httpRequestTool,
  mcpCallTool,
  skillTool,
  recallTool,
  parallelTool,
  planTool,
  finalTool,
];

export const TOOLS_BY_NAME: ReadonlyMap<string, AnyTool> = new Map(TOOLS.map((t) => [t.name, t]));

/** What a run offers: each tool's own `enabledWhen` (mcp_call needs MCP servers, skill needs skills). */
export function enabledTools(features: RunFeatures): ReadonlyMap<string, AnyTool> {
  return new Map(TOOLS.filter((t) => t.enabledWhen?.(features) ?? true).map((t) => [t.name, t]));
}
