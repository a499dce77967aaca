/**
 * The tools each configured server lists, kept true for the whole session (docs/mcp.md "Tool
 * lists that stay true"). The model is told about them in the system prompt and `mcp_call`
 * checks arguments against their schemas, so a stale list means a wrong description and an
 * unchecked (or wrongly refused) call.
 *
 * A server's list is read again:
 * - when it connects (compared with the cached list the run started from);
 * - when it sends `notifications/tools/list_changed`;
 * - before a request, when the list is older than MCP_TOOLS_MAX_AGE_MS (a long REPL or ACP
 *   session, or a cache written by an earlier run).
 * A list that differs replaces the old one (and the cache); the session rebuilds its system
 * prompt from `tools` before the next request (`version` says when). A request waits for a
 * re-list already under way (`settle`), and a call waits for its own server's (`checkCall`),
 * so the next turn describes, and the next call is checked against, the new list.
 */
import type { McpServerConfig } from "../config/schema.js";
import type { Result } from "../core/types.js";
import { checkArgs } from "./args-check.js";
import { readToolsCache, writeToolsCache } from "./tools-cache.js";
import { type McpToolInfo, normaliseListed } from "./tools-info.js";

/**
 * A list older than this is read again before the next request. Servers that never send
 * list_changed still change (an upgrade, a plugin loaded): ten minutes bounds how long the
 * model can be told about tools that are gone, at the cost of one tools/list per server.
 */
export const MCP_TOOLS_MAX_AGE_MS = 10 * 60_000;

export interface ToolLister {
  listTools(server: string, signal?: AbortSignal): Promise<Result<unknown[]>>;
}

/** Why a list is read again (shown in `--trace`). */
export type StaleReason = "connected" | "list_changed" | "aged";

const REASON_TEXT: Record<StaleReason | "first", string> = {
  first: "first listing",
  connected: "compared on connect",
  list_changed: "notifications/tools/list_changed",
  aged: `older than ${MCP_TOOLS_MAX_AGE_MS / 60_000} min`,
};

export interface McpCatalog {
  /** Server name → its listed tools. Read at every use: an entry is replaced when its list changes. */
  readonly tools: ReadonlyMap<string, readonly McpToolInfo[]>;
  /** Grows by one each time a list changes. */
  version(): number;
  /** The session's start: each server's cached list when recent enough, else listed now. */
  load(): Promise<void>;
  /** The server's list may have changed: read it again (once, however often this is called meanwhile). */
  stale(server: string, why: StaleReason): void;
  /** Before a request: aged lists are read again, and every re-list under way is waited for. */
  settle(signal?: AbortSignal): Promise<void>;
  /**
   * Before a call is sent: waits for the server's re-list under way, then checks the arguments
   * against the tool's current schema. An error text refuses the call.
   */
  checkCall(server: string, tool: string, args: Record<string, unknown>): Promise<string | undefined>;
}

export interface CatalogOptions {
  servers: readonly McpServerConfig[];
  lister: ToolLister;
  stateDir: string;
  say: (message: string) => void;
  maxAgeMs?: number;
  now?: () => number;
}

