/**
 * How a Scoot step looks to an ACP client (docs/editors.md "Editors (ACP)"): the tool call's `kind`
 * comes from the tool's declared effects — the same facts the policy gate decides from — its
 * `locations` are the paths those effects name, made absolute against the project root (with
 * the line a read starts at), its title is a short human sentence (`Read src/app.ts`,
 * `Run npm test`), and `rawInput` is always an object: clients of the 0.4.x SDK reject a
 * string, so bash's command travels as `{ "command": … }`.
 */
import path from "node:path";
import type { ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { Capability, Effects } from "../core/types.js";
import { TOOLS_BY_NAME } from "../tools/registry.js";

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

/** A title argument shorter than this is shown whole; longer ones are cut (rawInput has it all). */
const TITLE_ARG_MAX_CHARS = 80;

export interface ToolCallView {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
  rawInput: Record<string, unknown>;
}

type Fields = Record<string, unknown>;

function parsedInput(action: string, input: string): { value: unknown; effects?: Effects } | undefined {
  const tool = TOOLS_BY_NAME.get(action);
  if (!tool) return undefined;
  const parsed = tool.parse(input);
  if (!parsed.ok) return undefined;
  try {
    return { value: parsed.value, effects: tool.effects(parsed.value) };
  } catch {
    return { value: parsed.value };
  }
}

/** The raw input as an object: JSON objects as they are, anything else under a name. */
function rawInputOf(action: string, input: string): Record<string, unknown> {
  // bash takes a command string; other text-input tools (final) use the same shape.
  if (action === "bash") return { command: input };
  try {
    const v = JSON.parse(input) as unknown;
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
    return { input: v };
  } catch {
    return { input };
  }
}

function cut(s: string): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > TITLE_ARG_MAX_CHARS ? `${one.slice(0, TITLE_ARG_MAX_CHARS)}…` : one;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** One verb per tool; an input the tool does not accept falls back to `<action> <input>`. */
const TITLES: Record<string, (i: Fields) => string> = {
  file_read: (i) => `Read ${str(i.path)}`,
  file_write: (i) => `Write ${str(i.path)}`,
  file_edit: (i) => `Edit ${str(i.path)}`,
  outline: (i) => `Outline ${str(i.path)}`,
  grep: (i) => `Search "${cut(str(i.pattern))}" in ${str(i.path)}`,
  glob: (i) => `Find ${str(i.pattern)}${i.root && i.root !== "." ? ` in ${str(i.root)}` : ""}`,
  http_request: (i) => `${str(i.method)} ${str(i.url)}`,
  mcp_call: (i) => `Call ${str(i.server)}: ${str(i.tool)}`,
  recall: (i) => (i.query ? `Recall "${cut(str(i.query))}"` : "Recall the conversation"),
  skill: (i) => `Open skill ${str(i.name)}`,
  parallel: (i) => `Run ${Array.isArray(i.calls) ? i.calls.length : 0} calls together`,
};

function titleOf(action: string, input: string, value: unknown): string {
  if (action === "bash") return `Run ${cut(input)}`;
  const make = TITLES[action];
  if (make && typeof value === "object" && value !== null) return cut(make(value as Fields));
  return cut(`${action} ${input}`);
}

/** The line a read starts at, when the input names one. */
function lineOf(value: unknown): number | undefined {
  const offset = (value as Fields | undefined)?.offset;
  return typeof offset === "number" && offset > 0 ? offset : undefined;
}

export function toolCallView(action: string, input: string, cwd: string): ToolCallView {
  const parsed = parsedInput(action, input);
  const effects = parsed?.effects;
  let kind: ToolKind = effects ? KIND_BY_CAPABILITY[effects.capability] : "other";
  if (SEARCH_TOOLS.has(action)) kind = "search";
  const paths = [...(effects?.readPaths ?? []), ...(effects?.writePaths ?? [])];
  const line = action === "file_read" ? lineOf(parsed?.value) : undefined;
  const locations = paths.map((p) => ({
    path: path.resolve(cwd, p),
    ...(line !== undefined ? { line } : {}),
  }));
  const title = parsed ? titleOf(action, input, parsed.value) : cut(`${action} ${input}`);
  return { title, kind, locations, rawInput: rawInputOf(action, input) };
}
