/**
 * The tool-call formats chat templates teach models, read from the reply text when the server did
 * not turn them into `tool_calls` itself — but only where the reply *is* the call: its text (after
 * white space, thinking or a fence, which the caller has set aside) begins with the format's
 * marker. A call quoted in prose, or after a step, is never read (docs/context.md "Words are not
 * calls"). Each call's arguments stay what was sent (an object, or the raw text between the
 * format's tags), so `call-args.ts` judges them: a text that does not parse is a correction, never
 * a command. Formats, by the template that emits them:
 *
 * - Mistral: `[TOOL_CALLS]name[ARGS]{…}` and `[TOOL_CALLS][{"name", "arguments"}]`
 * - Kimi K2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{…}<|tool_call_end|>`
 * - DeepSeek: `<｜tool▁call▁begin｜>function<｜tool▁sep｜>name` then the JSON (in a json fence);
 *   V3.1: `<｜tool▁call▁begin｜>name<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`
 * - Llama 3.x: `<function=name>{…}</function>`, `<|python_tag|>{"name", "parameters"}` (`;` between calls)
 * - Hermes/Qwen: `<tool_call>{"name", "arguments"}</tool_call>`, one block per call
 * - Qwen3-Coder: `<function=name><parameter=key>value</parameter>…</function>` (in `<tool_call>`)
 * - GLM 4.5: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>`, and `name`
 *   on its own line followed by the JSON arguments
 * - Granite: `<|tool_call|>[{"name", "arguments"}]` and the Python-style `<|tool_call|>name(k="v")`
 * - Phi-4: `functools[{"name", "arguments"}]`
 * - gpt-oss without its channels: `to=functions.name` then the JSON
 * - LFM2: `<|tool_call_start|>[name(k="v")]<|tool_call_end|>`
 * - FunctionGemma: `<start_function_call>call:name{k:<escape>v<escape>}<end_function_call>`
 * - Gemma 4: `<|tool_call>call:name{k:<|"|>v<|"|>}<tool_call|>`; either Gemma's bare `call:name{…}` when the
 *   server stripped the special tokens
 */

import { jsonDefect } from "../core/json-complaint.js";
import type { ReadCall } from "./call-args.js";
import { callsOfJson } from "./call-shapes.js";
import { readPythonCalls } from "./python-call.js";

/** What a format at the start of a reply gave: its calls and where they end, or why not. */
export type VendorRead =
  | { ok: true; format: string; calls: ReadCall[]; end: number }
  | { ok: false; format: string; error: string };

/** `format`: the precise format when the marker is shared (`<tool_call>` holds several). */
type One = { calls: ReadCall[]; end: number; format?: string } | { error: string };

interface Format {
  name: string;
  /** A literal every call of the format holds: prose without it is not searched further. */
  hint: string;
  /** Sticky: the format's marker where a call begins. */
  start: RegExp;
  /** Reads the call(s) at `at`, where `start` matched. */
  one(text: string, at: number): One;
}

function sticky(re: RegExp, text: string, at: number): RegExpExecArray | null {
  const y = new RegExp(re.source, re.flags.includes("y") ? re.flags : `${re.flags}y`);
  y.lastIndex = at;
  return y.exec(text);
}

