/**
 * The tool registry: the single source of truth for action names, input shapes,
 * capabilities and the parallel allowlist. The step schema, the system prompt,
 * `policy check` and the agent loop all read this list. Adding a tool is one file
 * and one line here.
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
import { recallTool } from "./recall.js";
import { skillTool } from "./skill.js";
import type { AnyTool } from "./types.js";

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
  finalTool,
];

export const TOOLS_BY_NAME: ReadonlyMap<string, AnyTool> = new Map(TOOLS.map((t) => [t.name, t]));

/** What a run offers: mcp_call only with MCP servers, skill only with skills loaded. */
export function enabledTools(opts: { hasMcp: boolean; hasSkills: boolean }): ReadonlyMap<string, AnyTool> {
  return new Map(
    TOOLS.filter((t) => (t.name !== "mcp_call" || opts.hasMcp) && (t.name !== "skill" || opts.hasSkills)).map(
      (t) => [t.name, t],
    ),
  );
}
