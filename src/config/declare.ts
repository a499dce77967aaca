/**
 * A configuration key, declared once, in the spirit of `tools/declare.ts`: the builder that
 * declares a key gives its TypeScript type (`InferConfig`), its default, its `SCOOT_*`
 * environment name, the check of a file or environment value with its messages, and — for the
 * keys `scoot setup` asks about — the question, its flag and the check of a typed answer.
 * `config/schema.ts` holds the declarations; `config/load.ts` and `cli/setup.ts` only walk them.
 */
import type { Result } from "../core/types.js";

/**
 * How a key's value is checked. `policy` is an enum whose unknown values become `readonly` in
 * the file and are ignored in the environment (a typo never loosens the gate).
 */
export type KeyKind =
  | { type: "string"; optional?: boolean }
  | { type: "int"; min: number; max: number }
  | { type: "bool" }
  | { type: "enum"; values: readonly string[] }
  | { type: "policy" }
  | { type: "string[]" }
  | { type: "object" }
  | { type: "table[]" };

/**
 * A checked value; `warn` keeps a safe substitute and says why (an unknown policy name).
 * `refused`: the value has the key's type but the key's own check refuses it (a base URL
 * without http://); the environment overlay treats that as a configuration error, not as a
 * value to ignore, because ignoring it would quietly use another value than the one written.
 */
export type Checked<T = unknown> =
  | { ok: true; value: T }
  | { ok: false; error: string; refused?: true }
  | { ok: "warn"; value: T; warning: string };

/** What `scoot setup` asks for one key: the `--flag`, the question (its choices in it) and the answer's check. */
export interface SetupQuestion<T> {
  flag: string;
  question: string;
  /** Turns typed text (a flag value or an answer) into the value, or says what is wrong and how to fix it. */
  answer(text: string): Result<T>;
}

export interface KeyDecl<T, Optional extends boolean = boolean> {
  kind: KeyKind;
  /** `undefined` only for optional keys: they are absent from the defaults. */
  default: Optional extends true ? undefined : T;
  optional: Optional;
  /** One line for `config`-style listings and the README. */
  doc: string;
  /** What a value must be, as the wrong-type message says it: "expected <expects>, got …". */
  expects: string;
  /** Checks a value read from the file (or parsed from the environment); `where` names the key. */
  check(value: unknown, where: string): Checked<T>;
  /** Turns an environment string into a value for `check`, or says what was expected. */
  parseEnv(raw: string): Result<unknown>;
  setup?: SetupQuestion<T>;
  /** Set when the key is read from the config file only (see `Common.fileOnly`). */
  fileOnly?: string;
  /** For an optional key whose absence means something: what `scoot config` says when it is unset. */
  unset?: string;
}

/** A declaration placed in its section: it knows its dotted name and its environment variable. */
export type KeySpec<T = unknown, Optional extends boolean = boolean> = KeyDecl<T, Optional> & {
  dotted: string;
  env: string;
};

// ---- the checks, one per kind -------------------------------------------------------------

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

export function describeType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (v instanceof Date) return "a date";
  if (typeof v === "object") return "a table";
  if (typeof v === "string") return `a string ("${v.length > 40 ? `${v.slice(0, 40)}...` : v}")`;
  if (typeof v === "number") return Number.isInteger(v) ? `an integer (${v})` : `a number (${v})`;
  return `a ${typeof v}`;
}

/** Accepted policy spellings, trimmed and case-insensitive; `yolo` is the alias of `unrestricted`. */
export function normalisePolicy(value: string): "readonly" | "guarded" | "unrestricted" | undefined {
  const v = value.trim().toLowerCase();
  if (v === "yolo") return "unrestricted";
  if (v === "readonly" || v === "guarded" || v === "unrestricted") return v;
  return undefined;
}

function wrong(where: string, expects: string, value: unknown): Checked<never> {
  return { ok: false, error: `${where}: expected ${expects}, got ${describeType(value)}` };
}

function expectsOf(kind: KeyKind): string {
  switch (kind.type) {
    case "string":
      return "a string";
    case "int":
      return "an integer";
    case "bool":
      return "true or false";
    case "enum":
      return `one of ${kind.values.join(", ")}`;
    case "policy":
      return "a policy name (readonly, guarded, unrestricted)";
    case "string[]":
      return "a list of strings";
    case "object":
      return "a table/object";
    case "table[]":
      return "a list of tables";
  }
}

