/**
 * `mcp_call` arguments checked against the tool's whole input schema before anything is sent
 * (docs/mcp.md "MCP client"), by Ajv — nested objects, arrays, unions, `$ref`s, patterns,
 * ranges. Each problem names its JSON pointer: `/entities/0/name: must be string, got number`.
 *
 * Decisions:
 * - The schema is the server's text. Its `pattern`s (and `patternProperties`) run on re2js
 *   instead of JavaScript's backtracking engine: linear in the text, so no catastrophic
 *   backtracking — but times the size of the pattern's program, which a large counted repeat
 *   makes huge; the budget below bounds that. A pattern RE2 does not support is not checked
 *   here (the server still is).
 * - A schema Ajv cannot compile (a remote `$ref`, a keyword of a draft it does not know) or
 *   one over MCP_SCHEMA_CHECK_MAX_BYTES is not checked here: the call goes to the server,
 *   which validates it, as before this check existed. Never a false refusal.
 * - The draft follows `$schema` (draft-07 and older, 2019-09, else 2020-12, the MCP default).
 *   Nothing is coerced, defaulted or removed: the arguments are only read.
 * - Ajv is loaded on the first check: a run that never calls an MCP tool does not pay for it.
 * - A check cannot stall (src/mcp/schema-bounds.ts): `uniqueItems` runs in linear time, and a
 *   compile or a validation that outlasts SCHEMA_CHECK_BUDGET_MS is stopped and the call left to
 *   the server, as for a schema that cannot be compiled. Never a false refusal, and never a wait
 *   longer than the budget for the compile (once per schema) plus the budget for the check.
 */
import { clip } from "../core/clip.js";
import { lazyRequire } from "../core/lazy.js";
import { type KeywordHost, useLinearUniqueItems, withinBudget } from "./schema-bounds.js";
import type { McpToolInfo } from "./tools-info.js";

/** A schema larger than this (as JSON) is left to the server: compiling it would cost more than it saves. */
export const MCP_SCHEMA_CHECK_MAX_BYTES = 256 * 1024;
/** Problems named per call; the rest are counted. */
const MAX_PROBLEMS = 6;
/** A property name quoted back (it may be the model's text). */
const NAME_MAX_CHARS = 64;

export interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: Record<string, unknown>;
  data?: unknown;
}
export type Validate = ((data: unknown) => boolean) & { errors?: AjvError[] | null };
export interface AjvInstance extends KeywordHost {
  compile(schema: object): Validate;
  /** Checks a schema against its draft's meta-schema; the problems are then in `errors`. */
  validateSchema(schema: object): boolean;
  errors?: AjvError[] | null;
}
type AjvClass = new (opts: object) => AjvInstance;

const ajv07 = lazyRequire<{ default: AjvClass }>("ajv");
const ajv2019 = lazyRequire<{ default: AjvClass }>("ajv/dist/2019");
const ajv2020 = lazyRequire<{ default: AjvClass }>("ajv/dist/2020");
const re2js = lazyRequire<typeof import("re2js")>("re2js");

/**
 * Ajv's `code.regExp`: patterns on RE2. The `toString` is the pattern itself, because Ajv keys
 * its compiled patterns by it (one shared string would make every pattern the first one).
 */
function re2RegExp(pattern: string, flags: string): { test(s: string): boolean; toString(): string } {
  const key = `/${pattern}/${flags}`;
  try {
    const { RE2JS } = re2js();
    const re = RE2JS.compile(RE2JS.translateRegExp(pattern));
    return { test: (s) => re.test(s), toString: () => key };
  } catch {
    // Lookarounds, backreferences: RE2 has none; the server checks this pattern.
    return { test: () => true, toString: () => key };
  }
}
re2RegExp.code = "re2";

const instances = new Map<string, AjvInstance>();

/**
 * The Ajv instance for the schema's draft (shared with the answer schema, src/agent/answer-schema.ts),
 * its `uniqueItems` the linear one (src/mcp/schema-bounds.ts).
 */
