/**
 * Step parsing: lenient in *extraction*, strict in *validation* (docs/context.md "Reasoning models").
 * Extraction sets aside a model's thinking, strips a code fence, prose or `<tool_call>` tags
 * around exactly one JSON object, and makes only the repairs that have one meaning; validation
 * checks the fields, the action and the tool's own input schema. Nothing reaches a tool before
 * both pass, and every refusal says what was really wrong, so the model can fix that.
 */

import { clip } from "../core/clip.js";
import { duplicateKeyError, firstDuplicateKey, walkBraces } from "../core/json-braces.js";
import { around, jsonDefect } from "../core/json-complaint.js";
import type { Result } from "../core/types.js";
import type { AnyTool } from "../tools/types.js";
import { type ReadCall, readArguments, withoutMeaningFreeExtras } from "./call-args.js";
import { parseRepaired, type RepairName, repairText } from "./json-repair.js";
import { readCallAtStart } from "./reply-calls.js";
import { type Lead, leadOf, splitThinking } from "./think.js";
import { quotedFormat } from "./vendor-calls.js";

/**
 * Bytes of model text echoed back in a correction or error: an unknown
 * action name or a tool's complaint about its input must not carry megabytes into the
 * transcript, the next request and the audit log.
 */
export const ECHO_MAX_BYTES = 256;
export const STEP_ERROR_MAX_BYTES = 2048;

export interface Step {
  thought: string;
  action: string;
  /**
   * Always text: a text tool's text (bash's command, final's answer, however it was sent), or a
   * JSON tool's input as JSON text.
   */
  action_input: string;
}

export interface ValidStep extends Step {
  tool: AnyTool;
  input: unknown;
  /** What extraction did to get here (repairs, dialect, thinking set aside), for the trace. */
  notes: string[];
  /** The step came from the server's reasoning field, not the reply text. */
  fromReasoning?: boolean;
  /** While a plan runs: the plan step this step works on and its status (docs/safety.md "Plan mode"). */
  planProgress?: PlanProgress;
  /** Further calls the reply held, by name, which were not run (one call per turn): the model is told. */
  notRun?: string[];
}

export const PLAN_STATUSES = ["in_progress", "done", "skipped"] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];
export interface PlanProgress {
  /** 1-based. */
  step: number;
  status: PlanStatus;
}

/** The two optional keys a step may carry beside its own while a plan runs. */
const PROGRESS_KEYS = ["plan_step", "plan_status"];

/**
 * `plan_step`/`plan_status` read and checked; undefined when the step carries neither. A
 * `plan_step` alone means the step works on it: `in_progress` (docs/safety.md "Plan mode").
 */
function planProgressOf(obj: Record<string, unknown>, problems: string[]): PlanProgress | undefined {
  const { plan_step: n, plan_status: given } = obj;
  // Null is how a step under a strict schema leaves them out.
  const noStatus = given === undefined || given === null;
  if ((n === undefined || n === null) && noStatus) return undefined;
  const status = noStatus ? "in_progress" : given;
  const before = problems.length;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1)
    problems.push('"plan_step" must be the plan step\'s number (an integer from 1), beside "plan_status"');
  if (typeof status !== "string" || !(PLAN_STATUSES as readonly string[]).includes(status))
    problems.push(`"plan_status" must be one of: ${PLAN_STATUSES.join(", ")}, beside "plan_step"`);
  return problems.length > before ? undefined : { step: n as number, status: status as PlanStatus };
}

/** What the server said beside the reply text. */
export interface ReplyContext {
  /** The reasoning field's text (`reasoning_content`, `reasoning`, Responses reasoning items). */
  reasoning?: string;
  /** Set when the server stopped at its token limit: how it said so (e.g. "finish_reason length"). */
  cutOff?: string;
  /** How the backend read the reply: the step's first notes. */
  notes?: readonly string[];
  /**
   * The server's native tool calls (`tool_calls`, or Harmony's commentary call): the first is the
   * step, its arguments read strictly; the reply text is then its thought.
   */
  calls?: readonly ReadCall[];
  /** How the calls came, for the note ("the server's native tool call"). */
  callsFormat?: string;
}

interface Span {
  text: string;
  start: number;
}