/** The JSON object or array text at `at` (white space skipped): up to its closing bracket, or to the end. */
export function jsonSpan(text: string, at: number): { raw: string; end: number } | undefined {
  let i = at;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  const open = text[i];
  if (open !== "{" && open !== "[") return undefined;
  let depth = 0;
  let inString = false;
  for (let j = i; j < text.length; j++) {
    const c = text[j]!;
    if (inString) {
      if (c === "\\") j++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if ((c === "}" || c === "]") && --depth === 0) return { raw: text.slice(i, j + 1), end: j + 1 };
  }
  return { raw: text.slice(i), end: text.length };
}

/** A JSON list or object of `{name, arguments}` calls at `at`. */
function jsonCalls(text: string, at: number, what: string): One {
  const span = jsonSpan(text, at);
  if (!span) return { error: `expected the ${what} as JSON` };
  const d = jsonDefect(span.raw);
  if (d) {
    return {
      error: d.cutOff
        ? `the ${what} were cut off: the JSON ends before it closes, near "${d.excerpt}"`
        : `the ${what} are not valid JSON: ${d.what} at ${d.where}, near "${d.excerpt}"`,
    };
  }
  const shaped = callsOfJson(JSON.parse(span.raw));
  if (!shaped) return { error: `the ${what} are not {"name", "arguments"} objects` };
  return { calls: shaped.calls, end: span.end };
}

/** Text up to `close` (exclusive) from `at`, and where reading goes on; to the end when it never comes. */
function upTo(text: string, at: number, close: string): { inner: string; end: number } {
  const i = text.indexOf(close, at);
  return i === -1
    ? { inner: text.slice(at), end: text.length }
    : { inner: text.slice(at, i), end: i + close.length };
}

/** The raw argument text at `at`: a JSON span when one starts there, else the rest up to `close`. */
function argsText(text: string, at: number, close?: string): { raw: string; end: number } {
  const bounded = close ? upTo(text, at, close) : { inner: text.slice(at), end: text.length };
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*(?:```\s*)?$/.exec(bounded.inner);
  return { raw: (fenced ? fenced[1]! : bounded.inner).trim(), end: bounded.end };
}

/** An XML parameter value: JSON when it reads as a number, list, object or literal, else the text. */
function xmlValue(raw: string): unknown {
  const v = raw.replace(/^\n/, "").replace(/\n$/, "");
  try {
    const parsed: unknown = JSON.parse(v.trim());
    return typeof parsed !== "string" ? parsed : v;
  } catch {
    return v;
  }
}

/** `<function=name>…</function>`: Llama's JSON body or Qwen3-Coder's `<parameter=…>` list. */
function functionTag(text: string, at: number): One {
  const m = sticky(/<function=([A-Za-z_][\w.-]*)>/, text, at);
  if (!m) return { error: "expected <function=name>" };
  const body = upTo(text, at + m[0].length, "</function>");
  if (body.inner.includes("<parameter=")) {
    const args: Record<string, unknown> = {};
    for (const p of body.inner.matchAll(
      /<parameter=([\w.-]+)>([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|$)/g,
    )) {
      if (p[1]! in args) return { error: `the parameter "${p[1]}" is given twice` };
      args[p[1]!] = xmlValue(p[2]!);
    }
    return {
      calls: [{ name: m[1]!, arguments: args }],
      end: body.end,
      format: "Qwen3-Coder <function=…><parameter=…>",
    };
  }
  return {
    calls: [{ name: m[1]!, arguments: body.inner.trim() }],
    end: body.end,
    format: "Llama <function=…>",
  };
}

/** GLM's `name<arg_key>k</arg_key><arg_value>v</arg_value>…` or `name\n{json}` inside `<tool_call>`. */
function glm(inner: string): ReadCall | { error: string } | undefined {
  const m = /^\s*([A-Za-z_][\w.-]*)\s*(?=<arg_key>|\n\s*\{|\{)/.exec(inner);
  if (!m) return undefined;
  const rest = inner.slice(m[0].length);
  if (!rest.trimStart().startsWith("<arg_key>")) return { name: m[1]!, arguments: rest.trim() };
  const args: Record<string, unknown> = {};
  for (const p of rest.matchAll(
    /<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)(?:<\/arg_value>|$)/g,
  )) {
    const key = p[1]!.trim();
    if (key in args) return { error: `the argument "${key}" is given twice` };
    args[key] = xmlValue(p[2]!);
  }
  return { name: m[1]!, arguments: args };
}

const toolCallTag: Format["one"] = (text, at) => {
  const { inner, end } = upTo(text, at + "<tool_call>".length, "</tool_call>");
  const body = inner.trim();
  if (body.startsWith("<function=")) {
    const f = functionTag(body, 0);
    return "error" in f ? f : { ...f, end };
  }
  if (body.startsWith("{") || body.startsWith("[")) {
    const j = jsonCalls(body, 0, "call");
    return "error" in j ? j : { calls: j.calls, end, format: '{"name", "arguments"} in <tool_call> tags' };
  }
  const g = glm(body);
  if (!g)
    return {
      error: 'expected {"name", "arguments"}, <function=…> or a name with its arguments inside <tool_call>',
    };
  if ("error" in g) return g;
  const format = typeof g.arguments === "string" ? "GLM name then JSON" : "GLM <arg_key>/<arg_value>";
  return { calls: [g], end, format };
};

/**
 * Gemma's `call:name{key:value,…}`: keys bare, strings between `quote` tokens (taken exactly, with
 * no escapes inside), numbers and true/false/null bare, `{…}` and `[…]` nested.
 */
function gemmaCall(text: string, at: number, quote: string, close: string): One {
  const m = sticky(/\s*call:([A-Za-z_][\w.-]*)\s*/, text, at);
  if (!m) return { error: "expected call:name{…}" };
  let i = at + m[0].length;
  const fail = (why: string): One => ({ error: `${why} at character ${i - at + 1} of the call` });
  const space = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const value = (): unknown => {
    space();
    if (text.startsWith(quote, i)) {
      const endQ = text.indexOf(quote, i + quote.length);
      if (endQ === -1) throw new Error("a string that never closes");
      const s = text.slice(i + quote.length, endQ);
      i = endQ + quote.length;
      return s;
    }
    if (text[i] === '"') {
      // Some Gemma 4 outputs quote strings as JSON does.
      const span = /"(?:[^"\\]|\\.)*"/y;
      span.lastIndex = i;
      const q = span.exec(text);
      if (!q) throw new Error("a string that never closes");
      i += q[0].length;
      return JSON.parse(q[0]);
    }
    if (text[i] === "{") return object();
    if (text[i] === "[") {
      i++;
      const out: unknown[] = [];
      for (;;) {
        space();
        if (text[i] === "]") {
          i++;
          return out;
        }
        out.push(value());
        space();
        if (text[i] === ",") i++;
        else if (text[i] !== "]") throw new Error('expected "," or "]"');
      }
    }
    const lit = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
    lit.lastIndex = i;
    const l = lit.exec(text);
    if (!l) throw new Error(`expected a value (strings go between ${quote} tokens)`);
    i += l[0].length;
    return JSON.parse(l[0]);
  };
  const object = (): Record<string, unknown> => {
    i++;
    const out: Record<string, unknown> = {};
    for (;;) {
      space();
      if (text[i] === "}") {
        i++;
        return out;
      }
      const k = /"?([A-Za-z_][\w.-]*)"?\s*:/y;
      k.lastIndex = i;
      const km = k.exec(text);
      if (!km) throw new Error("expected key:value");
      if (km[1]! in out) throw new Error(`the key "${km[1]}" twice`);
      i += km[0].length;
      out[km[1]!] = value();
      space();
      if (text[i] === ",") i++;
      else if (text[i] !== "}") throw new Error('expected "," or "}"');
    }
  };
  if (text[i] !== "{") return fail("expected { after the name");
  let args: Record<string, unknown>;
  try {
    args = object();
  } catch (e) {
    return i >= text.length ? { error: "the call was cut off before it closes" } : fail((e as Error).message);
  }
  space();
  const end = text.startsWith(close, i) ? i + close.length : i;
  return { calls: [{ name: m[1]!, arguments: args }], end };
}

function pythonCalls(text: string, at: number, close?: string): One {
  const r = readPythonCalls(text, at);
  if (!r.ok) return { error: `${r.error} at character ${r.at - at + 1} of the call` };
  let end = r.end;
  if (close) {
    const after = text.slice(end).match(/^\s*/)![0].length;
    if (text.startsWith(close, end + after)) end += after + close.length;
  }
  return { calls: r.calls, end };
}

const FORMATS: readonly Format[] = [
  {
    name: "Mistral [TOOL_CALLS]…[ARGS]",
    hint: "[TOOL_CALLS]",
    start: /\[TOOL_CALLS\]/,
    one(text, at) {
      const i = at + "[TOOL_CALLS]".length;
      if (/^\s*\[/.test(text.slice(i, i + 40))) {
        const list = jsonCalls(text, i, "[TOOL_CALLS] list");
        return "error" in list ? list : { ...list, format: "Mistral [TOOL_CALLS] list" };
      }
      const m = sticky(/\s*([A-Za-z_][\w.-]*)(?:\[CALL_ID\][^[]*)?\[ARGS\]/, text, i);
      if (!m) return { error: "expected [TOOL_CALLS]name[ARGS]{…} or [TOOL_CALLS][…]" };
      const span = jsonSpan(text, i + m[0].length);
      const raw = span ?? {
        raw: upTo(text, i + m[0].length, "[TOOL_CALLS]").inner.trim(),
        end: i + m[0].length,
      };
      return {
        calls: [{ name: m[1]!, arguments: raw.raw }],
        end: span?.end ?? text.length,
        format: "Mistral [TOOL_CALLS]…[ARGS]",
      };
    },
  },
  {
    name: "Kimi functions.name:N",
    hint: "functions.",
    start:
      /(?:<\|tool_calls_section_begin\|>\s*)?(?:<\|tool_call_begin\|>\s*)?functions\.[A-Za-z_][\w-]*:\d+/,
    one(text, at) {
      const m = sticky(
        /(?:<\|tool_calls_section_begin\|>\s*)?(?:<\|tool_call_begin\|>\s*)?functions\.([A-Za-z_][\w-]*):\d+\s*(?:<\|tool_call_argument_begin\|>)?/,
        text,
        at,
      )!;
      const a = argsText(text, at + m[0].length, "<|tool_call_end|>");
      const tail = sticky(/\s*<\|tool_calls_section_end\|>/, text, a.end);
      return { calls: [{ name: m[1]!, arguments: a.raw }], end: a.end + (tail ? tail[0].length : 0) };
    },
  },
  {
    name: "DeepSeek tool call",
    hint: "tool▁call▁begin",
    start: /(?:<｜tool▁calls▁begin｜>\s*)?<｜tool▁call▁begin｜>/,
    one(text, at) {
      const m = sticky(
        /(?:<｜tool▁calls▁begin｜>\s*)?<｜tool▁call▁begin｜>\s*([\s\S]*?)<｜tool▁sep｜>/,
        text,
        at,
      );
      if (!m) return { error: "expected <｜tool▁sep｜> after <｜tool▁call▁begin｜>" };
      let from = at + m[0].length;
      let name = m[1]!.trim();
      if (name === "function" || name === "") {
        const n = sticky(/\s*([A-Za-z_][\w.-]*)/, text, from);
        if (!n) return { error: "expected the tool's name after <｜tool▁sep｜>" };
        name = n[1]!;
        from += n[0].length;
      }
      const a = argsText(text, from, "<｜tool▁call▁end｜>");
      const tail = sticky(/\s*<｜tool▁calls▁end｜>/, text, a.end);
      return { calls: [{ name, arguments: a.raw }], end: a.end + (tail ? tail[0].length : 0) };
    },
  },
  { name: "<tool_call>", hint: "<tool_call>", start: /<tool_call>/, one: toolCallTag },
  { name: "Llama <function=…>", hint: "<function=", start: /<function=/, one: functionTag },
  {
    name: "Llama <|python_tag|>",
    hint: "<|python_tag|>",
    start: /<\|python_tag\|>/,
    one(text, at) {
      // Llama's parallel calls: JSON objects separated by `;`.
      const calls: ReadCall[] = [];
      let i = at + "<|python_tag|>".length;
      for (;;) {
        const j = jsonCalls(text, i, "call");
        if ("error" in j) return calls.length === 0 ? j : { calls, end: i };
        calls.push(...j.calls);
        const gap = /^[\s;]*(?=\{)/.exec(text.slice(j.end));
        if (!gap) return { calls, end: j.end };
        i = j.end + gap[0].length;
      }
    },
  },
  {
    name: "Granite <|tool_call|>",
    hint: "<|tool_call|>",
    start: /<\|tool_call\|>/,
    one(text, at) {
      const i = at + "<|tool_call|>".length;
      if (/^\s*[[{]/.test(text.slice(i, i + 40))) return jsonCalls(text, i, "call list");
      const py = pythonCalls(text, i);
      return "error" in py ? py : { ...py, format: "Granite Python-style call" };
    },
  },
  {
    name: "Phi functools[…]",
    hint: "functools[",
    start: /functools\[/,
    one: (text, at) => jsonCalls(text, at + "functools".length, "functools list"),
  },
  {
    name: "to=functions.name",
    hint: "to=functions.",
    start: /(?:<\|start\|>)?(?:assistant\s*)?(?:commentary\s*)?to=functions\.[A-Za-z_]/,
    one(text, at) {
      const m = sticky(
        /(?:<\|start\|>)?(?:assistant\s*)?(?:commentary\s*)?to=functions\.([A-Za-z_][\w-]*)[^{[]*/,
        text,
        at,
      )!;
      const span = jsonSpan(text, at + m[0].length);
      if (!span) return { error: "expected the JSON arguments after to=functions.name" };
      return { calls: [{ name: m[1]!, arguments: span.raw }], end: span.end };
    },
  },
  {
    name: "LFM2 <|tool_call_start|>",
    hint: "<|tool_call_start|>",
    start: /<\|tool_call_start\|>/,
    one(text, at) {
      const i = at + "<|tool_call_start|>".length;
      // LFM2 writes JSON calls instead when its system prompt asks for them.
      if (!/^\s*\[\s*\{/.test(text.slice(i, i + 40))) return pythonCalls(text, i, "<|tool_call_end|>");
      const j = jsonCalls(text, i, "call list");
      if ("error" in j) return j;
      const close = sticky(/\s*<\|tool_call_end\|>/, text, j.end);
      return { ...j, end: j.end + (close ? close[0].length : 0) };
    },
  },
  {
    name: "FunctionGemma <start_function_call>",
    hint: "<start_function_call>",
    start: /<start_function_call>/,
    one: (text, at) =>
      gemmaCall(text, at + "<start_function_call>".length, "<escape>", "<end_function_call>"),
  },
  {
    // A server that strips special tokens (vLLM's default) leaves FunctionGemma's bare call.
    name: "Gemma call:name{…}",
    hint: "call:",
    start: /call:[A-Za-z_][\w.-]*\s*\{/,
    one: (text, at) => gemmaCall(text, at, text.includes('<|"|>') ? '<|"|>' : "<escape>", ""),
  },
  {
    name: "Gemma 4 <|tool_call>",
    hint: "<|tool_call>",
    start: /<\|tool_call>/,
    one: (text, at) => gemmaCall(text, at + "<|tool_call>".length, '<|"|>', "<tool_call|>"),
  },
];

/** What may stand between two calls of one reply: white space and a `;` or `,`. */
const BETWEEN = /[\s;,]*/y;

/**
 * The calls of the format whose marker begins `text` (already without leading white space,
 * thinking or fence), consecutive calls of the same format included; undefined when no format's
 * marker is at the start.
 */
export function readVendorCalls(text: string): VendorRead | undefined {
  const format = FORMATS.find((f) => sticky(f.start, text, 0) !== null);
  if (!format) return undefined;
  const calls: ReadCall[] = [];
  let name = format.name;
  let at = 0;
  for (;;) {
    const one = format.one(text, at);
    if ("error" in one) {
      if (calls.length === 0) return { ok: false, format: format.name, error: one.error };
      break;
    }
    if (calls.length === 0 && one.format) name = one.format;
    calls.push(...one.calls);
    if (one.end <= at) break;
    at = one.end;
    BETWEEN.lastIndex = at;
    const gap = BETWEEN.exec(text)![0].length;
    if (at + gap >= text.length || sticky(format.start, text, at + gap) === null) break;
    at += gap;
  }
  return { ok: true, format: name, calls, end: at };
}

/** Any format's marker anywhere in the text: prose quoting a call (which is never read). */
export function quotedFormat(text: string): string | undefined {
  for (const f of FORMATS) {
    if (text.includes(f.hint) && new RegExp(f.start.source).test(text)) return f.name;
  }
  return undefined;
}

/**
 * GLM's bare form: the whole reply is an action's name on one line, then its JSON arguments.
 * Only for an enabled action's name, so ordinary text followed by JSON never matches.
 */
export function readNameThenJson(text: string, enabled: ReadonlySet<string>): VendorRead | undefined {
  const m = /^([A-Za-z_][\w-]*)[ \t]*\n\s*(?=\{)/.exec(text);
  if (!m || !enabled.has(m[1]!)) return undefined;
  const span = jsonSpan(text, m[0].length)!;
  if (text.slice(span.end).trim() !== "") return undefined;
  return {
    ok: true,
    format: "GLM name then JSON",
    calls: [{ name: m[1]!, arguments: span.raw }],
    end: span.end,
  };
}
