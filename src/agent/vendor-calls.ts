/**
 * The tool-call formats chat templates teach models, found in the reply text when the server
 * did not turn them into `tool_calls` itself: each is read as `{name, arguments}`, which the
 * step parser then maps through the tool's own input declaration (a JSON text is never run as a
 * command). Only the first call is read; the markers are distinctive, so plain prose never
 * matches. Formats, by the template that emits them:
 *
 * - Mistral: `[TOOL_CALLS]name[ARGS]{…}` and `[TOOL_CALLS][{"name", "arguments"}]`
 * - Kimi K2: `functions.name:0<|tool_call_argument_begin|>{…}`
 * - DeepSeek: `<｜tool▁call▁begin｜>function<｜tool▁sep｜>name` then the JSON (in a json fence)
 * - Llama 3.x: `<function=name>{…}</function>`, `<|python_tag|>{"name", "parameters"}`
 * - Qwen3-Coder: `<function=name><parameter=key>value</parameter>…</function>`
 * - GLM 4.5: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>`, and
 *   `name` on its own line followed by the JSON arguments
 * - Granite: `<|tool_call|>[{"name", "arguments"}]` and the Python-style `<|tool_call|>name(k="v")`
 * - Phi-4: `functools[{"name", "arguments"}]`
 * - gpt-oss without its channels: `to=functions.name` then the JSON
 */

export interface VendorCall {
  name: string;
  /** The arguments: an object, or a JSON text. */
  arguments: unknown;
  /** Which format it was, for the trace. */
  format: string;
}

type Reader = (text: string) => VendorCall | undefined;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The JSON value at the start of `text` (an object or array), found by brace matching. */
function leadingJson(text: string): unknown {
  const t = text.trimStart();
  const open = t[0];
  if (open !== "{" && open !== "[") return undefined;
  const close = open === "{" ? "}" : "]";
  let depth = 0;
  let inString = false;
  for (let i = 0; i < t.length; i++) {
    const c = t[i]!;
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return parseJson(t.slice(0, i + 1));
  }
  return undefined;
}

/** `{name, arguments | parameters}` (first of an array), as most formats carry it. */
function namedCall(v: unknown, format: string): VendorCall | undefined {
  const first = Array.isArray(v) ? v[0] : v;
  if (!isObject(first) || typeof first.name !== "string") return undefined;
  const args = first.arguments ?? first.parameters ?? {};
  return { name: first.name, arguments: args, format };
}

/** An XML parameter value: JSON when it reads as JSON (a number, a list), else the text. */
function xmlValue(raw: string): unknown {
  const v = raw.replace(/^\n/, "").replace(/\n$/, "");
  const parsed = parseJson(v.trim());
  return parsed !== undefined && typeof parsed !== "string" ? parsed : v;
}

