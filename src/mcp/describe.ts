/**
 * The allowed tools of each configured server, described for the model (docs/mcp.md "MCP
 * servers"): from the state cache when this configuration was listed before, else from
 * `tools/list` once, before the first turn, within the tool deadline. A server that cannot be
 * listed still works; the model then sees its tools' names only.
 */
import type { McpServerConfig } from "../config/schema.js";
import type { Result } from "../core/types.js";
import { readToolsCache, writeToolsCache } from "./tools-cache.js";
import { type McpToolInfo, normaliseListed } from "./tools-info.js";

export interface ToolLister {
  listTools(server: string): Promise<Result<unknown[]>>;
}

export async function describeMcpTools(
  servers: readonly McpServerConfig[],
  lister: ToolLister,
  stateDir: string,
  say: (message: string) => void,
): Promise<Map<string, McpToolInfo[]>> {
  const out = new Map<string, McpToolInfo[]>();
  await Promise.all(
    servers
      .filter((s) => s.allowed_tools.length > 0)
      .map(async (s) => {
        const cached = readToolsCache(stateDir, s);
        if (cached) {
          out.set(s.name, cached);
          say(
            `tools of ${s.name} described from the cache (${cached.length} listed); not connecting before the first turn`,
          );
          return;
        }
        const r = await lister.listTools(s.name);
        if (!r.ok) {
          say(`could not list the tools of ${s.name}: ${r.error}; the model sees their names only`);
          return;
        }
        const tools = normaliseListed(r.value);
        out.set(s.name, tools);
        writeToolsCache(stateDir, s, tools);
        say(`listed ${tools.length} tools of ${s.name} (cached for later runs)`);
      }),
  );
  return out;
}

/** Cached descriptions only (doctor: no server is started to size the prompt). */
export function cachedMcpTools(
  servers: readonly McpServerConfig[],
  stateDir: string,
): Map<string, McpToolInfo[]> {
  const out = new Map<string, McpToolInfo[]>();
  for (const s of servers) {
    const cached = readToolsCache(stateDir, s);
    if (cached) out.set(s.name, cached);
  }
  return out;
}