function checkKind(kind: KeyKind, value: unknown, where: string): Checked {
  const expects = expectsOf(kind);
  switch (kind.type) {
    case "string":
      return typeof value === "string" ? { ok: true, value } : wrong(where, expects, value);
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value)) return wrong(where, expects, value);
      if (value < kind.min || value > kind.max) {
        return { ok: false, error: `${where}: must be in ${kind.min}..${kind.max}, got ${value}` };
      }
      return { ok: true, value };
    case "bool":
      return typeof value === "boolean" ? { ok: true, value } : wrong(where, expects, value);
    case "enum":
      if (typeof value !== "string") return wrong(where, expects, value);
      if (!kind.values.includes(value))
        return { ok: false, error: `${where}: "${value}" is not one of ${kind.values.join(", ")}` };
      return { ok: true, value };
    case "policy": {
      if (typeof value !== "string") return wrong(where, expects, value);
      const mode = normalisePolicy(value);
      if (mode) return { ok: true, value: mode };
      // A typo must never loosen the gate: an unknown policy in the file becomes readonly, the
      // strictest mode (an environment typo is ignored instead, see load.ts; docs/safety.md "Policy modes").
      return {
        ok: "warn",
        value: "readonly",
        warning: `${where}: unknown policy "${value}"; using "readonly" (valid: readonly, guarded, unrestricted, yolo)`,
      };
    }
    case "string[]":
      return Array.isArray(value) && value.every((v) => typeof v === "string")
        ? { ok: true, value: [...value] }
        : wrong(where, expects, value);
    case "object":
      return isPlainObject(value) ? { ok: true, value: { ...value } } : wrong(where, expects, value);
    case "table[]":
      return Array.isArray(value) && value.every(isPlainObject)
        ? { ok: true, value: value.map((v) => ({ ...v })) }
        : wrong(where, expects, value);
  }
}

const ENV_TRUE = ["true", "1", "yes", "on"];
const ENV_FALSE = ["false", "0", "no", "off"];

function parseEnvKind(kind: KeyKind, raw: string): Result<unknown> {
  switch (kind.type) {
    case "string":
    case "enum":
    case "policy":
      return { ok: true, value: raw };
    case "int": {
      if (!/^\s*-?\d+\s*$/.test(raw)) return { ok: false, error: "expected an integer" };
      return { ok: true, value: Number(raw.trim()) };
    }
    case "bool": {
      const v = raw.trim().toLowerCase();
      if (ENV_TRUE.includes(v)) return { ok: true, value: true };
      if (ENV_FALSE.includes(v)) return { ok: true, value: false };
      return { ok: false, error: "expected true or false" };
    }
    case "string[]": {
      const t = raw.trim();
      if (t.startsWith("[")) {
        try {
          return { ok: true, value: JSON.parse(t) };
        } catch {
          return { ok: false, error: "expected a JSON list of strings" };
        }
      }
      return {
        ok: true,
        value: t
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      };
    }
    case "object":
    case "table[]":
      try {
        return { ok: true, value: JSON.parse(raw) };
      } catch {
        return {
          ok: false,
          error: kind.type === "object" ? "expected a JSON object" : "expected a JSON list",
        };
      }
  }
}

// ---- the builders -------------------------------------------------------------------------

interface Common<T> {
  doc: string;
  setup?: SetupQuestion<T>;
  /**
   * Why the key is never read from the environment (its `SCOOT_*` variable is ignored with a
   * warning that says this): a variable may come from a project (`.envrc`), and some keys
   * belong to the person's own config file alone.
   */
  fileOnly?: string;
  /**
   * What a value of the right type must also be (a URL with http://), with the whole value
   * quoted in the message; a refusal is an error from the file and the environment alike.
   */
  valid?: (value: T) => Result<T>;
}

interface OptionalCommon<T> extends Common<T> {
  unset?: string;
}

function key<T, O extends boolean>(
  kind: KeyKind,
  optional: O,
  def: O extends true ? undefined : T,
  opts: OptionalCommon<T>,
): KeyDecl<T, O> {
  return {
    kind,
    default: def,
    optional,
    doc: opts.doc,
    expects: expectsOf(kind),
    check(value, where) {
      // The kind's check guarantees the value has the key's type.
      const typed = checkKind(kind, value, where) as Checked<T>;
      if (typed.ok !== true || !opts.valid) return typed;
      const v = opts.valid(typed.value);
      return v.ok
        ? { ok: true, value: v.value }
        : { ok: false, error: `${where}: ${v.error}`, refused: true };
    },
    parseEnv: (raw) => (opts.fileOnly ? { ok: false, error: opts.fileOnly } : parseEnvKind(kind, raw)),
    ...(opts.setup ? { setup: opts.setup } : {}),
    ...(opts.unset !== undefined ? { unset: opts.unset } : {}),
    ...(opts.fileOnly !== undefined ? { fileOnly: opts.fileOnly } : {}),
  };
}