const mistral: Reader = (text) => {
  const at = text.indexOf("[TOOL_CALLS]");
  if (at === -1) return undefined;
  const rest = text.slice(at + "[TOOL_CALLS]".length).trimStart();
  if (rest.startsWith("[")) return namedCall(leadingJson(rest), "Mistral [TOOL_CALLS] list");
  const m = /^([A-Za-z_][\w-]*)(?:\[CALL_ID\][^[]*)?\[ARGS\]/.exec(rest);
  if (!m) return undefined;
  return {
    name: m[1]!,
    arguments: leadingJson(rest.slice(m[0].length)) ?? {},
    format: "Mistral [TOOL_CALLS]…[ARGS]",
  };
};

const kimi: Reader = (text) => {
  const m = /functions\.([A-Za-z_][\w-]*):\d+\s*(?:<\|tool_call_argument_begin\|>)?/.exec(text);
  if (!m) return undefined;
  const args = leadingJson(text.slice(m.index + m[0].length));
  return args === undefined ? undefined : { name: m[1]!, arguments: args, format: "Kimi functions.name:N" };
};

const deepseek: Reader = (text) => {
  const m = /<｜tool▁call▁begin｜>\s*(?:function)?\s*<｜tool▁sep｜>\s*([A-Za-z_][\w-]*)\s*/.exec(text);
  if (!m) return undefined;
  const after = text.slice(m.index + m[0].length).replace(/^```(?:json)?\s*/, "");
  const args = leadingJson(after);
  return args === undefined ? undefined : { name: m[1]!, arguments: args, format: "DeepSeek tool call" };
};

const functionTag: Reader = (text) => {
  const m = /<function=([A-Za-z_][\w-]*)>([\s\S]*?)(?:<\/function>|$)/.exec(text);
  if (!m) return undefined;
  const body = m[2]!;
  if (body.includes("<parameter=")) {
    const args: Record<string, unknown> = {};
    for (const p of body.matchAll(/<parameter=([\w-]+)>([\s\S]*?)<\/parameter>/g))
      args[p[1]!] = xmlValue(p[2]!);
    return { name: m[1]!, arguments: args, format: "Qwen3-Coder <function=…><parameter=…>" };
  }
  const args = leadingJson(body);
  return args === undefined ? undefined : { name: m[1]!, arguments: args, format: "Llama <function=…>" };
};

const pythonTag: Reader = (text) => {
  const at = text.indexOf("<|python_tag|>");
  if (at === -1) return undefined;
  return namedCall(leadingJson(text.slice(at + "<|python_tag|>".length)), "Llama <|python_tag|>");
};

const glmXml: Reader = (text) => {
  const m =
    /<tool_call>\s*([A-Za-z_][\w-]*)\s*((?:<arg_key>[\s\S]*?<\/arg_key>\s*<arg_value>[\s\S]*?<\/arg_value>\s*)+)/.exec(
      text,
    );
  if (!m) return undefined;
  const args: Record<string, unknown> = {};
  for (const p of m[2]!.matchAll(/<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)<\/arg_value>/g))
    args[p[1]!.trim()] = xmlValue(p[2]!);
  return { name: m[1]!, arguments: args, format: "GLM <arg_key>/<arg_value>" };
};

/** `k="v", n=3, flag=true` of a Python-style call. */
function pythonArgs(src: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const re =
    /\s*([A-Za-z_]\w*)\s*=\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|True|False|true|false|None)\s*(,|$)/y;
  let at = 0;
  while (at < src.length) {
    re.lastIndex = at;
    const m = re.exec(src);
    if (!m) return undefined;
    const raw = m[2]!;
    let value: unknown;
    if (raw.startsWith('"')) value = parseJson(raw);
    else if (raw.startsWith("'"))
      value = parseJson(`"${raw.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"')}"`);
    else if (/^(True|true)$/.test(raw)) value = true;
    else if (/^(False|false)$/.test(raw)) value = false;
    else if (raw === "None") value = null;
    else value = Number(raw);
    if (value === undefined) return undefined;
    out[m[1]!] = value;
    at = re.lastIndex;
    if (m[3] === "") break;
  }
  return out;
}

const granite: Reader = (text) => {
  const at = text.indexOf("<|tool_call|>");
  if (at === -1) return undefined;
  const rest = text.slice(at + "<|tool_call|>".length).trim();
  const json = namedCall(leadingJson(rest), "Granite <|tool_call|>");
  if (json) return json;
  const m = /^([A-Za-z_][\w-]*)\(([\s\S]*)\)\s*$/.exec(rest.split("\n")[0] ?? "");
  const args = m ? pythonArgs(m[2]!) : undefined;
  return m && args ? { name: m[1]!, arguments: args, format: "Granite Python-style call" } : undefined;
};

const phi: Reader = (text) => {
  const at = text.indexOf("functools[");
  if (at === -1) return undefined;
  return namedCall(leadingJson(text.slice(at + "functools".length)), "Phi functools[…]");
};

const recipient: Reader = (text) => {
  const m = /\bto=functions\.([A-Za-z_][\w-]*)[^{[]*/.exec(text);
  if (!m) return undefined;
  const args = leadingJson(text.slice(m.index + m[0].length));
  return args === undefined ? undefined : { name: m[1]!, arguments: args, format: "to=functions.name" };
};

const READERS: readonly Reader[] = [
  mistral,
  kimi,
  deepseek,
  functionTag,
  pythonTag,
  glmXml,
  granite,
  phi,
  recipient,
];

/** The first call a vendor format carries in `text`, or undefined when none does. */
export function readVendorCall(text: string): VendorCall | undefined {
  for (const read of READERS) {
    const call = read(text);
    if (call) return call;
  }
  return undefined;
}

/**
 * GLM's bare form: the whole reply is an action's name on one line, then its JSON arguments.
 * Only for an enabled action's name, so ordinary text followed by JSON never matches.
 */
export function readNameThenJson(text: string, enabled: ReadonlySet<string>): VendorCall | undefined {
  const m = /^\s*(?:<tool_call>\s*)?([A-Za-z_][\w-]*)\s*\n\s*(\{[\s\S]*\})\s*(?:<\/tool_call>)?\s*$/.exec(
    text,
  );
  if (!m || !enabled.has(m[1]!)) return undefined;
  const args = parseJson(m[2]!);
  return isObject(args) ? { name: m[1]!, arguments: args, format: "GLM name then JSON" } : undefined;
}
