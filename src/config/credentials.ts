/**
 * The one place that tells the redactor about every credential the configuration names
 * (docs/safety.md "Hostile inputs"): MCP header values (inline `value`, the value of
 * the variable named by `value_env`, and both with their `prefix`) and the `env` entries of
 * MCP stdio servers that hold credentials (`value_env`, or `secret = true`). A server that echoes a header or its environment in an error must not
 * put it in clear text into the audit log, the transcript, the trace or the terminal. Called
 * by `loadConfig`, so every command that loads the configuration (doctor included) registers
 * them before anything is written. The backend token registers itself where it is resolved.
 */
import { registerSecret } from "../core/redact.js";
import type { Config } from "./schema.js";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Works on the raw server tables, so even an entry that fails validation is covered. */
export function registerConfiguredCredentials(config: Config, env: NodeJS.ProcessEnv): void {
  registerHeaderValues(config.telemetry.otlp_headers, env);
  registerOtlpEnvHeaders(env.OTEL_EXPORTER_OTLP_HEADERS);
  for (const server of config.mcp.servers) {
    if (!isObject(server)) continue;
    registerHeaderValues(Array.isArray(server.headers) ? server.headers : [], env);
    // A plain `env` value is configuration ("readonly", a path): only credentials are registered,
    // or every occurrence of an ordinary word would be redacted (docs/mcp.md "MCP servers").
    const vars = Array.isArray(server.env) ? server.env : [];
    for (const e of vars) {
      if (!isObject(e)) continue;
      if (e.secret === true && typeof e.value === "string" && e.value !== "") registerSecret(e.value);
      if (typeof e.value_env === "string") {
        const v = env[e.value_env];
        if (typeof v === "string" && v !== "") registerSecret(v);
      }
    }
  }
}

/** Header values (MCP servers, the OTLP exporter: docs/telemetry.md "Telemetry and metrics"), with and without their prefix. */
function registerHeaderValues(headers: readonly unknown[], env: NodeJS.ProcessEnv): void {
  for (const h of headers) {
    if (!isObject(h)) continue;
    const prefix = typeof h.prefix === "string" ? h.prefix : "";
    const values: unknown[] = [h.value];
    if (typeof h.value_env === "string") values.push(env[h.value_env]);
    for (const v of values) {
      if (typeof v !== "string" || v === "") continue;
      registerSecret(v);
      if (prefix) registerSecret(prefix + v);
    }
  }
}

/** `OTEL_EXPORTER_OTLP_HEADERS` is `k=v,k2=v2` (values URL-encoded): every value is a credential. */
function registerOtlpEnvHeaders(raw: string | undefined): void {
  if (!raw) return;
  for (const pair of raw.split(",")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const value = pair.slice(eq + 1).trim();
    if (value === "") continue;
    registerSecret(value);
    try {
      registerSecret(decodeURIComponent(value));
    } catch {
      // a malformed escape: the raw text is registered already
    }
  }
}
