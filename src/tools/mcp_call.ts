/**
 * `mcp_call`: call one tool on a configured MCP server. It is treated as execution with
 * possible external side effects (`exec`): `readonly` denies it, and in every mode the
 * server must be configured and the tool listed in its `allowed_tools` (the gate checks
 * the allowlist, and the MCP pool checks it again before connecting).
 */

import { MCP_SERVER_NAME } from "../config/mcp-servers.js";
import type { Effects, Result } from "../core/types.js";
import { checkArgs } from "../mcp/args-check.js";
import { boundedSchemaShape } from "../mcp/schema-shape.js";
import type { McpService, McpToolInfo } from "../mcp/tools-info.js";
import { CLIP } from "./clip.js";
import { declareInput, optObj, str } from "./declare.js";
import { done, failed, stoppedBy } from "./result.js";
import type { ApprovalScope, Presentation, Tool, ToolContext, ToolResult } from "./types.js";

export interface McpCallInput {
  server: string;
  tool: string;
  args: Record<string, unknown>;
}

export const ERROR_PREFIX = "mcp_call error:";

/**
 * The input, declared once. An unknown field is refused by name: it is most often `arguments`
 * or `params` for `args`, and calling with `{}` instead would run the tool with inputs the
 * model did not mean.
 */
const INPUT = declareInput(
  "mcp_call",
  {
    server: str('"<name>"', { example: '"<name>"' }),
    tool: str('"<tool>"', { example: '"<tool>"' }),
    args: optObj(),
  },
  (input): Result<McpCallInput> => ({
    ok: true,
    value: { server: input.server.trim(), tool: input.tool.trim(), args: input.args ?? {} },
  }),
);

const parse = INPUT.parse;

function effects(input: McpCallInput): Effects {
  return { capability: "exec", mcp: { server: input.server, tool: input.tool } };
}

function present(input: McpCallInput): Presentation {
  return {
    title: `Call ${input.server}: ${input.tool}`,
    keyArgument: `${input.server}/${input.tool}`,
    locations: [],
  };
}

/**
 * "Always" and rules cover one tool on one server (docs/safety.md "Approval scopes"), written
 * `<server>/<tool>`: a server name holds no `/`, so the first one divides them.
 */
const MCP_SCOPE: ApprovalScope<McpCallInput> = {
  of: (input) => `${input.server}/${input.tool}`,
  parseMatch(match) {
    const at = match.indexOf("/");
    const server = match.slice(0, Math.max(at, 0));
    const tool = at === -1 ? "" : match.slice(at + 1);
    if (!MCP_SERVER_NAME.test(server) || tool.trim() === "" || tool !== tool.trim())
      return {
        ok: false,
        error: `"${match}" is not a server and a tool; write "<server>/<tool>" with the names of [[mcp.servers]] and its allowed_tools, e.g. "github/create_issue"`,
      };
    return { ok: true, value: match };
  },
  example: "github/create_issue",
  meaning(scope) {
    const at = scope.indexOf("/");
    return `calls of tool ${scope.slice(at + 1)} on MCP server ${scope.slice(0, at)}`;
  },
};

/**
 * The pool's error value covers both a call that never completed (no server, transport, the
 * deadline) and a result the server marked `isError` (mcp/render.ts): either way the tool's
 * work was not done.
 */
async function run(input: McpCallInput, ctx: ToolContext): Promise<ToolResult> {
  const mcp = ctx.services.mcp as McpService | undefined;
  if (!mcp) return failed(`${ERROR_PREFIX} no MCP servers are configured for this run`);
  try {
    const result = await mcp.call(input.server, input.tool, input.args, ctx.signal);
    if (result.ok) return done(result.value);
    // The run's signal says whether the deadline or an interrupt is what ended the call.
    const text = `${ERROR_PREFIX} ${result.error}`;
    return ctx.signal.aborted ? failed(text, stoppedBy(ctx.signal)) : failed(text);
  } catch (err) {
    // The pool returns errors as values; this is a last guard so a bug stays an observation.
    return failed(`${ERROR_PREFIX} ${err instanceof Error ? err.message : String(err)}`);
  }
}

export const mcpCallTool: Tool<McpCallInput> = {
  name: "mcp_call",
  describe:
    "Call a tool on a configured MCP server. The server must be configured and the tool listed in its allowed_tools; " +
    "the call may have external side effects and runs under the tool deadline.",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.mcp_call,
  // Offered only when MCP servers are configured.
  enabledWhen: (run) => run.hasMcp,
  parse,
  effects,
  present,
  approvalScope: MCP_SCOPE,
  run,
};

/**
 * `mcp_call` whose arguments are checked against each listed tool's whole input schema while
 * the step is validated (docs/mcp.md "MCP client"): a violation is a correction naming its JSON
 * path, and nothing reaches the server. `listed` is read at every step, so a list that changed
 * during the run (catalog.ts) is the one checked against. A tool the list does not know is left
 * to the server.
 */
export function mcpCallWithSchemas(listed: ReadonlyMap<string, readonly McpToolInfo[]>): Tool<McpCallInput> {
  return {
    ...mcpCallTool,
    parse(raw) {
      const parsed = parse(raw);
      if (!parsed.ok) return parsed;
      const info = listed.get(parsed.value.server)?.find((t) => t.name === parsed.value.tool);
      if (!info) return parsed;
      const problems = checkArgs(info, parsed.value.args);
      if (problems.length === 0) return parsed;
      return {
        ok: false,
        error: `${problems.join("; ")} — ${parsed.value.server}/${info.name} takes args ${boundedSchemaShape(info.inputSchema)}`,
      };
    },
  };
}
