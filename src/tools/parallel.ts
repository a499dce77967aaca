/**
 * `parallel {calls:[{action, input}]}`: run 1–4 independent read-only calls concurrently.
 *
 * Validation covers every call before any runs: the count, each action against the
 * allowlist, http_request's method, and (for the tools defined beside this one) the child's
 * own input. Then each child goes through the policy gate on its own; a denied child becomes
 * a "denied" entry and the rest still run. Results come back in call order, each under a
 * `[i] action input` header and clipped to its share of the observation.
 */
import { CLIP, clip } from "./clip.js";
import { fileReadTool } from "./file_read.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { kindOf, parseObject } from "./json-input.js";
import type { AnyTool, Result, Tool } from "./types.js";

/** The actions a parallel call may contain. */
export const PARALLEL_ACTIONS = ["file_read", "grep", "glob", "outline", "http_request"] as const;
/** http_request inside parallel must only read. */
export const PARALLEL_HTTP_METHODS = ["GET", "HEAD"] as const;
export const MAX_PARALLEL_CALLS = 4;
/** Longest child input echoed in its result header. */
const MAX_HEADER_INPUT_CHARS = 160;

export type ParallelAction = (typeof PARALLEL_ACTIONS)[number];

export interface ParallelCall {
  action: ParallelAction;
  /** The child's action_input text (objects re-serialised to JSON). */
  input: string;
}

export interface ParallelInput {
  calls: ParallelCall[];
}

/** Children whose input is checked here too, so a bad one fails the whole call before anything runs. */
const LOCAL_VALIDATORS: Partial<Record<ParallelAction, AnyTool>> = {
  file_read: fileReadTool,
  grep: grepTool,
  glob: globTool,
};

const EXAMPLE = '{"calls": [{"action": "file_read", "input": {"path": "README.md"}}]}';

export const parallelTool: Tool<ParallelInput> = {
  name: "parallel",
  describe: `Run 1-${MAX_PARALLEL_CALLS} independent read-only calls at once (${PARALLEL_ACTIONS.join(", ")} with GET/HEAD only); results come back in call order.`,
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
    // Each child is gated separately when it runs; the fan-out itself only reads.
    return { capability: "read" };
  },

  async run(input, ctx) {
    const runChild = ctx.services.runChild;
    if (!runChild) return "parallel: no child runner is available in this context";
    const budget = Math.floor(CLIP.parallel / input.calls.length);
    const results = await Promise.all(
      input.calls.map(async (call, i) => {
        const header = `[${i + 1}] ${call.action} ${shorten(call.input)}`;
        const decision = ctx.gate(call.action, call.input);
        if (!decision.allow) return `${header}\ndenied: ${decision.reason}`;
        let body: string;
        try {
          body = await runChild(call.action, call.input);
        } catch (e) {
          body = `error: ${e instanceof Error ? e.message : String(e)}`;
        }
        return `${header}\n${clip(body, Math.max(256, budget - Buffer.byteLength(header) - 2))}`;
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
  if (!(PARALLEL_ACTIONS as readonly string[]).includes(action)) {
    return fail(
      `${where}: "${action}" is not allowed in parallel; only ${PARALLEL_ACTIONS.join(", ")} (http_request with GET or HEAD)`,
    );
  }
  let text: string;
  if (typeof input === "string") text = input;
  else if (input !== null && typeof input === "object") text = JSON.stringify(input);
  else return fail(`${where}."input" must be a string or an object, got ${kindOf(input)}`);

  const name = action as ParallelAction;
  if (name === "http_request") {
    const method = httpMethodOf(text);
    if (!method.ok) return fail(`${where}: ${method.error}`);
  }
  const local = LOCAL_VALIDATORS[name];
  if (local) {
    const checked = local.parse(text);
    if (!checked.ok) return fail(`${where}: ${checked.error}`);
  }
  return { ok: true, value: { action: name, input: text } };
}

/** The method of an http_request child, which must be GET or HEAD. */
function httpMethodOf(text: string): Result<string> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return {
      ok: false,
      error: 'http_request input must be a JSON object such as {"method": "GET", "url": "..."}',
    };
  }
  const method = (v as { method?: unknown } | null)?.method;
  if (typeof method !== "string") {
    return { ok: false, error: 'http_request in parallel needs "method": "GET" or "HEAD"' };
  }
  const normal = method.trim().toUpperCase();
  if (!(PARALLEL_HTTP_METHODS as readonly string[]).includes(normal)) {
    return { ok: false, error: `http_request in parallel must use GET or HEAD, not ${method}` };
  }
  return { ok: true, value: normal };
}

function shorten(s: string): string {
  const one = s.replace(/\s+/g, " ");
  return one.length > MAX_HEADER_INPUT_CHARS ? `${one.slice(0, MAX_HEADER_INPUT_CHARS)}…` : one;
}

function fail<T>(msg: string): Result<T> {
  return { ok: false, error: `parallel: ${msg}` };
}