export function ajvFor(schema: Record<string, unknown>): AjvInstance {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  const draft = /draft-0[4-7]/.test(declared) ? "07" : declared.includes("2019-09") ? "2019" : "2020";
  let ajv = instances.get(draft);
  if (!ajv) {
    const Ajv = (draft === "07" ? ajv07() : draft === "2019" ? ajv2019() : ajv2020()).default;
    ajv = new Ajv({
      strict: false,
      allErrors: true,
      // parentSchema and data in each error: the correction names the expected type and what came.
      verbose: true,
      validateSchema: false,
      validateFormats: false,
      // Two servers' schemas may share an `$id`; none is registered globally.
      addUsedSchema: false,
      logger: false,
      code: { regExp: re2RegExp },
      // A `$ref` is a call, never a copy: inlined, one 5 KB definition referenced 5000 times made
      // code that ran Node out of memory while compiling a 120 KB schema.
      inlineRefs: false,
    });
    useLinearUniqueItems(ajv);
    instances.set(draft, ajv);
  }
  return ajv;
}

/**
 * Compiled once per listed schema object; `null`: not checkable here (left to the server) — too
 * large, not compilable, or not compiled within the budget.
 */
const compiled = new WeakMap<object, Validate | null>();

function validatorFor(schema: Record<string, unknown>): Validate | null {
  const hit = compiled.get(schema);
  if (hit !== undefined) return hit;
  let v: Validate | null = null;
  try {
    if (Buffer.byteLength(JSON.stringify(schema)) <= MCP_SCHEMA_CHECK_MAX_BYTES) {
      const { $schema: _declared, ...body } = schema;
      const ajv = ajvFor(schema);
      const built = withinBudget(() => ajv.compile(body));
      v = built.done ? built.value : null;
    }
  } catch {
    v = null;
  }
  compiled.set(schema, v);
  return v;
}

function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function pointerPart(name: string): string {
  return clip(name, NAME_MAX_CHARS).replace(/~/g, "~0").replace(/\//g, "~1");
}

function propertyNames(schema: Record<string, unknown> | undefined): string[] {
  const props = schema?.properties;
  return typeof props === "object" && props !== null ? Object.keys(props) : [];
}

function expectedType(schema: unknown): string | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  const t = (schema as { type?: unknown }).type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.filter((x) => typeof x === "string").join("|") || undefined;
  return undefined;
}

/**
 * One problem as `pointer: what is wrong`. `tool` names the MCP tool an unknown top-level
 * property is not a parameter of; without it (an answer schema) the plain wording is used.
 */
export function describeError(e: AjvError, tool?: string): string {
  const at = e.instancePath;
  switch (e.keyword) {
    case "required": {
      const name = String(e.params.missingProperty ?? "");
      const props = e.parentSchema?.properties as Record<string, unknown> | undefined;
      const type = expectedType(props?.[name]);
      return `${at}/${pointerPart(name)}: is required${type ? ` (${type})` : ""}`;
    }
    case "additionalProperties": {
      const name = String(e.params.additionalProperty ?? "");
      const known = propertyNames(e.parentSchema).join(", ") || "none";
      return at === "" && tool !== undefined
        ? `/${pointerPart(name)}: is not a parameter of ${tool} (parameters: ${known})`
        : `${at}/${pointerPart(name)}: is not allowed here (properties: ${known})`;
    }
    case "type":
      return `${at || "/"}: must be ${String(e.params.type)}, got ${jsonType(e.data)}`;
    case "enum": {
      const allowed = Array.isArray(e.params.allowedValues) ? e.params.allowedValues : [];
      return `${at || "/"}: must be one of ${allowed.map((v) => JSON.stringify(v)).join("|")}`;
    }
    default:
      return `${at || "/"}: ${e.message ?? `fails ${e.keyword}`}`;
  }
}

/**
 * The problems of `args` against the tool's input schema, each naming its JSON pointer;
 * empty when they fit, or when the schema cannot be checked here — not compilable, or not
 * checked within SCHEMA_CHECK_BUDGET_MS — (left to the server).
 */
export function checkArgs(tool: McpToolInfo, args: Record<string, unknown>): string[] {
  const validate = validatorFor(tool.inputSchema);
  if (!validate) return [];
  const checked = withinBudget(() => validate(args));
  if (!checked.done || checked.value) return [];
  const problems = [...new Set((validate.errors ?? []).map((e) => describeError(e, tool.name)))];
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), `…and ${problems.length - MAX_PROBLEMS} more`];
}