export function text(opts: Common<string> & { default: string }): KeyDecl<string, false> {
  return key({ type: "string" }, false, opts.default, opts);
}

export function optionalText(opts: OptionalCommon<string>): KeyDecl<string, true> {
  return key({ type: "string", optional: true }, true, undefined, opts);
}

export function int(
  opts: Common<number> & { min: number; max: number; default: number },
): KeyDecl<number, false> {
  return key({ type: "int", min: opts.min, max: opts.max }, false, opts.default, opts);
}

/** An integer whose absence means something (another source fills it in; `unset` says which). */
export function optionalInt(
  opts: OptionalCommon<number> & { min: number; max: number },
): KeyDecl<number, true> {
  return key({ type: "int", min: opts.min, max: opts.max }, true, undefined, opts);
}

export function bool(opts: Common<boolean> & { default: boolean }): KeyDecl<boolean, false> {
  return key({ type: "bool" }, false, opts.default, opts);
}

export function optionalBool(opts: OptionalCommon<boolean>): KeyDecl<boolean, true> {
  return key({ type: "bool" }, true, undefined, opts);
}

export function oneOf<const V extends string>(
  values: readonly V[],
  opts: Common<V> & { default: V },
): KeyDecl<V, false> {
  return key({ type: "enum", values }, false, opts.default, opts);
}

export function optionalOneOf<const V extends string>(
  values: readonly V[],
  opts: OptionalCommon<V>,
): KeyDecl<V, true> {
  return key({ type: "enum", values }, true, undefined, opts);
}

/** A policy mode; `P` is the mode type, passed in so this module need not name it. */
export function policy<P extends string>(opts: Common<P> & { default: P }): KeyDecl<P, false> {
  return key({ type: "policy" }, false, opts.default, opts);
}

export function strings(opts: Common<string[]>): KeyDecl<string[], false> {
  return key({ type: "string[]" }, false, [], opts);
}

export function table(opts: Common<Record<string, unknown>>): KeyDecl<Record<string, unknown>, false> {
  return key({ type: "object" }, false, {}, opts);
}

/** An array of tables, each validated later by its own module (MCP servers, jobs, headers). */
export function tables<T extends object = Record<string, unknown>>(
  opts: Common<NoInfer<T>[]>,
): KeyDecl<T[], false> {
  return key({ type: "table[]" }, false, [], opts);
}

// ---- placing and typing -------------------------------------------------------------------

export function envName(section: string, name: string): string {
  return `SCOOT_${section}_${name}`.toUpperCase();
}

type Declarations = Record<string, Record<string, KeyDecl<unknown>>>;

export type Placed<D extends Declarations> = {
  [S in keyof D]: { [K in keyof D[S]]: D[S][K] & { dotted: string; env: string } };
};

/** Gives every declaration its dotted name and its `SCOOT_<SECTION>_<KEY>` variable. */
export function declareConfig<D extends Declarations>(sections: D): Placed<D> {
  const out: Record<string, Record<string, KeySpec>> = {};
  for (const [section, keys] of Object.entries(sections)) {
    const placed: Record<string, KeySpec> = {};
    for (const [name, decl] of Object.entries(keys)) {
      placed[name] = { ...decl, dotted: `${section}.${name}`, env: envName(section, name) };
    }
    out[section] = placed;
  }
  return out as Placed<D>;
}

type ValueOf<K> = K extends KeyDecl<infer T, boolean> ? T : never;
type Flatten<T> = { [K in keyof T]: T[K] } & {};

type InferSection<S> = Flatten<
  { [K in keyof S as S[K] extends { optional: true } ? never : K]: ValueOf<S[K]> } & {
    [K in keyof S as S[K] extends { optional: true } ? K : never]?: ValueOf<S[K]>;
  }
>;

/** The configuration's TypeScript type, read off the declarations: optional keys may be absent. */
export type InferConfig<D> = { [S in keyof D]: InferSection<D[S]> };
