/**
 * `tools/list` results cached in the state directory, one file per server configuration
 * (docs/mcp.md "MCP servers"): a later run describes the tools to the model without starting or
 * dialling the server before its first turn. The key is a hash of everything that decides
 * which server answers — command, arguments, environment, URL, header names — so changing the
 * configuration lists afresh. Secret values never enter the hash input; the file holds only
 * the tools' names, descriptions and input schemas, and when they were listed: a listing older
 * than MCP_TOOLS_MAX_AGE_MS (catalog.ts) is listed again.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { McpServerConfig } from "../config/schema.js";
import { atomicWriteFile } from "../core/atomic-write.js";
import { readHomeFile } from "../core/safe-open.js";
import { type McpToolInfo, normaliseListed } from "./tools-info.js";

export const MCP_TOOLS_CACHE_DIR = "mcp-tools";
/** A cache file larger than this is not ours (or not sane): ignored and listed afresh. */
export const MCP_TOOLS_CACHE_MAX_BYTES = 2 * 1024 * 1024;
/** 2: the listing time was added; a version 1 file (no time) is listed afresh. */
const CACHE_VERSION = 2;

export interface CachedTools {
  tools: McpToolInfo[];
  /** When the server listed them (ms since the epoch). */
  listedAt: number;
}

/** The cache key of one server configuration. */
export function toolsCacheKey(server: McpServerConfig): string {
  const identity = {
    name: server.name,
    transport: server.transport,
    command: server.command ?? null,
    args: server.args,
    env: server.env.map((e) => ({
      name: e.name,
      value_env: e.value_env ?? null,
      // A secret's value is left out; its name and kind are enough to tell configurations apart.
      value: e.secret === true ? null : (e.value ?? null),
    })),
    url: server.url ?? null,
    headers: server.headers.map((h) => ({ name: h.name, value_env: h.value_env ?? null })),
  };
  return createHash("sha256").update(JSON.stringify(identity)).digest("hex").slice(0, 32);
}

export function toolsCachePath(stateDir: string, server: McpServerConfig): string {
  return path.join(stateDir, MCP_TOOLS_CACHE_DIR, `${toolsCacheKey(server)}.json`);
}

/** The cached tools, or undefined (no file, a symlink, too large, not ours): never an error. */
export function readToolsCache(stateDir: string, server: McpServerConfig): CachedTools | undefined {
  const file = toolsCachePath(stateDir, server);
  // No-follow, non-blocking, regular and bounded, checked on the opened descriptor.
  const read = readHomeFile(file, { maxBytes: MCP_TOOLS_CACHE_MAX_BYTES, noFollow: true });
  if (!read.ok) return undefined;
  try {
    const parsed = JSON.parse(read.text) as { version?: unknown; tools?: unknown; listed_at?: unknown };
    if (parsed.version !== CACHE_VERSION || !Array.isArray(parsed.tools)) return undefined;
    const listedAt = parsed.listed_at;
    if (typeof listedAt !== "number" || !Number.isFinite(listedAt)) return undefined;
    return { tools: normaliseListed(parsed.tools), listedAt };
  } catch {
    return undefined;
  }
}

/** Best effort: a state directory that cannot be written only costs the next run a listing. */
export function writeToolsCache(
  stateDir: string,
  server: McpServerConfig,
  tools: McpToolInfo[],
  listedAt: number = Date.now(),
): void {
  const file = toolsCachePath(stateDir, server);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const text = JSON.stringify({ version: CACHE_VERSION, server: server.name, listed_at: listedAt, tools });
    if (Buffer.byteLength(text) > MCP_TOOLS_CACHE_MAX_BYTES) return;
    atomicWriteFile(file, text, { mode: 0o600 });
  } catch {
    // Not cached; listed again next time.
  }
}
