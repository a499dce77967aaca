/**
 * `parallel {calls:[{action, input}]}`: run 1–4 independent read-only calls concurrently.
 *
 * Parsing checks the shape (count, each call an {action, input}). The call pipeline
 * (`agent/calls.ts`) then validates every child against its own tool (it must be marked
 * `parallelChild` and accept the input) before any runs, and judges each one: a denied
 * child becomes a "denied" entry and the rest still run. Each child runs through the same
 * pipeline (`ctx.call`): audited, under this call's deadline, clipped. Results come back in
 * call order, each under a `[i] action input` header and clipped to its share.
 */
import { CLIP, clip } from "./clip.js";
import { kindOf, parseObject } from "./json-input.js";
import type { Result, Tool } from "./types.js";

export const MAX_PARALLEL_CALLS = 4;
/** Longest child input echoed in its result header. */
const MAX_HEADER_INPUT_CHARS = 160;
/** Smallest share of the observation a child keeps, however many there are. */
const MIN_CHILD_CLIP_BYTES = 256;

export interface ParallelCall {
  action: string;
  /** The child's action_input text (objects re-serialised to JSON). */
  input: string;
}

export interface ParallelInput {
  calls: ParallelCall[];
}

const EXAMPLE = '{"calls": [{"action": "file_read", "input": {"path": "README.md"}}]}';

export const parallelTool: Tool<ParallelInput> = {
  name: "parallel",
  describe: `Run 1-${MAX_PARALLEL_CALLS} independent read-only calls at once; results come back in call order.`,
  inputShape:
    '{"calls": [{"action": "file_read", "input": {"path": "..."}}, {"action": "grep", "input": {...}}]}',
  clipBytes: CLIP.parallel,

  parse(raw: string): Result<ParallelInput> {
    const obj = parseObject("parallel", raw, ["calls"], EXAMPLE);
    if (!obj.ok) return obj;
    const calls = obj.value.calls;
    if (calls === undefined) return fail('"calls" is required');
    if (!Array.isArray(calls)) return fail(`"calls" must be an array, got ${kindOf(calls)}`);
    if (calls.length === 0 || calls.length > MAX_PARALLEL_CALLS) {
      return fail(`"calls" must hold 1 to ${MAX_PARALLEL_CALLS} calls, got ${calls.length}`);
    }
    const parsed: ParallelCall[] = [];
    for (let i = 0; i < calls.length; i++) {
      const call = parseCall(calls[i], i);
      if (!call.ok) return call;
      parsed.push(call.value);
    }
    return { ok: true, value: { calls: parsed } };
  },

  effects() {
    // The fan-out itself only reads; each child is judged on its own effects (children()).
    return { capability: "read" };
  },

  children: (input) => input.calls,

  async run(input, ctx) {
    const budget = Math.floor(CLIP.parallel / input.calls.length);
    const results = await Promise.all(
      input.calls.map(async (call, i) => {
        const header = `[${i + 1}] ${call.action} ${shorten(call.input)}`;
        let body: string;
        try {
          body = await ctx.call(call.action, call.input);
        } catch (e) {
          body = `error: ${e instanceof Error ? e.message : String(e)}`;
        }
        return `${header}\n${clip(body, Math.max(MIN_CHILD_CLIP_BYTES, budget - Buffer.byteLength(header) - 2))}`;
      }),
    );
    return results.join("\n\n");
  },
};

function parseCall(v: unknown, i: number): Result<ParallelCall> {
  const where = `calls[${i}]`;
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    return fail(`${where} must be an object like {"action": "file_read", "input": {...}}, got ${kindOf(v)}`);
  }
  const extra = Object.keys(v).filter((k) => k !== "action" && k !== "input");
  if (extra.length > 0) {
    return fail(
      `${where} has unknown field(s) ${extra.map((k) => JSON.stringify(k)).join(", ")}; allowed: action, input`,
    );
  }
  const { action, input } = v as { action?: unknown; input?: unknown };
  if (typeof action !== "string" || action === "")
    return fail(`${where}."action" must be a non-empty string`);
  let text: string;
  if (typeof input === "string") text = input;
  else if (input !== null && typeof input === "object") text = JSON.stringify(input);
  else return fail(`${where}."input" must be a string or an object, got ${kindOf(input)}`);
  return { ok: true, value: { action, input: text } };
}

function shorten(s: string): string {
  const one = s.replace(/\s+/g, " ");
  return one.length > MAX_HEADER_INPUT_CHARS ? `${one.slice(0, MAX_HEADER_INPUT_CHARS)}…` : one;
}

function fail<T>(msg: string): Result<T> {
  return { ok: false, error: `parallel: ${msg}` };
}
