/**
 * What the model is told about each allowed MCP tool (docs/mcp.md "MCP client"): its description
 * and the shape of its whole input schema (schema-shape.ts), taken from `tools/list`, within a
 * byte budget per tool and in total. The arguments of a call are checked against the same schema
 * before anything is sent (args-check.ts), so a model that guessed wrong gets a correction naming
 * the JSON path instead of a server error (or a wrong call).
 */

import { clip } from "../core/clip.js";
import { defuseMarkers } from "../core/markers.js";
import { redact } from "../core/redact.js";
import type { Result } from "../core/types.js";
import { boundedSchemaShape } from "./schema-shape.js";

/** One tool's description in the prompt; a longer one is clipped and says so. */
export const MCP_TOOL_DESCRIPTION_MAX_BYTES = 480;
/**
 * One tool's whole line: its name, its argument shape (MCP_TOOL_ARGS_MAX_BYTES) and its
 * description (MCP_TOOL_DESCRIPTION_MAX_BYTES), with room for a long tool name.
 */
export const MCP_TOOL_PROMPT_MAX_BYTES = 1664;
/** All MCP tool lines together; beyond it tools are listed by name only, and the prompt says so. */
export const MCP_TOOLS_PROMPT_MAX_BYTES = 6144;
/** Kept per tool in the cache: descriptions can be pages long; the prompt needs a paragraph. */
export const MCP_CACHED_DESCRIPTION_MAX_BYTES = 4096;
/** Tools kept per server in the cache. */
export const MCP_CACHED_TOOLS_MAX = 256;

export const DESCRIPTION_CLIPPED = "… (description clipped)";

/** What the run attaches as `ctx.services.mcp` (the MCP pool implements it). */
export interface McpService {
  call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Result<string>>;
}

export interface McpToolInfo {
  name: string;
  description: string;
  /** The tool's JSON Schema for its arguments (an object schema; `{}` when none was given). */
  inputSchema: Record<string, unknown>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function clipDescription(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (Buffer.byteLength(flat) <= max) return flat;
  const room = Math.max(0, max - Buffer.byteLength(DESCRIPTION_CLIPPED));
  let cut = flat.slice(0, room);
  while (Buffer.byteLength(cut) > room) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}${DESCRIPTION_CLIPPED}`;
}

/** Schemas nested deeper than this are cut: a listing is the server's text, not ours to recurse without end. */
const MAX_SCHEMA_DEPTH = 32;

/**
 * A server's text on its way to the prompt and the cache: a server may echo its own credential
 * (a header, a secret `env` value) into a description, and may forge an observation marker.
 */
function cleanText(text: string): string {
  return defuseMarkers(redact(text));
}

/** Every string of a schema (keys included) cleaned; other values kept. */
function cleanSchema(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return cleanText(value);
  if (depth >= MAX_SCHEMA_DEPTH || typeof value !== "object" || value === null) {
    return typeof value === "object" && value !== null ? {} : value;
  }
  if (Array.isArray(value)) return value.map((v) => cleanSchema(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[cleanText(k)] = cleanSchema(v, depth + 1);
  return out;
}

/** The `tools` array of a `tools/list` result, bounded and typed; entries without a name are dropped. */
export function normaliseListed(tools: readonly unknown[]): McpToolInfo[] {
  const out: McpToolInfo[] = [];
  for (const t of tools.slice(0, MCP_CACHED_TOOLS_MAX)) {
    if (!isObject(t) || typeof t.name !== "string" || t.name === "") continue;
    // Cleaned here, so both a fresh listing (before the cache is written) and a cache read pass.
    const description = typeof t.description === "string" ? cleanText(t.description) : "";
    const schema = isObject(t.inputSchema) ? cleanSchema(t.inputSchema) : {};
    out.push({
      name: t.name,
      description: clipDescription(description, MCP_CACHED_DESCRIPTION_MAX_BYTES),
      inputSchema: isObject(schema) ? schema : {},
    });
  }
  return out;
}

/**
 * One tool's prompt line within `maxBytes`: the argument shape in full up to its own bound
 * (schema-shape.ts), the description clipped to MCP_TOOL_DESCRIPTION_MAX_BYTES; each says when
 * it was clipped.
 */
export function toolLine(info: McpToolInfo, maxBytes = MCP_TOOL_PROMPT_MAX_BYTES): string {
  const head = `  - ${info.name} args ${boundedSchemaShape(info.inputSchema)}`;
  const desc = info.description.replace(/\s+/g, " ").trim();
  if (desc === "") return clip(head, maxBytes);
  const room = Math.min(MCP_TOOL_DESCRIPTION_MAX_BYTES, maxBytes - Buffer.byteLength(head) - 2);
  if (room < Buffer.byteLength(DESCRIPTION_CLIPPED) + 8) return clip(head, maxBytes);
  return `${head}: ${clipDescription(desc, room)}`;
}

/**
 * The lines for one server's allowed tools, spending from `budget` (bytes left in total). A
 * tool the listing lacks is named with a note; once the budget is spent, tools are named only.
 */
export function serverToolLines(
  allowed: readonly string[],
  listed: readonly McpToolInfo[] | undefined,
  budget: { left: number },
): string[] {
  const byName = new Map((listed ?? []).map((t) => [t.name, t]));
  const lines: string[] = [];
  const unnamed: string[] = [];
  for (const name of allowed) {
    const info = byName.get(name);
    if (!info) {
      if (listed) lines.push(`  - ${name} (not in the server's tools/list)`);
      continue;
    }
    const line = toolLine(info);
    const cost = Buffer.byteLength(line) + 1;
    if (cost > budget.left) {
      unnamed.push(name);
      continue;
    }
    budget.left -= cost;
    lines.push(line);
  }
  if (unnamed.length > 0)
    lines.push(`  - also allowed (descriptions left out: prompt budget): ${unnamed.join(", ")}`);
  return lines;
}
