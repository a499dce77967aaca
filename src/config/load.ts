/**
 * Loads the configuration: `config.toml`, else `config.json`, else defaults; merged per
 * section and key; then `SCOOT_*` environment overrides (env > file > default).
 *
 * Fatal problems (malformed file, wrong-typed key) come back as a `ConfigError`, which the
 * CLI turns into exit 2. Soft problems (unknown keys, bad env overrides, unknown policy
 * strings) are warnings the caller prints to stderr.
 */
import path from "node:path";
import { lazyRequire } from "../core/lazy.js";
import { CONFIG_MAX_BYTES, readHomeFile } from "../core/safe-open.js";
import { registerConfiguredCredentials } from "./credentials.js";
import { splitExtraBody } from "./extra-body.js";
import { type Config, defaultConfig, type KeySpec, SCHEMA, type SectionName } from "./schema.js";

export interface LoadedConfig {
  config: Config;
  /** The file in effect, or undefined when only defaults apply. */
  file?: string;
  warnings: string[];
  /** Dotted keys whose value came from the environment. */
  fromEnv: string[];
}

export interface ConfigError {
  message: string;
}

type Checked =
  | { ok: true; value: unknown }
  | { ok: false; error: string }
  | { ok: "warn"; value: unknown; warning: string };

/** Validates one value against its key spec. `where` names the dotted key for messages. */
function checkValue(spec: KeySpec, value: unknown, where: string): Checked {
  const kind = spec.kind;
  const wrong = (expected: string): Checked => ({
    ok: false,
    error: `${where}: expected ${expected}, got ${describeType(value)}`,
  });
  switch (kind.type) {
    case "string":
      return typeof value === "string" ? { ok: true, value } : wrong("a string");
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value)) return wrong("an integer");
      if (value < kind.min || value > kind.max) {
        return { ok: false, error: `${where}: must be in ${kind.min}..${kind.max}, got ${value}` };
      }
      return { ok: true, value };
    case "bool":
      return typeof value === "boolean" ? { ok: true, value } : wrong("true or false");
    case "enum":
      if (typeof value !== "string") return wrong(`one of ${kind.values.join(", ")}`);
      if (!kind.values.includes(value))
        return { ok: false, error: `${where}: "${value}" is not one of ${kind.values.join(", ")}` };
      return { ok: true, value };
    case "policy": {
      if (typeof value !== "string") return wrong("a policy name (readonly, guarded, unrestricted)");
      const mode = normalisePolicy(value);
      if (mode) return { ok: true, value: mode };
      // A typo must never loosen the gate: an unknown policy in the file becomes readonly, the
      // strictest mode (an environment typo is ignored instead, see applyEnv; README "Policy modes").
      return {
        ok: "warn",
        value: "readonly",
        warning: `${where}: unknown policy "${value}"; using "readonly" (valid: readonly, guarded, unrestricted, yolo)`,
      };
    }
    case "string[]":
      return Array.isArray(value) && value.every((v) => typeof v === "string")
        ? { ok: true, value: [...value] }
        : wrong("a list of strings");
    case "object":
      return isPlainObject(value) ? { ok: true, value: { ...value } } : wrong("a table/object");
    case "table[]":
      return Array.isArray(value) && value.every(isPlainObject)
        ? { ok: true, value: value.map((v) => ({ ...v })) }
        : wrong("a list of tables");
  }
}

export function normalisePolicy(value: string): Config["tools"]["policy"] | undefined {
  const v = value.trim().toLowerCase();
  if (v === "yolo") return "unrestricted";
  if (v === "readonly" || v === "guarded" || v === "unrestricted") return v;
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function describeType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (v instanceof Date) return "a date";
  if (typeof v === "object") return "a table";
  if (typeof v === "string") return `a string ("${v.length > 40 ? `${v.slice(0, 40)}...` : v}")`;
  if (typeof v === "number") return Number.isInteger(v) ? `an integer (${v})` : `a number (${v})`;
  return `a ${typeof v}`;
}

