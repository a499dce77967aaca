/**
 * A tool's input, declared once: the field list gives the TypeScript type
 * (`InputOf`), the validation with its exact correction messages (json-input.ts), the
 * input shape and example shown in the prompt, and a JSON schema of the input.
 */

import { duplicateKeyError, firstDuplicateKey } from "../core/json-braces.js";
import { jsonDefect } from "../core/json-complaint.js";
import type { Result } from "../core/types.js";
import {
  type Fields,
  kindOf,
  optionalInt,
  optionalString,
  parseObject,
  requireString,
} from "./json-input.js";

interface FieldBase {
  /** How the field reads in the prompt's input shape (a JSON value or a placeholder). */
  shape: string;
  /** A concrete value (JSON text) for the example in corrections; required fields use `shape` without one. */
  example?: string;
}

export interface StringField extends FieldBase {
  kind: "string";
  required: boolean;
  /** Refuse "" and blank text. */
  nonEmpty: boolean;
  /** `null` counts as absent (http_request's `body`). */
  nullable?: boolean;
  /** Used when the field is absent, `null` or blank (skill's `path`); the value is then always present. */
  default?: string;
}

/** A required string from a fixed set; `normalize` maps what the model wrote first (e.g. "get" → "GET"). */
export interface EnumField<V extends string = string> extends FieldBase {
  kind: "enum";
  required: true;
  values: readonly V[];
  normalize?: (s: string) => string;
}

/** An optional object of string values (`null` counts as absent): http_request's `headers`. */
export interface MapField extends FieldBase {
  kind: "map";
  required: false;
}

/** One derived call: the child's action and its action_input text (objects re-serialised to JSON). */
export interface CallSpec {
  action: string;
  input: string;
}

/**
 * A required array of 1..max `{action, input}` calls (parallel's `calls`). The field checks the
 * shape; each element's input is then validated by the child tool's own declaration when the call
 * pipeline prepares the children (agent/calls.ts), before any runs.
 */
export interface CallsField extends FieldBase {
  kind: "calls";
  required: true;
  max: number;
}

export interface IntField extends FieldBase {
  kind: "int";
  required: false;
  min: number;
}

export interface ObjectField extends FieldBase {
  kind: "object";
  required: false;
}

export type FieldSpec = StringField | IntField | ObjectField | EnumField | MapField | CallsField;
export type FieldSpecs = Record<string, FieldSpec>;

/** A required string; `nonEmpty` (default true) also refuses blank text. */
export function str(
  shape = '"..."',
  opts: { nonEmpty?: boolean; example?: string } = {},
): StringField & { required: true } {
  return { kind: "string", required: true, nonEmpty: opts.nonEmpty ?? true, shape, example: opts.example };
}

/** An optional string. */
export function optStr(
  shape = '"..."',
  opts: { nonEmpty?: boolean; example?: string; nullable?: boolean } = {},
): StringField & { required: false } {
  return {
    kind: "string",
    required: false,
    nonEmpty: opts.nonEmpty ?? true,
    shape,
    example: opts.example,
    ...(opts.nullable ? { nullable: true } : {}),
  };
}

/** An optional string that is never missing after parsing: absent, `null` or blank gives `def`. */
export function strOr(
  def: string,
  shape = JSON.stringify(def),
): StringField & { required: false; default: string } {
  return { kind: "string", required: false, nonEmpty: false, default: def, shape };
}

/** One of `values`; the shape lists them as "A|B|C" unless given. */
export function oneOf<V extends string>(
  values: readonly V[],
  opts: { shape?: string; example?: string; normalize?: (s: string) => string } = {},
): EnumField<V> {
  return {
    kind: "enum",
    required: true,
    values,
    shape: opts.shape ?? JSON.stringify(values.join("|")),
    example: opts.example,
    normalize: opts.normalize,
  };
}

/** An optional object of string values. */
export function optMap(shape = '{"name": "value"}'): MapField {
  return { kind: "map", required: false, shape };
}

/** A required array of 1..`max` `{action, input}` calls. */
export function calls(max: number, shape: string, example?: string): CallsField {
  return { kind: "calls", required: true, max, shape, example };
}

