/**
 * A call is read only where the reply *is* that call (docs/context.md "Words are not calls"): the
 * reply body (thinking already set aside) is trimmed of what carries no meaning — white space, a
 * code fence, end-of-turn tokens a server leaked — and a call is looked for at its very start: a
 * vendor format's marker, a JSON call shape or list of them, a Python-style call of an enabled
 * action, or GLM's name-then-JSON. A call quoted after prose, or after a step, is never read;
 * what follows the calls (a fabricated observation, an echo of the arguments) is set aside.
 */

import { duplicateKeyError, firstDuplicateKey } from "../core/json-braces.js";
import type { AnyTool } from "../tools/types.js";
import { type ReadCall, toolOfBareArguments } from "./call-args.js";
import { callsOfJson } from "./call-shapes.js";
import { looksLikePythonCall, readPythonCalls } from "./python-call.js";
import type { Lead } from "./think.js";
import { jsonSpan, readNameThenJson, readVendorCalls } from "./vendor-calls.js";

/** The step keys: an object with any of them is a step, never a call shape. */
const STEP_KEYS = ["thought", "action", "action_input"];

export type CallsRead =
  | {
      ok: true;
      calls: ReadCall[];
      /** The format's name, for the step's note. */
      format: string;
      notes: string[];
    }
  | { ok: false; error: string };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What follows the calls: more of them (not run), an echo of the arguments, or text set aside. */
function afterCalls(rest: string, last: ReadCall): { calls: ReadCall[]; notes: string[] } {
  const calls: ReadCall[] = [];
  const notes: string[] = [];
  let text = rest;
  for (;;) {
    const t = text.replace(/^[\s;,]*/, "");
    if (t === "") return { calls, notes };
    const span = t.startsWith("{") || t.startsWith("[") ? jsonSpan(t, 0) : undefined;
    let value: unknown;
    try {
      value = span ? JSON.parse(span.raw) : undefined;
    } catch {
      value = undefined;
    }
    const shaped = value === undefined ? undefined : callsOfJson(value);
    if (span && shaped) {
      calls.push(...shaped.calls);
      text = t.slice(span.end);
      continue;
    }
    const args = typeof last.arguments === "string" ? safeParse(last.arguments) : last.arguments;
    if (span && value !== undefined && sameJson(value, args) && t.slice(span.end).trim() === "") {
      notes.push("set aside an echo of the call's arguments after it");
      return { calls, notes };
    }
    notes.push("set aside the text after the call (only the call is read)");
    return { calls, notes };
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The call(s) the reply begins with, or undefined when it does not begin with one (it may still
 * be a step, with or without prose around it).
 */
export function readCallAtStart(lead: Lead, enabled: ReadonlyMap<string, AnyTool>): CallsRead | undefined {
  const text = lead.text;
  const vendor = readVendorCalls(text);
  if (vendor) {
    if (!vendor.ok)
      return {
        ok: false,
        error: `the reply begins with a ${vendor.format} call, but ${vendor.error}; nothing was run`,
      };
    const after = text.slice(vendor.end).trim();
    const notes = after === "" ? [] : ["set aside the text after the call (only the call is read)"];
    return { ok: true, calls: vendor.calls, format: vendor.format, notes };
  }
  if (text.startsWith("{") || text.startsWith("[")) return jsonAtStart(text, enabled);
  if (
    (lead.fence === "tool_code" || lead.fence === "python" || looksLikePythonCall(text)) &&
    pythonNamesAction(text, enabled)
  ) {
    const r = readPythonCalls(text);
    if (!r.ok)
      return {
        ok: false,
        error: `the reply begins with a Python-style call, but ${r.error} at character ${r.at + 1}; nothing was run`,
      };
    const notes =
      text.slice(r.end).trim() === "" ? [] : ["set aside the text after the call (only the call is read)"];
    return {
      ok: true,
      calls: r.calls,
      format: lead.fence === "tool_code" ? "Gemma tool_code" : "Python-style call",
      notes,
    };
  }
  const glm = readNameThenJson(text, new Set(enabled.keys()));
  if (glm?.ok) return { ok: true, calls: glm.calls, format: glm.format, notes: [] };
  return undefined;
}

/** A Python-style call is read only when it names an enabled action (prose like `print(x)` is not one). */
function pythonNamesAction(text: string, enabled: ReadonlyMap<string, AnyTool>): boolean {
  const m = /^\s*\[?\s*(?:print\(\s*)?(?:(?:default_api|functions|tools)\.)?([A-Za-z_]\w*)\(/.exec(text);
  return m !== null && enabled.has(m[1]!);
}

function jsonAtStart(text: string, enabled: ReadonlyMap<string, AnyTool>): CallsRead | undefined {
  const span = jsonSpan(text, 0)!;
  const value = safeParse(span.raw);
  // Not JSON: the step reader gives the honest complaint.
  if (value === undefined) return undefined;
  if (isObject(value) && STEP_KEYS.some((k) => k in value)) return undefined;
  const shaped = callsOfJson(value);
  const dup = firstDuplicateKey(span.raw);
  if ((shaped || isObject(value)) && dup)
    return { ok: false, error: duplicateKeyError(span.raw, dup, "the call") };
  if (shaped) {
    const more = afterCalls(text.slice(span.end), shaped.calls.at(-1)!);
    return { ok: true, calls: [...shaped.calls, ...more.calls], format: shaped.format, notes: more.notes };
  }
  // Only the arguments, with no name: the one tool whose fields they are, when exactly one fits.
  if (!isObject(value) || text.slice(span.end).trim() !== "") return undefined;
  const bare = toolOfBareArguments(value, enabled);
  if (bare.tool) {
    return {
      ok: true,
      calls: [{ name: bare.tool.name, arguments: value }],
      format: `bare ${bare.tool.name} arguments`,
      notes: [],
    };
  }
  if (bare.candidates.length > 1) {
    return {
      ok: false,
      error: `the reply is a JSON object of arguments with no action, and they fit ${bare.candidates.join(", ")}; nothing was run: send {"thought", "action", "action_input"} naming the action`,
    };
  }
  return undefined;
}
