/**
 * A tool's input, declared once (issue 10): the field list gives the TypeScript type
 * (`InputOf`), the validation with its exact correction messages (json-input.ts), the
 * input shape and example shown in the prompt, and a JSON schema of the input.
 */
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

export type FieldSpec = StringField | IntField | ObjectField;
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
  opts: { nonEmpty?: boolean; example?: string } = {},
): StringField & { required: false } {
  return { kind: "string", required: false, nonEmpty: opts.nonEmpty ?? true, shape, example: opts.example };
}

/** An optional JSON object (`null` counts as absent). */
export function optObj(shape = "{...}"): ObjectField {
  return { kind: "object", required: false, shape };
}

/** An optional integer no smaller than `min`. */
export function optInt(min: number, shape: string): IntField {
  return { kind: "int", required: false, min, shape };
}

type ValueOf<F extends FieldSpec> = F extends StringField
  ? string
  : F extends ObjectField
    ? Record<string, unknown>
    : number;
type RequiredKeys<D extends FieldSpecs> = {
  [K in keyof D]: D[K]["required"] extends true ? K : never;
}[keyof D];
type OptionalKeys<D extends FieldSpecs> = Exclude<keyof D, RequiredKeys<D>>;

/** The TypeScript type a declaration validates to. */
export type InputOf<D extends FieldSpecs> = { [K in RequiredKeys<D>]: ValueOf<D[K]> } & {
  [K in OptionalKeys<D>]?: ValueOf<D[K]>;
};

export interface DeclaredInput<D extends FieldSpecs, T = InputOf<D>> {
  fields: D;
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
    inputShape: shapeOf(names),
    example,
    schema: {
      type: "object",
      properties: Object.fromEntries(
        names.map((k) => {
          const f = fields[k]!;
          return [
            k,
            f.kind === "int"
              ? { type: "integer", minimum: f.min }
              : f.kind === "object"
                ? { type: "object" }
                : { type: "string", ...(f.nonEmpty ? { minLength: 1 } : {}) },
          ];
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

function readField(tool: string, obj: Fields, key: string, f: FieldSpec): Result<unknown> {
  if (f.kind === "int") return optionalInt(tool, obj, key, f.min);
  if (f.kind === "object") {
    const v = obj[key];
    if (v === undefined || v === null) return { ok: true, value: undefined };
    if (typeof v !== "object" || Array.isArray(v)) {
      return { ok: false, error: `${tool}: "${key}" must be a JSON object, got ${kindOf(v)}` };
    }
    return { ok: true, value: v };
  }
  const opts = { nonEmpty: f.nonEmpty };
  return f.required ? requireString(tool, obj, key, opts) : optionalString(tool, obj, key, opts);
}