/** Line and column (1-based) of a character offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return { line, column };
}

function parseFile(file: string, text: string): { ok: true; data: unknown } | { ok: false; error: string } {
  if (file.endsWith(".toml")) {
    return parseToml(file, text);
  }
  try {
    return { ok: true, data: JSON.parse(text) };
  } catch (e) {
    const msg = (e as Error).message;
    const pos = /position (\d+)/.exec(msg);
    const lc = pos ? lineColumn(text, Number(pos[1])) : guessJsonEnd(text);
    const reason = msg.replace(/ in JSON at position \d+.*$/s, "").replace(/\s*\(line \d+ column \d+\)/, "");
    return { ok: false, error: `${file}:${lc.line}:${lc.column}: malformed JSON: ${reason}` };
  }
}

/** Node reports "Unexpected end of JSON input" without a position: point at the end. */
function guessJsonEnd(text: string): { line: number; column: number } {
  return lineColumn(text, text.length);
}

/** Only commands that find a config.toml pay for the TOML parser. */
const smolToml = lazyRequire<typeof import("smol-toml")>("smol-toml");

function parseToml(file: string, text: string): { ok: true; data: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, data: smolToml().parse(text) };
  } catch (e) {
    const err = e as Error & { line?: number; column?: number };
    const first = err.message.split("\n")[0]?.replace(/^Invalid TOML document:\s*/, "") ?? "invalid TOML";
    return { ok: false, error: `${file}:${err.line ?? 1}:${err.column ?? 1}: malformed TOML: ${first}` };
  }
}

/**
 * How deep a configuration value may nest (issue 17 item 8). Deeper documents are refused at
 * load, naming the key, because later walks (printing, cloning, the request body) recurse.
 */
export const CONFIG_MAX_DEPTH = 64;

/** The dotted path of the first value nested deeper than `max` levels, found without recursion. */
export function tooDeep(value: unknown, prefix: string, max = CONFIG_MAX_DEPTH): string | undefined {
  const stack: { v: unknown; path: string; depth: number }[] = [{ v: value, path: prefix, depth: 0 }];
  while (stack.length > 0) {
    const { v, path: at, depth } = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth >= max) return at;
    const entries = Array.isArray(v) ? v.map((x, i) => [`[${i}]`, x] as const) : Object.entries(v);
    for (const [k, x] of entries) {
      const child = k.startsWith("[") ? `${at}${k}` : at ? `${at}.${k}` : k;
      stack.push({ v: x, path: child, depth: depth + 1 });
    }
  }
  return undefined;
}

function depthError(value: unknown, dotted: string): string | undefined {
  const deep = tooDeep(value, dotted);
  if (deep === undefined) return undefined;
  // Name the configured key, not the 64-level path under it.
  return `${dotted}: nested deeper than ${CONFIG_MAX_DEPTH} levels (at ${deep.length > 80 ? `${deep.slice(0, 80)}...` : deep}); flatten it`;
}

/** Applies a parsed document over the defaults, per section and key. */
function mergeDocument(
  config: Config,
  doc: unknown,
  file: string,
  warnings: string[],
): ConfigError | undefined {
  if (!isPlainObject(doc)) return { message: `${file}: the top level must be a table/object` };
  const target = config as unknown as Record<string, Record<string, unknown>>;
  for (const [section, body] of Object.entries(doc)) {
    const keys = (SCHEMA as Record<string, Record<string, KeySpec>>)[section];
    if (!keys) {
      warnings.push(`${file}: unknown section "${section}" ignored`);
      continue;
    }
    if (!isPlainObject(body))
      return { message: `${file}: ${section}: expected a table, got ${describeType(body)}` };
    for (const [key, value] of Object.entries(body)) {
      const spec = keys[key];
      const dotted = `${section}.${key}`;
      if (!spec) {
        warnings.push(`${file}: unknown key "${dotted}" ignored (check the spelling)`);
        continue;
      }
      const deep = depthError(value, dotted);
      if (deep) return { message: `${file}: ${deep}` };
      const checked = checkValue(spec, value, dotted);
      if (checked.ok === false) return { message: `${file}: ${checked.error}` };
      if (checked.ok === "warn") warnings.push(`${file}: ${checked.warning}`);
      target[section]![key] = checked.value;
    }
  }
  return undefined;
}

