/**
 * A call's arguments, read as the fields they are and never as text (docs/context.md "Words are
 * not calls"). Whatever shape carried the call — a native `tool_calls` entry, `{name, arguments}`,
 * a vendor format — its arguments are a JSON object, or the JSON text of one. A text that does not
 * parse is a correction naming the real defect (cut off, or the parser's first complaint with its
 * line and column); only the repairs that cannot change meaning are made, each named. The object
 * then goes through the tool's own declaration, so bash takes `command`, never the JSON text.
 */
import { clip } from "../core/clip.js";
import { duplicateKeyError, firstDuplicateKey } from "../core/json-braces.js";
import { jsonDefect } from "../core/json-complaint.js";
import type { Result } from "../core/types.js";
import type { AnyTool } from "../tools/types.js";
import { parseRepaired } from "./json-repair.js";

/** One call as a reply carried it, before its tool's declaration reads it. */
export interface ReadCall {
  name: string;
  /** An object, or the JSON text of one; anything else is a correction. */
  arguments: unknown;
}

export type Fields = Record<string, unknown>;

/**
 * Keys models add beside a tool's own that say nothing about what the call does (Qwen3-Coder and
 * models trained on other agents' tools send `description` or `timeout` with a command): dropped
 * and named. Any other undeclared key may change what runs (`cwd`, `sudo`, `append`) and is a
 * correction. Scoot's own deadline bounds every call, so a dropped `timeout` never lengthens one.
 */
export const MEANING_FREE_KEYS: ReadonlySet<string> = new Set([
  "description",
  "explanation",
  "reason",
  "rationale",
  "purpose",
  "summary",
  "title",
  "comment",
  "note",
  "thought",
  "timeout",
  "timeout_ms",
]);

function isObject(v: unknown): v is Fields {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Words for a JSON value's kind in a correction. */
function kind(v: unknown): string {
  if (Array.isArray(v)) return "an array";
  if (v === null) return "null";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

/**
 * The arguments as an object. `cutOff`: the server said it stopped at its token limit (a text that
 * runs past its end is then told as cut off there).
 */
export function readArguments(raw: unknown, cutOff?: string): Result<{ value: Fields; notes: string[] }> {
  if (raw === undefined || raw === null) return { ok: true, value: { value: {}, notes: [] } };
  if (isObject(raw)) return { ok: true, value: { value: raw, notes: [] } };
  if (typeof raw !== "string") {
    return { ok: false, error: `the call's arguments must be a JSON object; got ${kind(raw)}` };
  }
  const text = raw.trim();
  if (text === "") return { ok: true, value: { value: {}, notes: [] } };
  let value: unknown;
  const notes: string[] = [];
  let defect: ReturnType<typeof jsonDefect>;
  try {
    value = JSON.parse(text);
  } catch {
    defect = jsonDefect(text);
  }
  if (defect === undefined) {
    const dup = firstDuplicateKey(text);
    if (dup) return { ok: false, error: duplicateKeyError(text, dup, "the call's arguments") };
  } else {
    const repaired = defect.cutOff ? undefined : parseRepaired(text, { singleQuotes: false });
    if (!repaired) return { ok: false, error: argumentsDefect(text, defect, cutOff) };
    value = repaired.value;
    for (const r of repaired.repairs) notes.push(`repaired the call's arguments: ${r}`);
  }
  if (!isObject(value)) {
    return { ok: false, error: `the call's arguments must be a JSON object; got ${kind(value)}` };
  }
  return { ok: true, value: { value, notes } };
}

function argumentsDefect(
  text: string,
  d: NonNullable<ReturnType<typeof jsonDefect>>,
  cutOff?: string,
): string {
  // "Cut off" only where it is true: the server said it stopped at its limit.
  if (d.cutOff && cutOff) {
    return `the call's arguments were cut off at the token limit (the server reported ${cutOff}): the JSON ends before it closes, near "${d.excerpt}"; nothing was run: send the whole call again, shorter`;
  }
  if (d.cutOff) {
    return `the call's arguments are not valid JSON: ${d.what} at the end of them (${d.where}): the object is not closed, near "${d.excerpt}"; nothing was run: send them as one complete JSON object`;
  }
  const quotes = /^\s*\{\s*'/.test(text) ? " (JSON strings take double quotes, not single)" : "";
  return `the call's arguments are not valid JSON: ${d.what} at ${d.where}, near "${d.excerpt}"${quotes}; nothing was run: send them as one valid JSON object`;
}

/**
 * The arguments a tool declares: keys that mean nothing for the call are dropped and named; any
 * other key the tool does not declare is left for the tool's own correction.
 */
export function withoutMeaningFreeExtras(tool: AnyTool, args: Fields): { value: Fields; notes: string[] } {
  const declared = tool.inputFields;
  if (!declared) return { value: args, notes: [] };
  const extra = Object.keys(args).filter((k) => !declared.includes(k));
  const dropped = extra.filter((k) => MEANING_FREE_KEYS.has(k));
  if (dropped.length === 0) return { value: args, notes: [] };
  const value: Fields = {};
  for (const [k, v] of Object.entries(args)) if (!dropped.includes(k)) value[k] = v;
  const names = dropped.map((k) => JSON.stringify(clip(k, 40))).join(", ");
  return {
    value,
    notes: [
      `dropped ${names} from the ${tool.name} call: ${tool.name} does not take ${dropped.length === 1 ? "it" : "them"}, and ${dropped.length === 1 ? "it does" : "they do"} not change what runs`,
    ],
  };
}

/**
 * The one tool whose declaration the bare object fits (keys all its fields, input valid): a reply
 * that is only `{"pattern": "TODO", "path": "src"}` means grep. Undefined when none or several do.
 */
export function toolOfBareArguments(
  args: Fields,
  enabled: ReadonlyMap<string, AnyTool>,
): { tool?: AnyTool; candidates: string[] } {
  const keys = Object.keys(args);
  if (keys.length === 0) return { candidates: [] };
  const text = JSON.stringify(args);
  const fits: AnyTool[] = [];
  for (const tool of enabled.values()) {
    const declared = tool.inputFields;
    if (!declared || !keys.every((k) => declared.includes(k))) continue;
    if (tool.parse(text).ok) fits.push(tool);
  }
  return fits.length === 1
    ? { tool: fits[0]!, candidates: [fits[0]!.name] }
    : { candidates: fits.map((t) => t.name) };
}