/** An optional JSON object (`null` counts as absent). */
export function optObj(shape = "{...}"): ObjectField {
  return { kind: "object", required: false, shape };
}

/** An optional integer no smaller than `min`. */
export function optInt(min: number, shape: string): IntField {
  return { kind: "int", required: false, min, shape };
}

type ValueOf<F extends FieldSpec> =
  F extends EnumField<infer V>
    ? V
    : F extends StringField
      ? string
      : F extends ObjectField
        ? Record<string, unknown>
        : F extends MapField
          ? Record<string, string>
          : F extends CallsField
            ? CallSpec[]
            : number;
/** Required fields, and those with a default: both are always present after parsing. */
type RequiredKeys<D extends FieldSpecs> = {
  [K in keyof D]: D[K]["required"] extends true ? K : D[K] extends { default: string } ? K : never;
}[keyof D];
type OptionalKeys<D extends FieldSpecs> = Exclude<keyof D, RequiredKeys<D>>;

/** The TypeScript type a declaration validates to. */
export type InputOf<D extends FieldSpecs> = { [K in RequiredKeys<D>]: ValueOf<D[K]> } & {
  [K in OptionalKeys<D>]?: ValueOf<D[K]>;
};

export interface DeclaredInput<D extends FieldSpecs, T = InputOf<D>> {
  fields: D;
  /** The declared field names: what a call's arguments may hold (agent/call-args.ts). */
  names: readonly string[];
  /** `{"path": "...", "offset": 1}`: every field, for the prompt. */
  inputShape: string;
  /** Required fields and those with an example value: quoted in "not a JSON object" corrections. */
  example: string;
  /** JSON schema of the input object (unknown fields refused). */
  schema: object;
  /** Validates `raw`; each error names the tool, the field and what was wrong. */
  parse(raw: string): Result<T>;
}

/**
 * Declares a tool's input. `refine` adds the checks a field list cannot say (two fields that
 * must differ, a pattern that must compile) and may derive values; its errors are corrections
 * too, so they name the tool and the field.
 */
export function declareInput<D extends FieldSpecs, T = InputOf<D>>(
  tool: string,
  fields: D,
  refine?: (input: InputOf<D>) => Result<T>,
): DeclaredInput<D, T> {
  const names = Object.keys(fields);
  const shapeOf = (keys: string[]) => `{${keys.map((k) => `"${k}": ${fields[k]!.shape}`).join(", ")}}`;
  const exampleKeys = names.filter((k) => fields[k]!.required || fields[k]!.example !== undefined);
  const example = `{${exampleKeys.map((k) => `"${k}": ${fields[k]!.example ?? fields[k]!.shape}`).join(", ")}}`;
  return {
    fields,
    names,
    inputShape: shapeOf(names),
    example,
    schema: {
      type: "object",
      properties: Object.fromEntries(
        names.map((k) => {
          const f = fields[k]!;
          return [k, fieldSchema(f)];
        }),
      ),
      required: names.filter((k) => fields[k]!.required),
      additionalProperties: false,
    },
    parse(raw) {
      const obj = parseObject(tool, raw, names, example);
      if (!obj.ok) return obj;
      const out: Fields = {};
      for (const k of names) {
        const f = fields[k]!;
        const v = readField(tool, obj.value, k, f);
        if (!v.ok) return v;
        if (v.value !== undefined) out[k] = v.value;
      }
      const input = out as InputOf<D>;
      return refine ? refine(input) : { ok: true, value: input as T };
    },
  };
}

function fieldSchema(f: FieldSpec): object {
  switch (f.kind) {
    case "int":
      return { type: "integer", minimum: f.min };
    case "object":
      return { type: "object" };
    case "map":
      return { type: "object", additionalProperties: { type: "string" } };
    case "enum":
      return { type: "string", enum: [...f.values] };
    case "calls":
      return {
        type: "array",
        minItems: 1,
        maxItems: f.max,
        items: {
          type: "object",
          properties: { action: { type: "string", minLength: 1 }, input: { type: ["string", "object"] } },
          required: ["action", "input"],
          additionalProperties: false,
        },
      };
    default:
      return { type: "string", ...(f.nonEmpty ? { minLength: 1 } : {}) };
  }
}

