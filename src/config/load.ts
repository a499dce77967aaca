/**
 * Loads the configuration: `config.toml`, else `config.json`, else defaults; merged per
 * section and key; then `SCOOT_*` environment overrides (env > file > default).
 *
 * Fatal problems (malformed file, wrong-typed key, a value its key refuses) come back together
 * as one `ConfigError`, which the CLI turns into exit 2. Soft problems (unknown keys,
 * wrong-typed env overrides, unknown policy strings) are warnings the caller prints to stderr.
 */
import path from "node:path";
import { lazyRequire } from "../core/lazy.js";
import { CONFIG_MAX_BYTES, readHomeFile } from "../core/safe-open.js";
import { registerConfiguredCredentials } from "./credentials.js";
import { type Checked, describeType, isPlainObject, type KeySpec } from "./declare.js";
import { splitExtraBody } from "./extra-body.js";
import { type Config, defaultConfig, SCHEMA, type SectionName } from "./schema.js";
import { untrustedFileProblem } from "./trusted-file.js";

export interface LoadedConfig {
  config: Config;
  /** The file in effect, or undefined when only defaults apply. */
  file?: string;
  warnings: string[];
  /** Dotted keys whose value came from the environment. */
  fromEnv: string[];
}

export interface ConfigError {
  /** Every problem, one per line. */
  message: string;
  /** The same problems, one item each, in the order found (the file, then the environment). */
  problems: string[];
  /** The warnings found on the way (shown with the problems: a fix may need both). */
  warnings: string[];
}

/** A load that stops at one problem (the file cannot be read or parsed). */
function failed(message: string, warnings: string[] = []): { ok: false; error: ConfigError } {
  return { ok: false, error: { message, problems: [message], warnings } };
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
 * How deep a configuration value may nest. Deeper documents are refused at
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

/**
 * Applies a parsed document over the defaults, per section and key. Every problem is
 * collected, not only the first: someone fixing a file should see all of them at once.
 */
function mergeDocument(
  config: Config,
  doc: unknown,
  file: string,
  warnings: string[],
  errors: string[],
): void {
  if (!isPlainObject(doc)) {
    errors.push(`${file}: the top level must be a table/object`);
    return;
  }
  const target = config as unknown as Record<string, Record<string, unknown>>;
  for (const [section, body] of Object.entries(doc)) {
    const keys = (SCHEMA as Record<string, Record<string, KeySpec>>)[section];
    if (!keys) {
      warnings.push(`${file}: unknown section "${section}" ignored`);
      continue;
    }
    if (!isPlainObject(body)) {
      errors.push(`${file}: ${section}: expected a table, got ${describeType(body)}`);
      continue;
    }
    for (const [key, value] of Object.entries(body)) {
      const spec = keys[key];
      const dotted = `${section}.${key}`;
      if (!spec) {
        warnings.push(`${file}: unknown key "${dotted}" ignored (check the spelling)`);
        continue;
      }
      const deep = depthError(value, dotted);
      if (deep) {
        errors.push(`${file}: ${deep}`);
        continue;
      }
      const checked = spec.check(value, dotted);
      if (checked.ok === false) {
        errors.push(`${file}: ${checked.error}`);
        continue;
      }
      if (checked.ok === "warn") warnings.push(`${file}: ${checked.warning}`);
      target[section]![key] = checked.value;
    }
  }
}

/**
 * Applies `SCOOT_<SECTION>_<KEY>` overrides. A wrong-typed override is ignored with a warning; a
 * value of the right type its key refuses (a base URL without http://) is an error.
 */
function applyEnv(
  config: Config,
  env: NodeJS.ProcessEnv,
  out: { warnings: string[]; errors: string[]; fromEnv: string[] },
): void {
  const { warnings, errors, fromEnv } = out;
  const target = config as unknown as Record<string, Record<string, unknown>>;
  for (const [section, keys] of Object.entries(SCHEMA)) {
    for (const [key, spec] of Object.entries(keys)) {
      const name = spec.env;
      const raw = env[name];
      // An empty value counts as unset.
      if (raw === undefined || raw === "") continue;
      const parsed = spec.parseEnv(raw);
      const deep = parsed.ok ? depthError(parsed.value, `${section}.${key}`) : undefined;
      const checked: Checked = deep
        ? { ok: false, error: deep }
        : parsed.ok
          ? spec.check(parsed.value, `${section}.${key}`)
          : parsed;
      if (checked.ok === false && checked.refused) {
        errors.push(`${name}: ${checked.error.replace(/^[^:]+: /, "")}`);
        continue;
      }
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
  /** The library's `configFile`: this file instead of the home's; it must exist. */
  explicitFile?: string,
): { ok: true; value: LoadedConfig } | { ok: false; error: ConfigError } {
  const config = defaultConfig();
  const warnings: string[] = [];
  const errors: string[] = [];
  const fromEnv: string[] = [];
  let file: string | undefined;
  const candidates = explicitFile
    ? [explicitFile]
    : ["config.toml", "config.json"].map((n) => path.join(home, n));
  for (const candidate of candidates) {
    // Trusted by identity before it is read: owner, mode, one name, no foreign directory on its path.
    const untrusted = untrustedFileProblem(candidate, "config file");
    if (untrusted) return failed(untrusted);
    // Regular file, at most 1 MiB, never a blocking open; may be a symlink.
    const read = readHomeFile(candidate, { maxBytes: CONFIG_MAX_BYTES, noFollow: false });
    if (!read.ok && read.missing && explicitFile) return failed(`config file ${candidate} does not exist`);
    if (!read.ok && read.missing) continue;
    if (!read.ok)
      return failed(
        `${read.error} (the configuration must be a regular file of at most ${CONFIG_MAX_BYTES} bytes)`,
      );
    const text = read.text;
    const parsed = parseFile(candidate, text);
    if (!parsed.ok) return failed(parsed.error);
    mergeDocument(config, parsed.data, candidate, warnings, errors);
    file = candidate;
    break;
  }
  applyEnv(config, env, { warnings, errors, fromEnv });
  if (errors.length > 0)
    return { ok: false, error: { message: errors.join("\n"), problems: errors, warnings } };
  // Shown on stderr by every command and in `doctor`, not only under --trace.
  const ignored = splitExtraBody(config.backend.api, config.backend.extra_body).ignored;
  if (ignored.length > 0) {
    warnings.push(
      `backend.extra_body keys ${ignored.join(", ")} are ignored: Scoot sets them itself` +
        (ignored.includes("store") ? " (use backend.store for store)" : ""),
    );
  }
  registerConfiguredCredentials(config, env);
  return { ok: true, value: { config, file, warnings, fromEnv } };
}

/** Keys for listing (`config`) in schema order. */
export function sectionsInOrder(): SectionName[] {
  return Object.keys(SCHEMA) as SectionName[];
}