/** Parses an environment string into the key's type, or explains why it cannot. */
function parseEnvValue(
  spec: KeySpec,
  raw: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const kind = spec.kind;
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
      if (["true", "1", "yes", "on"].includes(v)) return { ok: true, value: true };
      if (["false", "0", "no", "off"].includes(v)) return { ok: true, value: false };
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

export function envName(section: string, key: string): string {
  return `SCOOT_${section}_${key}`.toUpperCase();
}

/** Applies `SCOOT_<SECTION>_<KEY>` overrides. A wrong-typed override is ignored with a warning. */
function applyEnv(config: Config, env: NodeJS.ProcessEnv, warnings: string[], fromEnv: string[]): void {
  const target = config as unknown as Record<string, Record<string, unknown>>;
  for (const [section, keys] of Object.entries(SCHEMA)) {
    for (const [key, spec] of Object.entries(keys)) {
      const name = envName(section, key);
      const raw = env[name];
      // An empty value counts as unset.
      if (raw === undefined || raw === "") continue;
      const parsed = parseEnvValue(spec, raw);
      const deep = parsed.ok ? depthError(parsed.value, `${section}.${key}`) : undefined;
      const checked: Checked = deep
        ? { ok: false, error: deep }
        : parsed.ok
          ? checkValue(spec, parsed.value, `${section}.${key}`)
          : parsed;
      if (checked.ok === false) {
        warnings.push(`${name} ignored: ${checked.error.replace(/^[^:]+: /, "")}`);
        continue;
      }
      if (checked.ok === "warn" && spec.kind.type === "policy") {
        // An override typo keeps the configured value: it can neither loosen nor surprise.
        warnings.push(
          `${name} ignored: ${checked.warning.replace(/^[^:]+: /, "").replace(/; using "readonly"/, `; keeping "${String(target[section]![key])}"`)}`,
        );
        continue;
      }
      if (checked.ok === "warn") warnings.push(`${name}: ${checked.warning.replace(/^[^:]+: /, "")}`);
      target[section]![key] = checked.value;
      fromEnv.push(`${section}.${key}`);
    }
  }
}

export function loadConfig(
  home: string,
  env: NodeJS.ProcessEnv,
  /** The library's `configFile` (issue 14): this file instead of the home's; it must exist. */
  explicitFile?: string,
): { ok: true; value: LoadedConfig } | { ok: false; error: ConfigError } {
  const config = defaultConfig();
  const warnings: string[] = [];
  const fromEnv: string[] = [];
  let file: string | undefined;
  const candidates = explicitFile
    ? [explicitFile]
    : ["config.toml", "config.json"].map((n) => path.join(home, n));
  for (const candidate of candidates) {
    // Regular file, at most 1 MiB, never a blocking open (issue 17 item 7); may be a symlink.
    const read = readHomeFile(candidate, { maxBytes: CONFIG_MAX_BYTES, noFollow: false });
    if (!read.ok && read.missing && explicitFile)
      return { ok: false, error: { message: `config file ${candidate} does not exist` } };
    if (!read.ok && read.missing) continue;
    if (!read.ok)
      return {
        ok: false,
        error: {
          message: `${read.error} (the configuration must be a regular file of at most ${CONFIG_MAX_BYTES} bytes)`,
        },
      };
    const text = read.text;
    const parsed = parseFile(candidate, text);
    if (!parsed.ok) return { ok: false, error: { message: parsed.error } };
    const err = mergeDocument(config, parsed.data, candidate, warnings);
    if (err) return { ok: false, error: err };
    file = candidate;
    break;
  }
  applyEnv(config, env, warnings, fromEnv);
  // Shown on stderr by every command and in `doctor`, not only under --trace (issue 17 item 14).
  const ignored = splitExtraBody(config.backend.api, config.backend.extra_body).ignored;
  if (ignored.length > 0) {
    warnings.push(
      `backend.extra_body keys ${ignored.join(", ")} are ignored: Scoot sets them itself` +
        (ignored.includes("store") ? " (use backend.store for store)" : ""),
    );
  }
  registerConfiguredCredentials(config, env);
  if (config.agent.default_mode === "plan") {
    warnings.push('agent.default_mode "plan" is reserved; running as "goal"');
  }
  return { ok: true, value: { config, file, warnings, fromEnv } };
}

/** Keys for listing (`config`) in schema order. */
export function sectionsInOrder(): SectionName[] {
  return Object.keys(SCHEMA) as SectionName[];
}
