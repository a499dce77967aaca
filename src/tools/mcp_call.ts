/**
 * `mcp_call`: call one tool on a configured MCP server. It is treated as execution with
 * possible external side effects (`exec`): `readonly` denies it, and in every mode the
 * server must be configured and the tool listed in its `allowed_tools` (the gate checks
 * the allowlist, and the MCP pool checks it again before connecting).
 */
import { CLIP } from "./clip.js";
import type { Effects, Result, Tool, ToolContext } from "./types.js";

/** What the run attaches as `ctx.services.mcp` (the MCP pool implements it). */
export interface McpService {
  call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Result<string>>;
}

export interface McpCallInput {
  server: string;
  tool: string;
  args: Record<string, unknown>;
}

const INPUT_KEYS = new Set(["server", "tool", "args"]);
const SHAPE = '{"server": "<name>", "tool": "<tool>", "args": {...}}';
export const ERROR_PREFIX = "mcp_call error:";

function parse(raw: string): Result<McpCallInput> {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return { ok: false, error: `mcp_call input must be a JSON object: ${SHAPE}` };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return { ok: false, error: `mcp_call input must be a JSON object: ${SHAPE}` };
  }
  const o = v as Record<string, unknown>;
  // An unknown key is most often `arguments` or `params` for `args`: calling with `{}`
  // instead would run the tool with inputs the model did not mean.
  const extra = Object.keys(o).filter((k) => !INPUT_KEYS.has(k));
  if (extra.length > 0) {
    return { ok: false, error: `mcp_call input has unknown key(s): ${extra.join(", ")} (expected ${SHAPE})` };
  }
  if (typeof o.server !== "string" || o.server.trim() === "") {
    return {
      ok: false,
      error: "mcp_call input needs `server`: a non-empty string naming a configured MCP server",
    };
  }
  if (typeof o.tool !== "string" || o.tool.trim() === "") {
    return {
      ok: false,
      error: "mcp_call input needs `tool`: a non-empty string naming a tool of that server",
    };
  }
  let args: Record<string, unknown> = {};
  if (o.args !== undefined && o.args !== null) {
    if (typeof o.args !== "object" || Array.isArray(o.args)) {
      return { ok: false, error: "mcp_call `args` must be a JSON object (the tool's arguments)" };
    }
    args = o.args as Record<string, unknown>;
  }
  return { ok: true, value: { server: o.server.trim(), tool: o.tool.trim(), args } };
}

function effects(input: McpCallInput): Effects {
  return { capability: "exec", mcp: { server: input.server, tool: input.tool } };
}

async function run(input: McpCallInput, ctx: ToolContext): Promise<string> {
  const mcp = ctx.services.mcp as McpService | undefined;
  if (!mcp) return `${ERROR_PREFIX} no MCP servers are configured for this run`;
  try {
    const result = await mcp.call(input.server, input.tool, input.args, ctx.signal);
    return result.ok ? result.value : `${ERROR_PREFIX} ${result.error}`;
  } catch (err) {
    // The pool returns errors as values; this is a last guard so a bug stays an observation.
    return `${ERROR_PREFIX} ${err instanceof Error ? err.message : String(err)}`;
  }
}

export const mcpCallTool: Tool<McpCallInput> = {
  name: "mcp_call",
  describe:
    "Call a tool on a configured MCP server. The server must be configured and the tool listed in its allowed_tools; " +
    "the call may have external side effects and runs under the tool deadline.",
  inputShape: SHAPE,
  clipBytes: CLIP.mcp_call,
  // Offered only when MCP servers are configured.
  enabledWhen: (run) => run.hasMcp,
  parse,
  effects,
  run,
};
