/**
 * Native tool calls in chat replies (OpenAI's `tool_calls`, which Ollama, llama.cpp with
 * `--jinja`, vLLM, LiteLLM and proxies return even when Scoot did not offer tools): read as the
 * step they mean. Scoot still asks for its own JSON step; it reads these because models send
 * them. The first call becomes `{"thought", "action", "action_input"}` — the message's text, if
 * any, as the thought; the call's arguments (JSON text, or an object from Ollama) as the
 * action_input, which the tool's own declaration then reads. Further calls in the same reply
 * are named in a note and not run: one call per turn.
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

/** The calls of a complete `message.tool_calls` array (entries without a function name are skipped). */
export function readToolCalls(v: unknown): NativeCall[] {
  if (!Array.isArray(v)) return [];
  const out: NativeCall[] = [];
  for (const c of v) {
    const fn = isObject(c) && isObject(c.function) ? c.function : undefined;
    if (fn && typeof fn.name === "string" && fn.name !== "")
      out.push({ name: fn.name, arguments: argumentsText(fn.arguments) });
  }
  return out;
}

/**
 * Streamed `delta.tool_calls`: pieces keyed by `index`, the name in the first piece (some
 * servers repeat or split it), the arguments as text pieces to join (or one object).
 */
export function toolCallCollector(): { push(v: unknown): void; calls(): NativeCall[] } {
  const byIndex = new Map<number, { name: string; args: string }>();
  return {
    push(v) {
      if (!Array.isArray(v)) return;
      for (const c of v) {
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
        .filter(([, s]) => s.name !== "")
        .map(([, s]) => ({ name: s.name, arguments: s.args === "" ? "{}" : s.args }));
    },
  };
}

/** The reply text a reply with native calls stands for, and the notes that say how it was read. */
export function stepFromToolCalls(
  calls: readonly NativeCall[],
  content: string,
): { text: string; notes: string[]; dropped: string[] } {
  const first = calls[0]!;
  const notes = [`read the server's native tool call (${first.name}) as the step`];
  if (calls.length > 1) {
    const rest = calls.slice(1).map((c) => c.name);
    notes.push(
      `the reply held ${calls.length} tool calls; only the first ran (not run: ${rest.join(", ")}): one call per turn`,
    );
  }
  return {
    text: JSON.stringify({ thought: content.trim(), action: first.name, action_input: first.arguments }),
    notes,
    dropped: calls.slice(1).map((c) => c.name),
  };
}