function fail<T>(error: string): Result<T> {
  return { ok: false, error };
}

function readEnum(tool: string, obj: Fields, key: string, f: EnumField): Result<string> {
  const v = requireString(tool, obj, key, { nonEmpty: false });
  // A missing or non-string value is told the allowed values too: that is the fix.
  if (!v.ok) return fail(`${v.error}; one of ${f.values.join(", ")}`);
  const s = f.normalize ? f.normalize(v.value) : v.value;
  if (!f.values.includes(s)) {
    return fail(`${tool}: "${key}" must be one of ${f.values.join(", ")}, got ${kindOf(v.value)}`);
  }
  return { ok: true, value: s };
}

function readMap(tool: string, obj: Fields, key: string): Result<Record<string, string> | undefined> {
  const v = obj[key];
  if (v === undefined || v === null) return { ok: true, value: undefined };
  if (typeof v !== "object" || Array.isArray(v)) {
    return fail(`${tool}: "${key}" must be a JSON object of name to string value, got ${kindOf(v)}`);
  }
  for (const [name, value] of Object.entries(v)) {
    if (typeof value !== "string") {
      return fail(`${tool}: "${key}" entry ${JSON.stringify(name)} must be a string, got ${kindOf(value)}`);
    }
  }
  return { ok: true, value: v as Record<string, string> };
}

function readCalls(tool: string, obj: Fields, key: string, f: CallsField): Result<CallSpec[]> {
  const v = obj[key];
  if (v === undefined) return fail(`${tool}: "${key}" is required`);
  if (!Array.isArray(v)) return fail(`${tool}: "${key}" must be an array, got ${kindOf(v)}`);
  if (v.length === 0 || v.length > f.max) {
    return fail(`${tool}: "${key}" must hold 1 to ${f.max} calls, got ${v.length}`);
  }
  const out: CallSpec[] = [];
  for (let i = 0; i < v.length; i++) {
    const call = readCall(tool, v[i], `${key}[${i}]`);
    if (!call.ok) return call;
    out.push(call.value);
  }
  return { ok: true, value: out };
}

function readCall(tool: string, v: unknown, where: string): Result<CallSpec> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    return fail(
      `${tool}: ${where} must be an object like {"action": "file_read", "input": {...}}, got ${kindOf(v)}`,
    );
  }
  const extra = Object.keys(v).filter((k) => k !== "action" && k !== "input");
  if (extra.length > 0) {
    const names = extra.map((k) => JSON.stringify(k)).join(", ");
    return fail(`${tool}: ${where} has unknown field(s) ${names}; allowed: action, input`);
  }
  const { action, input } = v as { action?: unknown; input?: unknown };
  if (typeof action !== "string" || action === "") {
    return fail(`${tool}: ${where}."action" must be a non-empty string`);
  }
  if (typeof input === "string") return { ok: true, value: { action, input } };
  if (input !== null && typeof input === "object") {
    return { ok: true, value: { action, input: JSON.stringify(input) } };
  }
  return fail(`${tool}: ${where}."input" must be a string or an object, got ${kindOf(input)}`);
}

function readField(tool: string, obj: Fields, key: string, f: FieldSpec): Result<unknown> {
  if (f.kind === "int") return optionalInt(tool, obj, key, f.min);
  if (f.kind === "enum") return readEnum(tool, obj, key, f);
  if (f.kind === "map") return readMap(tool, obj, key);
  if (f.kind === "calls") return readCalls(tool, obj, key, f);
  if (f.kind === "object") {
    const v = obj[key];
    if (v === undefined || v === null) return { ok: true, value: undefined };
    if (typeof v !== "object" || Array.isArray(v)) {
      return { ok: false, error: `${tool}: "${key}" must be a JSON object, got ${kindOf(v)}` };
    }
    return { ok: true, value: v };
  }
  const opts = { nonEmpty: f.nonEmpty };
  if (f.default !== undefined) {
    const v = obj[key];
    if (v === undefined || v === null) return { ok: true, value: f.default };
    const s = requireString(tool, obj, key, opts);
    return s.ok && s.value.trim() === "" ? { ok: true, value: f.default } : s;
  }
  if (f.nullable && obj[key] === null) return { ok: true, value: undefined };
  return f.required ? requireString(tool, obj, key, opts) : optionalString(tool, obj, key, opts);
}

