/**
 * What the OTLP exporter is to do, resolved from `[telemetry]` and the standard `OTEL_*`
 * variables (docs/telemetry.md "Telemetry and metrics"). Pure and free of OpenTelemetry imports: an
 * unconfigured Scoot learns here that there is nothing to load.
 *
 * Precedence: a key written in `[telemetry]` (or its `SCOOT_TELEMETRY_*` override) wins, as code
 * configuration does in the OpenTelemetry SDKs; the `OTEL_*` variables fill in what it leaves
 * unset, by the exporter specification's rules (`otel-env.ts`). `OTEL_SDK_DISABLED=true` and
 * `OTEL_LOGS_EXPORTER=none` turn export off whatever is configured. Problem text never repeats a header value: it may be a
 * credential.
 */
import { validateHeaders } from "../config/mcp-servers.js";
import { type Config, LIMITS } from "../config/schema.js";
import {
  appendLogsPath,
  DEFAULT_PROTOCOL,
  DEFAULT_TIMEOUT_MS,
  headersFromEnv,
  logsEndpointFromEnv,
  logsExporterOff,
  mergeHeaders,
  type OtlpProtocol,
  protocolFromEnv,
  sdkDisabled,
  timeoutFromEnv,
  UNSAFE_HEADER_TEXT,
} from "./otel-env.js";
import { type Attributes, resolveResource } from "./resource.js";

export interface TelemetrySettings {
  /** Where logs are posted, as resolved (the file's base URL + `/v1/logs`, or the OTEL_* rule). */
  logsUrl: string;
  /** Which setting the URL came from, for messages. */
  endpointFrom: string;
  protocol: OtlpProtocol;
  /** Header name → resolved value (credentials: never print). */
  headers: Record<string, string>;
  serviceName: string;
  /** Scoot's defaults, then the operator's attributes over them (`resource.ts`). */
  resource: Attributes;
  timeoutMs: number;
  /** Said once where the settings are used: conflicts between sources, ignored OTEL_* values. */
  warnings: string[];
}

export type Resolved =
  | { kind: "off" }
  | { kind: "disabled"; reason: string }
  | { kind: "on"; settings: TelemetrySettings }
  | { kind: "invalid"; problems: string[] };

/** What `OTEL_SDK_DISABLED=true` does to Scoot, said wherever export would have run. */
export const DISABLED_REASON = "OTEL_SDK_DISABLED=true turns OpenTelemetry export off";
/** What `OTEL_LOGS_EXPORTER=none` does: the audit log is the logs signal, so nothing is shipped. */
export const LOGS_EXPORTER_NONE_REASON = "OTEL_LOGS_EXPORTER=none turns OTLP log export off";

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

/** An authority that ends in ":" with nothing after it: `http://host:` or `http://host:/path`. */
const EMPTY_PORT = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:(?=$|[/?#])/i;

function checkEndpoint(raw: string, where: string, problems: string[]): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    problems.push(`${where}: "${raw}" does not parse as a URL (e.g. http://127.0.0.1:4318)`);
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    problems.push(`${where}: must be an http or https URL (OTLP over gRPC is not supported; use port 4318)`);
    return undefined;
  }
  if (u.hostname === "") {
    problems.push(`${where}: "${raw}" has no host (e.g. http://127.0.0.1:4318)`);
    return undefined;
  }
  if (u.port === "" && EMPTY_PORT.test(raw.trim())) {
    // The URL parser reads "host:" as the scheme's default port (80): almost never the collector.
    problems.push(
      `${where}: "${raw}" has a ":" but no port after it; write the collector's port (OTLP/HTTP listens on 4318, e.g. http://${u.hostname}:4318) or drop the ":"`,
    );
    return undefined;
  }
  if (u.username !== "" || u.password !== "") {
    // Userinfo would be printed wherever the URL is; credentials belong in headers.
    problems.push(`${where}: must not carry credentials (use telemetry.otlp_headers with value_env)`);
    return undefined;
  }
  // A URL without a path gets the root path, as the specification says (and the official exporter does).
  return u.href;
}

