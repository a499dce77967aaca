/**
 * MCP servers an ACP client names in `session/new` / `session/load` (docs/editors.md "Editors (ACP)").
 * They are connected like `[[mcp.servers]]` entries and pass the same validation, gate and
 * audit. Allowlisting stays with the operator: the client supplies how to reach a server, the
 * configuration supplies what may be called. A client server whose name matches a configured
 * entry takes that entry's `allowed_tools` and `policy` (and replaces its transport); any
 * other client server gets an empty allowlist, so every call to it is denied until the
 * operator adds `[[mcp.servers]] name = "..." allowed_tools = [...]`. An editor's project
 * settings can name servers, and a checked-out repository must not grant itself tools.
 */
import type { McpServer } from "@agentclientprotocol/sdk";

type Table = Record<string, unknown>;

export interface MergedServers {
  servers: Table[];
  warnings: string[];
}

function transportTable(s: McpServer): Table {
  if ("type" in s && s.type === "http")
    return {
      transport: "http",
      url: s.url,
      headers: s.headers.map((h) => ({ name: h.name, value: h.value })),
    };
  if ("type" in s && s.type === "sse")
    return {
      transport: "sse",
      url: s.url,
      headers: s.headers.map((h) => ({ name: h.name, value: h.value })),
    };
  const stdio = s as Extract<McpServer, { command: string }>;
  return {
    transport: "stdio",
    command: stdio.command,
    args: [...stdio.args],
    env: stdio.env.map((e) => ({ name: e.name, value: e.value })),
  };
}

export function mergeClientServers(
  configured: readonly Table[],
  client: readonly McpServer[],
): MergedServers {
  const warnings: string[] = [];
  const byName = new Map(configured.map((t) => [t.name, t]));
  const replaced = new Set<unknown>();
  const added: Table[] = [];
  for (const s of client) {
    const own = byName.get(s.name);
    const grant: Table = own
      ? {
          allowed_tools: own.allowed_tools ?? [],
          ...(own.policy !== undefined ? { policy: own.policy } : {}),
        }
      : { allowed_tools: [] };
    if (own) replaced.add(s.name);
    else
      warnings.push(
        `mcp server "${s.name}" from the editor has no [[mcp.servers]] entry: it is connected, but every call is denied until the configuration allows its tools (allowed_tools)`,
      );
    added.push({ name: s.name, ...transportTable(s), ...grant });
  }
  return { servers: [...configured.filter((t) => !replaced.has(t.name)), ...added], warnings };
}