/**
 * A tool whose action_input is plain text, not JSON (bash's command, final's answer): the same
 * four things from one declaration. `nonEmpty` names what must not be blank in the correction.
 *
 * Models also send the text as a field of an object (`{"command": "ls"}`, from their
 * `{name, arguments}` training). `fields` names the fields that may carry it: an object with
 * exactly one of them, a string, is read as that string. With `objects: "refuse"` (bash) any
 * other object is a correction naming the fields — a JSON text is never run as a command;
 * with `objects: "keep"` (final) it stays the text it is (an answer may be JSON).
 */
export interface DeclaredText {
  inputShape: string;
  /** The fields an object may carry the text in (`command`; `answer`, `text`). */
  names: readonly string[];
  example: string;
  schema: object;
  /** The field that names the text where an object is needed (the first of `fields`). */
  textName?: string;
  parse(raw: string): Result<string>;
}

export function declareText(
  tool: string,
  spec: {
    shape: string;
    example: string;
    nonEmpty?: string;
    fields?: readonly string[];
    objects?: "refuse" | "keep";
  },
): DeclaredText {
  const noun = spec.nonEmpty;
  const fields = spec.fields ?? [];
  const named = fields.map((f) => JSON.stringify(f)).join(" or ");
  const asField = fields[0] !== undefined ? ` (or {${JSON.stringify(fields[0])}: "..."})` : "";
  /** The text an object carries, the object itself as text, or why neither. */
  const fromObject = (raw: string): Result<string> | undefined => {
    if (fields.length === 0 || !raw.trimStart().startsWith("{")) return undefined;
    const defect = jsonDefect(raw);
    if (defect) {
      // `{"command": "ls $(…)"` missing its brace is an object gone wrong, not a command: a
      // text that opens like an object with a quoted key is corrected, never run (a shell's
      // `{ ls; }` group opens with a space or a word, so it still runs).
      if (spec.objects === "refuse" && /^\s*\{\s*["']/.test(raw)) {
        return fail(
          `${tool}: action_input opens as a JSON object but is not valid JSON (${defect.cutOff ? "it ends before it closes" : `${defect.what} at ${defect.where}`}); nothing was run: send {${JSON.stringify(fields[0])}: "..."} as valid JSON, or the ${spec.shape} itself`,
        );
      }
      return undefined;
    }
    const dup = firstDuplicateKey(raw);
    if (dup) return fail(`${tool}: ${duplicateKeyError(raw, dup, "action_input")}`);
    const v: unknown = JSON.parse(raw);
    if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
    const keys = Object.keys(v);
    const only = keys.length === 1 ? keys[0]! : undefined;
    const value =
      only !== undefined && fields.includes(only) ? (v as Record<string, unknown>)[only] : undefined;
    if (typeof value === "string") return { ok: true, value };
    if (spec.objects === "keep") return undefined;
    const got = keys.length === 0 ? "no keys" : `the keys ${keys.map((k) => JSON.stringify(k)).join(", ")}`;
    return fail(
      `${tool}: action_input is the ${spec.shape} itself${asField}; got a JSON object with ${got}${only !== undefined && fields.includes(only) ? ` (${named} must be a string)` : ""}`,
    );
  };
  return {
    inputShape: spec.shape,
    names: fields,
    example: spec.example,
    schema: { type: "string", ...(noun ? { minLength: 1 } : {}) },
    ...(fields[0] !== undefined ? { textName: fields[0] } : {}),
    parse(raw) {
      if (typeof raw !== "string") return fail(`${tool}: action_input must be the ${spec.shape}`);
      const mapped = fromObject(raw);
      if (mapped && !mapped.ok) return mapped;
      const text = mapped?.value ?? raw;
      if (noun && text.trim() === "") return fail(`${tool}: the ${noun} must not be empty`);
      return { ok: true, value: text };
    },
  };
}