function resolveHeaderTables(
  raw: readonly unknown[],
  env: NodeJS.ProcessEnv,
  problems: string[],
): Record<string, string> {
  const own: string[] = [];
  const tables = validateHeaders(raw, own);
  for (const p of own) problems.push(`telemetry.otlp_${p}`);
  const out: Record<string, string> = {};
  for (const h of tables) {
    let value = h.value;
    if (h.value_env !== undefined) {
      value = env[h.value_env];
      if (value === undefined || value === "") {
        problems.push(
          `telemetry.otlp_headers: header ${h.name} needs environment variable ${h.value_env}, which is not set`,
        );
        continue;
      }
      if (UNSAFE_HEADER_TEXT.test(value)) {
        problems.push(
          `telemetry.otlp_headers: environment variable ${h.value_env} (header ${h.name}) contains CR, LF or NUL`,
        );
        continue;
      }
    }
    out[h.name] = (h.prefix ?? "") + (value ?? "");
  }
  return out;
}

/** Resolves the telemetry settings; `off` when no endpoint is configured anywhere. */
export function resolveTelemetry(config: Config, env: NodeJS.ProcessEnv, version: string): Resolved {
  const t = config.telemetry;
  const problems: string[] = [];
  const warnings: string[] = [];
  const fromFile = nonEmpty(t.otlp_endpoint);
  const fromEnv = fromFile === undefined ? logsEndpointFromEnv(env) : undefined;
  if (fromFile === undefined && fromEnv === undefined) return { kind: "off" };
  if (sdkDisabled(env, warnings)) return { kind: "disabled", reason: DISABLED_REASON };
  if (logsExporterOff(env, warnings)) return { kind: "disabled", reason: LOGS_EXPORTER_NONE_REASON };
  const endpointFrom = fromFile !== undefined ? "telemetry.otlp_endpoint" : fromEnv!.from;
  const logsUrl =
    fromFile !== undefined
      ? checkEndpoint(fromFile, endpointFrom, problems)
      : checkEndpoint(fromEnv!.value, endpointFrom, problems);
  const envProtocol = t.otlp_protocol === undefined ? protocolFromEnv(env, problems) : undefined;
  const envTimeout =
    t.timeout_ms === undefined ? timeoutFromEnv(env, LIMITS.TIMEOUT_MS_MAX, warnings) : undefined;
  const headers = mergeHeaders(
    headersFromEnv(env, problems),
    resolveHeaderTables(t.otlp_headers, env, problems),
  );
  const resource = resolveResource({
    fileAttributes: t.resource_attributes,
    fileServiceName: t.service_name,
    env,
    version,
    problems,
    warnings,
  });
  if (problems.length > 0 || logsUrl === undefined) return { kind: "invalid", problems };
  return {
    kind: "on",
    settings: {
      // The file's key is a base URL (as OTEL_EXPORTER_OTLP_ENDPOINT is); the env rule resolved its own.
      logsUrl: fromFile !== undefined ? appendLogsPath(logsUrl) : logsUrl,
      endpointFrom,
      protocol: t.otlp_protocol ?? envProtocol?.value ?? DEFAULT_PROTOCOL,
      headers,
      serviceName: String(resource["service.name"]),
      resource,
      timeoutMs: t.timeout_ms ?? envTimeout?.value ?? DEFAULT_TIMEOUT_MS,
      warnings,
    },
  };
}

/** `daemon.metrics_listen`: `host:port`, `[v6]:port`, or a bare port on 127.0.0.1. */
export function parseListen(
  raw: string,
): { ok: true; host: string; port: number } | { ok: false; error: string } {
  const text = raw.trim();
  const bad = (why: string) => ({
    ok: false as const,
    error: `daemon.metrics_listen: "${raw}" ${why} (e.g. "127.0.0.1:9464", or "9464" for loopback)`,
  });
  let host = "127.0.0.1";
  let portText = text;
  const v6 = /^\[([0-9A-Fa-f:.]+)\]:(\d+)$/.exec(text);
  if (v6) {
    host = v6[1]!;
    portText = v6[2]!;
  } else if (text.includes(":")) {
    const i = text.lastIndexOf(":");
    host = text.slice(0, i);
    portText = text.slice(i + 1);
    if (host === "" || !/^[A-Za-z0-9.-]+$/.test(host)) return bad("has no valid host before the port");
  }
  if (!/^\d{1,5}$/.test(portText)) return bad("needs a port number");
  const port = Number(portText);
  if (port < 1 || port > 65_535) return bad("needs a port in 1..65535");
  return { ok: true, host, port };
}