function sameTools(a: readonly McpToolInfo[], b: readonly McpToolInfo[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** `added x; removed y; changed z` between two lists. */
function difference(before: readonly McpToolInfo[], after: readonly McpToolInfo[]): string {
  const old = new Map(before.map((t) => [t.name, JSON.stringify(t)]));
  const now = new Map(after.map((t) => [t.name, JSON.stringify(t)]));
  const added = [...now.keys()].filter((n) => !old.has(n));
  const removed = [...old.keys()].filter((n) => !now.has(n));
  const changed = [...now.keys()].filter((n) => old.has(n) && old.get(n) !== now.get(n));
  const parts = [
    added.length > 0 ? `added ${added.join(", ")}` : "",
    removed.length > 0 ? `removed ${removed.join(", ")}` : "",
    changed.length > 0 ? `changed ${changed.join(", ")}` : "",
  ].filter((p) => p !== "");
  return parts.join("; ") || "reordered";
}

function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

export function createMcpCatalog(opts: CatalogOptions): McpCatalog {
  const now = opts.now ?? Date.now;
  const maxAge = opts.maxAgeMs ?? MCP_TOOLS_MAX_AGE_MS;
  // Servers with nothing allowed are never described, so never listed.
  const described = new Map(opts.servers.filter((s) => s.allowed_tools.length > 0).map((s) => [s.name, s]));
  const tools = new Map<string, readonly McpToolInfo[]>();
  /** When each server's list was last read, or last tried (a failure is not retried every turn). */
  const checkedAt = new Map<string, number>();
  const pending = new Map<string, Promise<void>>();
  /** A change announced while a re-list was under way: that list may predate it. */
  const again = new Map<string, StaleReason>();
  let version = 0;

  async function relist(server: McpServerConfig, why: StaleReason | "first"): Promise<void> {
    const r = await opts.lister.listTools(server.name);
    const at = now();
    checkedAt.set(server.name, at);
    const before = tools.get(server.name);
    if (!r.ok) {
      const kept = before ? "the model keeps the last list" : "the model sees their names only";
      opts.say(`could not list the tools of ${server.name} (${REASON_TEXT[why]}): ${r.error}; ${kept}`);
      return;
    }
    const listed = normaliseListed(r.value);
    writeToolsCache(opts.stateDir, server, listed, at);
    if (before === undefined) {
      tools.set(server.name, listed);
      version += 1;
      opts.say(`listed ${listed.length} tools of ${server.name} (cached for later runs)`);
      return;
    }
    if (sameTools(before, listed)) {
      opts.say(`tools of ${server.name} listed again (${REASON_TEXT[why]}): unchanged`);
      return;
    }
    tools.set(server.name, listed);
    version += 1;
    opts.say(
      `tools of ${server.name} changed (${REASON_TEXT[why]}): ${difference(before, listed)}; the next request describes the new list`,
    );
  }

  function start(server: McpServerConfig, why: StaleReason | "first"): Promise<void> {
    const name = server.name;
    const run = (async () => {
      let reason: StaleReason | "first" = why;
      for (;;) {
        try {
          await relist(server, reason);
        } catch (err) {
          // The lister returns errors as values; this guard keeps a bug from failing a turn.
          opts.say(
            `could not list the tools of ${name}: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
        const next = again.get(name);
        if (next === undefined) return;
        again.delete(name);
        reason = next;
      }
    })().finally(() => pending.delete(name));
    pending.set(name, run);
    return run;
  }

  function stale(name: string, why: StaleReason): void {
    const server = described.get(name);
    if (!server) return;
    if (pending.has(name)) {
      // A listing under way runs on the fresh connection already; only a change announced
      // meanwhile may be newer than what it reads.
      if (why !== "connected") again.set(name, why);
      return;
    }
    void start(server, why);
  }

  async function load(): Promise<void> {
    for (const server of described.values()) {
      const cached = readToolsCache(opts.stateDir, server);
      if (!cached) {
        void start(server, "first");
        continue;
      }
      tools.set(server.name, cached.tools);
      checkedAt.set(server.name, cached.listedAt);
      const age = Math.max(0, now() - cached.listedAt);
      if (age < maxAge) {
        opts.say(
          `tools of ${server.name} described from the cache (${cached.tools.length} listed ${Math.round(age / 60_000)} min ago); not connecting before the first turn`,
        );
      } else void start(server, "aged");
    }
    await Promise.all(pending.values());
  }

  async function settle(signal?: AbortSignal): Promise<void> {
    const at = now();
    for (const [name, server] of described) {
      const last = checkedAt.get(name);
      if (!pending.has(name) && last !== undefined && at - last >= maxAge) void start(server, "aged");
    }
    if (pending.size === 0) return;
    await Promise.race([Promise.all(pending.values()), untilAborted(signal)]);
  }

  async function checkCall(
    server: string,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<string | undefined> {
    await pending.get(server);
    const info = tools.get(server)?.find((t) => t.name === tool);
    if (!info) return undefined;
    const problems = checkArgs(info, args);
    if (problems.length === 0) return undefined;
    return `the arguments do not fit the input schema ${server} lists for ${tool} now: ${problems.join("; ")}`;
  }

  return { tools, version: () => version, load, stale, settle, checkCall };
}

/** Cached descriptions only, whatever their age (doctor: no server is started to size the prompt). */
export function cachedMcpTools(
  servers: readonly McpServerConfig[],
  stateDir: string,
): Map<string, McpToolInfo[]> {
  const out = new Map<string, McpToolInfo[]>();
  for (const s of servers) {
    const cached = readToolsCache(stateDir, s);
    if (cached) out.set(s.name, cached.tools);
  }
  return out;
}
