/** `scoot config`: resolved home, file in effect, every section, and the token source (never its value). */

import { ruleNotes } from "../agent/approval-rules.js";
import type { KeySpec } from "../config/declare.js";
import { sectionsInOrder } from "../config/load.js";
import { type Config, SCHEMA } from "../config/schema.js";
import { resolveToken } from "../config/secrets.js";
import { REDACTED, redact } from "../core/redact.js";
import { flagBool } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";

/** Header values in MCP server entries may be literal credentials: never print them. */
function withoutSecrets(config: Config): Config {
  const copy = structuredClone(config);
  copy.mcp.servers = copy.mcp.servers.map((s) => {
    const headers = Array.isArray(s.headers)
      ? s.headers.map((h) =>
          typeof h === "object" && h !== null && "value" in h ? { ...h, value: REDACTED } : h,
        )
      : s.headers;
    // Plain env values are configuration and shown; those marked secret are not.
    const env = Array.isArray(s.env)
      ? s.env.map((e) =>
          typeof e === "object" && e !== null && "value" in e && (e as { secret?: unknown }).secret === true
            ? { ...e, value: REDACTED }
            : e,
        )
      : s.env;
    return { ...s, ...(headers ? { headers } : {}), ...(env ? { env } : {}) };
  });
  // The OTLP headers are written like MCP headers, with the same kind of credentials.
  copy.telemetry.otlp_headers = copy.telemetry.otlp_headers.map((h) =>
    typeof h === "object" && h !== null && "value" in h ? { ...h, value: REDACTED } : h,
  );
  return copy;
}

function tomlValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(", ")}]`;
  if (typeof v === "object" && v !== null) {
    const parts = Object.entries(v).map(
      ([k, x]) => `${/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k)} = ${tomlValue(x)}`,
    );
    return `{ ${parts.join(", ")} }`;
  }
  return JSON.stringify(v);
}

export async function runConfig(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot config: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { config, file, paths, fromEnv } = loaded.value;
  const token = resolveToken(config, paths.configDir, cli.env, cli.cwd);
  const shown = withoutSecrets(config);
  const tokenLine = token.error ? `${token.detail} (refused: ${token.error})` : token.detail;

  if (flagBool(cli.args, "json")) {
    const out = {
      home: paths.root,
      config_dir: paths.configDir,
      config_file: file ?? null,
      token_source: token.source,
      token_detail: tokenLine,
      from_env: fromEnv,
      config: shown,
    };
    cli.io.out(`${redact(JSON.stringify(out, null, 2))}\n`);
    return EXIT.ok;
  }
  const lines: string[] = [];
  lines.push(`# home: ${paths.root}`);
  if (paths.configDir !== paths.root) lines.push(`# config directory: ${paths.configDir}`);
  lines.push(`# config file: ${file ?? "none (defaults)"}`);
  lines.push(`# token source: ${tokenLine}`);
  if (fromEnv.length > 0) lines.push(`# from environment: ${fromEnv.join(", ")}`);
  const record = shown as unknown as Record<string, Record<string, unknown>>;
  // What each rule covers, in the words of the approval question (docs/safety.md "Rules").
  const notes = ruleNotes(config.tools.rules);
  for (const section of sectionsInOrder()) {
    const body = record[section]!;
    const tables: [string, unknown[]][] = [];
    lines.push("", `[${section}]`);
    // In declaration order, every key: an unset optional one says so (and what its absence
    // means, when that is declared), since no single value is in effect.
    for (const [key, spec] of Object.entries(SCHEMA[section]) as [string, KeySpec][]) {
      const value = body[key];
      if (value === undefined) {
        lines.push(`# ${key} = (unset${spec.unset !== undefined ? `: ${spec.unset}` : ""})`);
      } else if (
        Array.isArray(value) &&
        value.length > 0 &&
        value.every((v) => typeof v === "object" && v !== null)
      ) {
        tables.push([key, value]);
      } else {
        lines.push(`${key} = ${tomlValue(value)}`);
      }
    }
    for (const [key, entries] of tables) {
      for (const [i, entry] of entries.entries()) {
        lines.push("", `[[${section}.${key}]]`);
        const note = notes.get(`${section}.${key}[${i}]`);
        if (note) lines.push(`# ${note}`);
        for (const [k, v] of Object.entries(entry as Record<string, unknown>))
          lines.push(`${k} = ${tomlValue(v)}`);
      }
    }
  }
  cli.io.out(`${redact(lines.join("\n"))}\n`);
  return EXIT.ok;
}
