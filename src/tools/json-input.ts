/**
 * Parsing and validating a JSON `action_input`. The model reads these messages as its
 * correction, so each one names the tool, the field and exactly what was wrong with it.
 */
import { duplicateKeyError, firstDuplicateKey } from "../core/json-braces.js";
import type { Result } from "../core/types.js";

export type Fields = Record<string, unknown>;

/** Longest excerpt of a bad value quoted back in an error. */
const MAX_QUOTED_CHARS = 60;

/** Parses `raw` as a JSON object whose keys are all in `allowed`; `example` shows the expected shape. */
export function parseObject(
  tool: string,
  raw: string,
  allowed: readonly string[],
  example: string,
): Result<Fields> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return fail(
      `${tool}: action_input must be a JSON object such as ${example}; it is not valid JSON (${why})`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return fail(`${tool}: action_input must be a JSON object such as ${example}; got ${kindOf(value)}`);
  }
  // `JSON.parse` keeps a duplicated key's last value while the text shows the first.
  const dup = firstDuplicateKey(raw);
  if (dup) return fail(`${tool}: ${duplicateKeyError(raw, dup, "action_input")}`);
  const fields = value as Fields;
  const unknown = Object.keys(fields).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    const names = unknown.map((k) => JSON.stringify(k)).join(", ");
    const noun = unknown.length === 1 ? "field" : "fields";
    return fail(`${tool}: unknown ${noun} ${names}; allowed: ${allowed.join(", ")}`);
  }
  return { ok: true, value: fields };
}

/** A required string field; `nonEmpty` also refuses "" and all-blank text. */
export function requireString(
  tool: string,
  fields: Fields,
  key: string,
  opts: { nonEmpty: boolean },
): Result<string> {
  const v = fields[key];
  if (v === undefined) return fail(`${tool}: "${key}" is required`);
  if (typeof v !== "string") return fail(`${tool}: "${key}" must be a string, got ${kindOf(v)}`);
  if (opts.nonEmpty && v.trim() === "") return fail(`${tool}: "${key}" must be a non-empty string`);
  return { ok: true, value: v };
}

/** An optional string field (absent → undefined). */
export function optionalString(
  tool: string,
  fields: Fields,
  key: string,
  opts: { nonEmpty: boolean },
): Result<string | undefined> {
  if (fields[key] === undefined) return { ok: true, value: undefined };
  return requireString(tool, fields, key, opts);
}

/** An optional integer field no smaller than `min` (absent → undefined). Larger values are the caller's to clamp. */
export function optionalInt(
  tool: string,
  fields: Fields,
  key: string,
  min: number,
): Result<number | undefined> {
  const v = fields[key];
  if (v === undefined) return { ok: true, value: undefined };
  if (typeof v !== "number" || !Number.isInteger(v)) {
    return fail(`${tool}: "${key}" must be an integer, got ${kindOf(v)}`);
  }
  if (v < min) return fail(`${tool}: "${key}" must be >= ${min}, got ${v}`);
  return { ok: true, value: v };
}

/** A short description of a JSON value for error text: its type, and its value when short. */
export function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  switch (typeof v) {
    case "string": {
      const s = v.length > MAX_QUOTED_CHARS ? `${v.slice(0, MAX_QUOTED_CHARS)}…` : v;
      return `a string (${JSON.stringify(s)})`;
    }
    case "number":
      return `the number ${v}`;
    case "boolean":
      return `${v}`;
    case "object":
      return "an object";
    default:
      return typeof v;
  }
}

function fail<T>(error: string): Result<T> {
  return { ok: false, error };
}