/** The top-level JSON objects in text by brace matching that respects strings, and an unclosed one. */
function scanObjects(text: string): { spans: Span[]; unclosedAt?: number } {
  const spans: Span[] = [];
  let start = -1;
  // Strings count only inside braces, so the walk may start at the first brace (prose is skipped).
  const first = text.indexOf("{");
  if (first === -1) return { spans };
  const depth = walkBraces(text, first, (i, event, d) => {
    if (event === "open" && d === 1) start = i;
    else if (event === "close" && d === 0) spans.push({ text: text.slice(start, i + 1), start });
    return false;
  });
  return depth > 0 ? { spans, unclosedAt: start } : { spans };
}

/** Finds the top-level JSON objects in text by brace matching that respects strings. */
export function findJsonObjects(text: string): string[] {
  return scanObjects(text).spans.map((s) => s.text);
}

interface Parsed {
  value: Record<string, unknown>;
  start: number;
  repairs: RepairName[];
}

interface Scan {
  parsed: Parsed[];
  /** The first object that does not parse even after the repairs: the parser's complaint. */
  invalid?: { complaint: string; excerpt: string; error?: string };
  unclosedAt?: number;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The parser's first complaint, where it is (line and column of the object), and the text around it. */
function complaintOf(text: string): { complaint: string; excerpt: string } {
  const d = jsonDefect(text);
  if (!d) return { complaint: "unknown", excerpt: "" };
  return {
    complaint: d.cutOff ? `${d.what}: it runs past the end of the reply` : `${d.what} at ${d.where}`,
    excerpt: d.excerpt,
  };
}

function scan(text: string): Scan {
  const { spans, unclosedAt } = scanObjects(text);
  const out: Scan = unclosedAt === undefined ? { parsed: [] } : { parsed: [], unclosedAt };
  for (const span of spans) {
    let value: unknown;
    let repairs: RepairName[] = [];
    try {
      value = JSON.parse(span.text);
      // `JSON.parse` keeps a duplicated key's last value while the text shows the first.
      const dup = firstDuplicateKey(span.text);
      if (dup) {
        out.invalid ??= {
          complaint: "",
          excerpt: "",
          error: duplicateKeyError(span.text, dup, "the JSON object"),
        };
        continue;
      }
    } catch {
      const repaired = parseRepaired(span.text);
      if (!repaired) {
        out.invalid ??= complaintOf(span.text);
        continue;
      }
      value = repaired.value;
      repairs = repaired.repairs;
    }
    if (isObject(value)) out.parsed.push({ value, start: span.start, repairs });
  }
  return out;
}

/**
 * The `{"name", "arguments"}` tool-call shape small models are trained on (Hermes, Qwen;
 * Llama's `{"name", "parameters"}`): a call, read only where the reply begins with it
 * (reply-calls.ts). Found inside prose, it is a quoted call and never runs.
 */
const ARGUMENT_KEYS = ["arguments", "parameters"] as const;

function toolCallArguments(v: Record<string, unknown>): { present: boolean; value: unknown } {
  const keys = Object.keys(v);
  const argKey = ARGUMENT_KEYS.find((k) => k in v);
  const present =
    typeof v.name === "string" && argKey !== undefined && keys.every((k) => k === "name" || k === argKey);
  return { present, value: argKey !== undefined ? v[argKey] : undefined };
}

function isToolCallDialect(v: Record<string, unknown>): boolean {
  return toolCallArguments(v).present;
}

function noObject(text: string): string {
  return text.trim().length === 0
    ? "the reply was empty; reply with exactly one JSON object"
    : "the reply contains no JSON object; reply with exactly one JSON object and no other text";
}

interface Extracted {
  value: Record<string, unknown>;
  notes: string[];
  /** The object is the `{"name", "arguments"}` call shape. */
  dialect?: boolean;
}

/**
 * Where an object that never closes really goes wrong: the parser's first complaint when it
 * finds one before the end (a stray quote, `{{`), "never closes" only when it runs past the end.
 */
function unclosedError(text: string, at: number): string {
  // What the repairs would mend is no defect: the first one they leave is.
  const raw = text.slice(at);
  const first = jsonDefect(raw);
  const d = first && !first.cutOff ? jsonDefect(repairText(raw).text) : first;
  if (d && !d.cutOff) {
    return `the JSON is invalid: ${d.what} at ${d.where} of the object, near "${d.excerpt}"; send one complete, valid JSON object`;
  }
  return `the JSON is invalid: the object that opens at "${around(text, at)}" never closes (the reply ends inside it); send one complete JSON object`;
}

/** The one object of a reply body (thinking already set aside), or exactly what is wrong. */
function extractObject(text: string): Result<Extracted> {
  const s = scan(text);
  // The same object twice or more (a model that repeats itself) is one step.
  const same =
    s.parsed.length > 1 &&
    s.parsed.every((p) => JSON.stringify(p.value) === JSON.stringify(s.parsed[0]!.value));
  const repeated = same ? s.parsed.length : 0;
  if (same) s.parsed.length = 1;
  if (s.invalid?.error) return { ok: false, error: s.invalid.error };
  if (s.parsed.length > 1) {
    return {
      ok: false,
      error: `the reply contains ${s.parsed.length} JSON objects; send exactly one step per turn`,
    };
  }
  if (s.parsed.length === 0) {
    if (s.invalid) {
      return {
        ok: false,
        error: `the JSON is invalid: ${s.invalid.complaint}, near "${s.invalid.excerpt}"; send one complete, valid JSON object`,
      };
    }
    if (s.unclosedAt !== undefined) return { ok: false, error: unclosedError(text, s.unclosedAt) };
    return { ok: false, error: noObject(text) };
  }
  const only = s.parsed[0]!;
  const notes = only.repairs.map((r) => `repaired the JSON: ${r}`);
  if (repeated > 0) notes.push(`the reply held the same object ${repeated} times: took it once`);
  return {
    ok: true,
    value: { value: only.value, notes, ...(isToolCallDialect(only.value) ? { dialect: true } : {}) },
  };
}

/**
 * Extracts the one step object (thinking set aside, unambiguous repairs made). Compaction and
 * the ACP replay read stored replies through this; the loop uses `parseStep`.
 */
export function extractStep(text: string): Result<Record<string, unknown>> {
  const e = extractObject(splitThinking(text).rest);
  if (!e.ok) return e;
  if (e.value.dialect) {
    const v = e.value.value;
    return { ok: true, value: { thought: "", action: v.name, action_input: toolCallArguments(v).value } };
  }
  return { ok: true, value: e.value.value };
}

function actionList(enabled: ReadonlyMap<string, AnyTool>): string {
  return [...enabled.keys()].join(", ");
}

const STEP_KEYS = ["thought", "action", "action_input"];

export function validateStep(
  obj: Record<string, unknown>,
  enabled: ReadonlyMap<string, AnyTool>,
  notes: string[] = [],
): Result<ValidStep> {
  if (!STEP_KEYS.some((k) => k in obj)) {
    const keys = Object.keys(obj).map((k) => JSON.stringify(clip(k, 40)));
    return {
      ok: false,
      error: `the JSON object has the keys ${keys.join(", ") || "(none)"}, but a step has the keys "thought", "action" and "action_input"`,
    };
  }
  // Every problem at once: a model fixing one at a time spends a turn per problem.
  const problems: string[] = [];
  const { thought, action } = obj;
  let actionInput = obj.action_input;
  if (typeof thought !== "string" && thought !== undefined) problems.push('"thought" must be a string');
  if (action === undefined) problems.push(`"action" is missing; use one of: ${actionList(enabled)}`);
  else if (typeof action !== "string") problems.push('"action" must be a string');
  else if (!enabled.has(action))
    problems.push(`unknown action "${clip(action, ECHO_MAX_BYTES)}"; use one of: ${actionList(enabled)}`);
  if (isObject(actionInput) || Array.isArray(actionInput)) actionInput = JSON.stringify(actionInput);
  if (actionInput === undefined) problems.push('"action_input" is missing');
  else if (typeof actionInput !== "string")
    problems.push('"action_input" must be a string (or a JSON object)');
  // A missing thought is told with the other problems; alone, it is only commentary missing.
  const planProgress = planProgressOf(obj, problems);
  if (thought === undefined && problems.length > 0) problems.unshift('"thought" is missing');
  if (problems.length > 0) return { ok: false, error: problems.join("; ") };
  const tool = enabled.get(action as string)!;
  const parsed = tool.parse(actionInput as string);
  if (!parsed.ok) {
    return {
      ok: false,
      error: `invalid action_input for ${tool.name}: ${clip(parsed.error, STEP_ERROR_MAX_BYTES)}`,
    };
  }
  const repairs: string[] = [];
  if (thought === undefined) repairs.push('the step had no "thought": took it as empty');
  const extra = Object.keys(obj).filter((k) => !STEP_KEYS.includes(k) && !PROGRESS_KEYS.includes(k));
  if (extra.length > 0)
    repairs.push(
      `ignored the keys beside the step: ${extra.map((k) => JSON.stringify(clip(k, 40))).join(", ")}`,
    );
  return {
    ok: true,
    value: {
      thought: (thought as string | undefined) ?? "",
      action: action as string,
      // A text tool's input is its text, however it came (`{"answer": …}` answers with the text).
      action_input: typeof parsed.value === "string" ? parsed.value : (actionInput as string),
      tool,
      input: parsed.value,
      notes: [...notes, ...repairs],
      ...(planProgress ? { planProgress } : {}),
    },
  };
}

/**
 * The calls a reply carried (native, a vendor format, a JSON call shape): the first is the step,
 * its arguments read strictly (call-args.ts) and mapped through its tool's declaration; the rest
 * are named as not run. `format` names how they came, in the step's notes and in a correction.
 */
function callStep(
  calls: readonly ReadCall[],
  how: { format: string; note: string; thought: string; cutOff?: string },
  enabled: ReadonlyMap<string, AnyTool>,
  notes: string[],
  extra: Record<string, unknown> = {},
): Result<ValidStep> {
  const first = calls[0]!;
  const name = clip(first.name, ECHO_MAX_BYTES);
  const tool = enabled.get(first.name);
  if (!tool) {
    return {
      ok: false,
      error: `the reply uses ${formatPhrase(how.format)} with the name "${name}", which is not an enabled action; use one of: ${actionList(enabled)} (as {"thought", "action", "action_input"})`,
    };
  }
  const args = readArguments(first.arguments, how.cutOff);
  if (!args.ok) return { ok: false, error: `${how.format} call to ${name}: ${args.error}` };
  const kept = withoutMeaningFreeExtras(tool, args.value.value);
  const rest = calls.slice(1).map((c) => clip(c.name, ECHO_MAX_BYTES));
  const restNote =
    rest.length > 0
      ? [
          `the reply held ${calls.length} tool calls; only the first ran (not run: ${rest.join(", ")}): one call per turn`,
        ]
      : [];
  const v = validateStep(
    { ...extra, thought: how.thought, action: first.name, action_input: kept.value },
    enabled,
    [...notes, how.note, ...args.value.notes, ...kept.notes, ...restNote],
  );
  if (!v.ok || rest.length === 0) return v;
  return { ok: true, value: { ...v.value, notRun: rest } };
}

/** The note for calls read from the reply text, in the words the trace has always used. */
function formatNote(format: string): string {
  const dialect = DIALECTS[format];
  return dialect ? `accepted ${dialect} as the step` : `read the ${format} tool-call format as the step`;
}

/** The round-four dialect's formats, in the words the trace has always used for them. */
const DIALECTS: Record<string, string> = {
  '{"name", "arguments"}': 'the {"name", "arguments"} tool-call dialect',
  '{"name", "arguments"} in <tool_call> tags':
    'the {"name", "arguments"} tool-call dialect inside <tool_call> tags',
};

/** How a correction names the format a call came in. */
function formatPhrase(format: string): string {
  return DIALECTS[format] ?? `the ${format} tool-call format`;
}

/** A reply that opens as a step object (`{"thought": …`), never as a call shape. */
const STEP_OPENING = /^\{\s*"(?:thought|action|action_input)"/;

function fromBody(
  text: string,
  enabled: ReadonlyMap<string, AnyTool>,
  notes: string[],
  cutOff?: string,
): Result<ValidStep> {
  const lead = leadOf(text);
  const all = [...notes, ...lead.notes];
  // The common reply, a step as asked, opens with a step key: no call format can begin so.
  if (STEP_OPENING.test(lead.text)) return plainStep(lead, enabled, all);
  const call = readCallAtStart(lead, enabled);
  if (call?.ok) {
    return callStep(
      call.calls,
      { format: call.format, note: formatNote(call.format), thought: "", ...(cutOff ? { cutOff } : {}) },
      enabled,
      [...all, ...call.notes],
    );
  }
  const plain = plainStep(lead, enabled, all);
  if (plain.ok || !call) return plain.ok ? plain : quotedOrPlain(lead, plain);
  // A vendor marker at the start whose call does not read: unless the tags wrap a plain step.
  return call;
}

/** A reply that is not a step: when its prose quotes a call, say that the call was not run. */
function quotedOrPlain(lead: Lead, plain: Result<ValidStep>): Result<ValidStep> {
  const quoted = quotedFormat(lead.text);
  if (plain.ok || !quoted) return plain;
  return {
    ok: false,
    error: `the reply quotes a ${quoted} call inside other text: a call is read only when the reply begins with it, so nothing was run; reply with exactly one JSON step (or with the call alone)`,
  };
}

/**
 * A reply that begins as an object whose first closing brace is followed by more of the object
 * (`{"thought": "a "}", "action": …}`: a quote left unescaped closed a string early): the
 * parser's complaint about the whole reply, not a complaint about the piece that happened to close.
 */
function brokenQuoting(text: string): string | undefined {
  if (!text.startsWith("{")) return undefined;
  const first = scanObjects(text).spans[0];
  if (first?.start !== 0) return undefined;
  if (!/^\s*[",:}\]]/.test(text.slice(first.text.length))) return undefined;
  const d = jsonDefect(text);
  if (!d || d.cutOff) return undefined;
  return `the JSON is invalid: ${d.what} at ${d.where}, near "${d.excerpt}"; send one complete, valid JSON object`;
}

/** An object that holds a whole step's keys: no quote closed it early. */
function validHead(v: Record<string, unknown>): boolean {
  return "action" in v && "action_input" in v;
}

/** A `{"thought", "action", "action_input"}` step, with prose or a fence around it allowed. */
function plainStep(lead: Lead, enabled: ReadonlyMap<string, AnyTool>, notes: string[]): Result<ValidStep> {
  const e = extractObject(lead.text);
  // Only an object that closed before its step's keys can be a quote that closed it early.
  const broken = e.ok && !validHead(e.value.value) ? brokenQuoting(lead.text) : undefined;
  if (broken) return { ok: false, error: broken };
  if (!e.ok) return e;
  if (e.value.dialect) {
    return {
      ok: false,
      error: `the reply holds a {"name", "arguments"} call after other text; a call is read only when the reply begins with it, so nothing was run: reply with exactly one JSON step`,
    };
  }
  return validateStep(e.value.value, enabled, [...notes, ...e.value.notes]);
}

/**
 * The step a reply left in its reasoning when its answer is empty: servers that route a
 * constrained answer there, and models that think in prose and end with the step. Taken only
 * when the reasoning *ends* in exactly one complete step — a draft followed by more thinking,
 * or two steps, is never run.
 */
function stepFromReasoning(reasoning: string, enabled: ReadonlyMap<string, AnyTool>): ValidStep | undefined {
  const { spans, unclosedAt } = scanObjects(reasoning);
  const last = spans.at(-1);
  if (unclosedAt !== undefined || !last) return undefined;
  if (reasoning.slice(last.start + last.text.length).trim() !== "") return undefined;
  const steps = scan(reasoning).parsed.filter((p) => "action" in p.value || isToolCallDialect(p.value));
  const only = steps.length === 1 ? steps[0]! : undefined;
  if (!only || only.start !== last.start) return undefined;
  const whole = reasoning.trim() === last.text;
  const value = isToolCallDialect(only.value)
    ? { thought: "", action: only.value.name, action_input: toolCallArguments(only.value).value }
    : only.value;
  const v = validateStep(value, enabled, [
    whole
      ? "the answer was empty and the reasoning field holds exactly one valid step: took the step from it"
      : "the answer was empty and the reasoning ends in exactly one valid step: took the step from it",
  ]);
  return v.ok ? { ...v.value, fromReasoning: true } : undefined;
}

function hasStepInside(thinking: string): boolean {
  return scan(thinking).parsed.some((p) => "action" in p.value || isToolCallDialect(p.value));
}

/** The reply body after any thinking block; what the history keeps of the reply. */
export function replyBody(text: string): string {
  return splitThinking(text).rest;
}

export function parseStep(
  text: string,
  enabled: ReadonlyMap<string, AnyTool>,
  ctx: ReplyContext = {},
): Result<ValidStep> {
  const split = splitThinking(text);
  const notes: string[] = [...(ctx.notes ?? [])];
  if (split.kind === "closed") notes.push("set aside the <think> block before the step");
  if (split.kind === "orphan") notes.push("set aside the thinking before </think>");
  const body = split.rest;
  const reasoning = ctx.reasoning?.trim() ?? "";

  if (ctx.calls && ctx.calls.length > 0) {
    // The server's own calls: the text beside them is their thought, never a second step.
    const format = ctx.callsFormat ?? "the server's native tool call";
    const call = callStep(
      ctx.calls,
      {
        format,
        note: `read ${format} (${clip(ctx.calls[0]!.name, ECHO_MAX_BYTES)}) as the step`,
        thought: replyThought(body),
        ...(ctx.cutOff ? { cutOff: ctx.cutOff } : {}),
      },
      enabled,
      notes,
    );
    if (call.ok && ctx.cutOff)
      call.value.notes.push(`the server reported ${ctx.cutOff}, but the call was complete`);
    return call;
  }

  if (ctx.cutOff) {
    // A complete valid step followed only by white space stands (a JSON-mode flood ran into the
    // limit); anything else is what it looks like: a reply the limit cut off.
    const whole = fromBody(body, enabled, notes, ctx.cutOff);
    const s = scanObjects(body);
    const tail = s.spans.length === 1 ? body.slice(s.spans[0]!.start + s.spans[0]!.text.length) : "x";
    if (whole.ok && tail.trim() === "" && s.unclosedAt === undefined) {
      whole.value.notes.push(`the server reported ${ctx.cutOff}, but the step was complete`);
      return whole;
    }
    // A complete object of the wrong shape (then only white space: a JSON-mode flood ran into
    // the limit) is named for what is wrong with it, whatever the finish reason says.
    if (!whole.ok && s.spans.length === 1 && tail.trim() === "" && s.unclosedAt === undefined) return whole;
    return {
      ok: false,
      error: `the reply was cut off at the token limit (${ctx.cutOff}) before one complete step arrived; think less and reply with a short step`,
    };
  }

  if (body.trim() === "") {
    if (split.kind === "unclosed") {
      return {
        ok: false,
        error: hasStepInside(split.thinking)
          ? "the reply is a <think> block that never closes, and the step inside it was not run (a step inside the thinking is never run); close </think> and put the step after it"
          : "the reply is a <think> block that never closes; close </think> and put one JSON step after it",
      };
    }
    if (split.kind !== "none" && hasStepInside(split.thinking)) {
      return {
        ok: false,
        error:
          "the only step is inside the thinking, and a step inside the thinking is never run; put the step after </think>",
      };
    }
    if (reasoning !== "") {
      const fromThought = stepFromReasoning(reasoning, enabled);
      if (fromThought) return { ok: true, value: fromThought };
      return {
        ok: false,
        error:
          "the answer was empty while thinking was present: the step must be in the reply itself, after the thinking; reply with exactly one JSON object",
      };
    }
  }
  return fromBody(body, enabled, notes);
}

/** The text a reply sent beside its native calls, kept as the step's thought (end tokens set aside). */
function replyThought(body: string): string {
  return leadOf(body).text;
}

/**
 * The step's JSON Schema for the server's structured output. `planSteps`: a plan is being
 * carried out with this many steps, so a step may also say which one it works on (a server that
 * enforces the schema would otherwise strip `plan_step`/`plan_status`).
 */
export function stepSchema(actions: readonly string[], planSteps?: number): object {
  return {
    type: "object",
    properties: {
      thought: { type: "string" },
      action: { type: "string", enum: [...actions] },
      action_input: { type: "string" },
      ...(planSteps !== undefined
        ? {
            plan_step: { type: ["integer", "null"], minimum: 1, maximum: planSteps },
            plan_status: { type: ["string", "null"], enum: [...PLAN_STATUSES, null] },
          }
        : {}),
    },
    // A strict server wants every property required: the plan keys are, as nullable.
    required: ["thought", "action", "action_input", ...(planSteps !== undefined ? PROGRESS_KEYS : [])],
    additionalProperties: false,
  };
}
