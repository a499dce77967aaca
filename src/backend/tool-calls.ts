/**
 * Native tool calls in chat replies (OpenAI's `tool_calls`, which Ollama, llama.cpp with
 * `--jinja`, vLLM, LiteLLM and proxies return even when Scoot did not offer tools): read as the
 * step they mean. Scoot still asks for its own JSON step; it reads these because models send
 * them. The calls go to the step reader as they came (agent/step.ts, `ReplyContext.calls`): the
 * first is the step, with the message's text as its thought and its arguments (JSON text, or an
 * object from Ollama) read strictly — a text that does not parse is corrected, never run.
 * Further calls in the same reply are named as not run: one call per turn.
 */

export interface NativeCall {
  name: string;
  /** The arguments as JSON text (an object is serialised). */
  arguments: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function argumentsText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === undefined || v === null) return "{}";
  return JSON.stringify(v);
}

/** One entry or a list of them: TGI up to 3.1 sent `tool_calls` as a single object. */
function asList(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  return isObject(v) ? [v] : [];
}

/** End-of-turn tokens TGI's grammar left after the arguments' JSON (`…}}<|eot_id|>`). */
const TRAILING_END_TOKENS = /(?:\s*(?:<\|eot_id\|>|<\|im_end\|>|<\|eom_id\|>|<\/s>|<\|endoftext\|>))+\s*$/;

/**
 * TGI's grammar-constrained call (no name; the arguments `{"function": {"_name": "grep", …}}`
 * then an end token): the name and the arguments it holds. Anything else stays as it came.
 */
function unwrapNamelessCall(call: NativeCall): NativeCall {
  if (call.name !== "") return call;
  const text = call.arguments.replace(TRAILING_END_TOKENS, "");
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return call;
  }
  if (!isObject(v) || Object.keys(v).length !== 1 || !isObject(v.function)) return call;
  const { _name: name, ...args } = v.function;
  return typeof name === "string" && name !== "" ? { name, arguments: JSON.stringify(args) } : call;
}

/** The calls of a complete `message.tool_calls` array (entries without a function name are skipped). */
export function readToolCalls(v: unknown): NativeCall[] {
  const out: NativeCall[] = [];
  for (const c of asList(v)) {
    const fn = isObject(c) && isObject(c.function) ? c.function : undefined;
    if (!fn) continue;
    const call = unwrapNamelessCall({
      name: typeof fn.name === "string" ? fn.name : "",
      arguments: argumentsText(fn.arguments),
    });
    if (call.name !== "") out.push(call);
  }
  return out;
}

/**
 * Streamed `delta.tool_calls`: pieces keyed by `index`, the name in the first piece (some
 * servers repeat or split it), the arguments as text pieces to join (or one object). TGI up to
 * 3.1 sent each piece as an object, not a list, with the name inside the arguments.
 */
export function toolCallCollector(): { push(v: unknown): void; calls(): NativeCall[] } {
  const byIndex = new Map<number, { name: string; args: string }>();
  return {
    push(v) {
      for (const c of asList(v)) {
        if (!isObject(c)) continue;
        const index = typeof c.index === "number" ? c.index : byIndex.size;
        const slot = byIndex.get(index) ?? { name: "", args: "" };
        const fn = isObject(c.function) ? c.function : {};
        if (typeof fn.name === "string" && !slot.name.endsWith(fn.name)) slot.name += fn.name;
        if (typeof fn.arguments === "string") slot.args += fn.arguments;
        else if (isObject(fn.arguments)) slot.args = JSON.stringify(fn.arguments);
        byIndex.set(index, slot);
      }
    },
    calls() {
      return [...byIndex.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([, s]) => unwrapNamelessCall({ name: s.name, arguments: s.args === "" ? "{}" : s.args }))
        .filter((c) => c.name !== "");
    },
  };
}
