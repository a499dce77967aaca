/**
 * The JSON shapes in which models write a tool call as their message text instead of Scoot's step
 * (docs/context.md "Words are not calls"), each read as `{name, arguments}`:
 *
 * - `{"name", "arguments" | "parameters"}` — Hermes, Qwen, Llama (the round-four dialect)
 * - `{"tool_name", "tool_input"}` — models trained on agent traces
 * - `{"type": "function", "function": {"name", "arguments"}}` — an OpenAI `tool_calls` entry
 * - `{"type": "tool-call", "toolName", "args"}` — the AI SDK's part
 * - `{"tool_calls": […]}` — a whole assistant message of native calls, sent as content
 * - a list of any of these: the first is the call, the rest are told they did not run
 *
 * Only the keys of the shape (and an id or index beside them) may appear: an object with other
 * keys is not read as a call.
 */
import type { ReadCall } from "./call-args.js";

export interface ShapedCalls {
  calls: ReadCall[];
  /** The shape's name, for the trace. */
  format: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Keys an entry may carry beside its shape's own: ids and positions say nothing about the call. */
const BESIDE = new Set(["id", "index", "call_id", "toolCallId", "tool_call_id"]);

function onlyKeys(v: Record<string, unknown>, keys: readonly string[]): boolean {
  return Object.keys(v).every((k) => keys.includes(k) || BESIDE.has(k));
}

function named(v: Record<string, unknown>, name: string, args: readonly string[]): ReadCall | undefined {
  if (typeof v[name] !== "string" || v[name] === "") return undefined;
  const argKey = args.find((k) => k in v);
  if (!onlyKeys(v, [name, ...args]) || Object.keys(v).filter((k) => args.includes(k)).length > 1)
    return undefined;
  return { name: v[name] as string, arguments: argKey === undefined ? undefined : v[argKey] };
}

interface Shape {
  format: string;
  read(v: Record<string, unknown>): ReadCall | undefined;
}

const SHAPES: readonly Shape[] = [
  {
    format: '{"name", "arguments"}',
    // Llama 3.3 adds `"type": "function"` beside the name.
    read: (v) => {
      if (v.type !== undefined && v.type !== "function") return undefined;
      const { type: _type, ...rest } = v;
      return named(rest, "name", ["arguments", "parameters"]);
    },
  },
  {
    format: '{"tool_name", "tool_input"}',
    read: (v) => named(v, "tool_name", ["tool_input"]),
  },
  {
    format: '{"type": "function", "function": {…}}',
    read: (v) => {
      if (!isObject(v.function) || (v.type !== undefined && v.type !== "function")) return undefined;
      if (!onlyKeys(v, ["type", "function"])) return undefined;
      return named(v.function, "name", ["arguments", "parameters"]);
    },
  },
  {
    format: '{"type": "tool-call", "toolName", "args"}',
    read: (v) => {
      if (v.type !== "tool-call" && v.type !== "tool_call") return undefined;
      const { type: _type, ...rest } = v;
      return named(rest, "toolName", ["args", "input"]);
    },
  },
];

/** One entry as a call, with its shape's name. */
function entry(v: unknown): { call: ReadCall; format: string } | undefined {
  if (!isObject(v)) return undefined;
  for (const shape of SHAPES) {
    const call = shape.read(v);
    if (call) return { call, format: shape.format };
  }
  return undefined;
}

/** Every entry of a list as a call, or undefined when one is not. */
function entries(list: readonly unknown[], container: string): ShapedCalls | undefined {
  if (list.length === 0) return undefined;
  const calls: ReadCall[] = [];
  let format = "";
  for (const item of list) {
    const e = entry(item);
    if (!e) return undefined;
    calls.push(e.call);
    format ||= e.format;
  }
  return { calls, format: `${container} of ${format}` };
}

/** The calls a JSON value written as the reply stands for, or undefined when it is not a call shape. */
export function callsOfJson(v: unknown): ShapedCalls | undefined {
  if (Array.isArray(v)) return entries(v, "a list");
  if (!isObject(v)) return undefined;
  if (Array.isArray(v.tool_calls) && onlyKeys(v, ["tool_calls", "role", "content"])) {
    return entries(v.tool_calls, '{"tool_calls": […]}');
  }
  const e = entry(v);
  return e ? { calls: [e.call], format: e.format } : undefined;
}
