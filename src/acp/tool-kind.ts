/**
 * How a Scoot step looks to an ACP client (README "Editors (ACP)"): the tool call's `kind`
 * comes from the tool's declared effects — the same facts the policy gate decides from — and
 * its `locations` are the paths those effects name, made absolute against the project root.
 */
import path from "node:path";
import type { ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import { TOOLS_BY_NAME } from "../tools/registry.js";
import type { Capability, Effects } from "../tools/types.js";

/** Search tools read, but an editor shows them as searches. */
const SEARCH_TOOLS: ReadonlySet<string> = new Set(["grep", "glob"]);

const KIND_BY_CAPABILITY: Record<Capability, ToolKind> = {
  read: "read",
  write: "edit",
  exec: "execute",
  net_read: "fetch",
  net_write: "fetch",
  native: "other",
};

/** A title shorter than this is shown whole; longer inputs are cut (the raw input is sent too). */
const TITLE_INPUT_MAX_CHARS = 80;

export interface ToolCallView {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
  rawInput: unknown;
}

function effectsOf(action: string, input: string): Effects | undefined {
  const tool = TOOLS_BY_NAME.get(action);
  if (!tool) return undefined;
  const parsed = tool.parse(input);
  if (!parsed.ok) return undefined;
  try {
    return tool.effects(parsed.value);
  } catch {
    return undefined;
  }
}

/** The raw input as JSON when it is JSON (most tools), else the text (bash's command). */
function rawInputOf(input: string): unknown {
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

export function toolCallView(action: string, input: string, cwd: string): ToolCallView {
  const effects = effectsOf(action, input);
  let kind: ToolKind = effects ? KIND_BY_CAPABILITY[effects.capability] : "other";
  if (SEARCH_TOOLS.has(action)) kind = "search";
  const paths = [...(effects?.readPaths ?? []), ...(effects?.writePaths ?? [])];
  const locations = paths.map((p) => ({ path: path.resolve(cwd, p) }));
  const shown = input.length > TITLE_INPUT_MAX_CHARS ? `${input.slice(0, TITLE_INPUT_MAX_CHARS)}…` : input;
  return { title: `${action} ${shown}`.trim(), kind, locations, rawInput: rawInputOf(input) };
}
