/**
 * What the OTLP exporter is to do, resolved from `[telemetry]` and the standard `OTEL_*`
 * variables (docs/telemetry.md "Telemetry and metrics"). Pure and free of OpenTelemetry imports: an
 * unconfigured Scoot learns here that there is nothing to load.
 *
 * Precedence: a key written in `[telemetry]` (or its `SCOOT_TELEMETRY_*` override) wins; the
 * `OTEL_*` variable fills in what the configuration leaves unset, as OpenTelemetry SDKs do.
 * Problem text never repeats a header value: it may be a credential.
 */
import os from "node:os";
import { validateHeaders } from "../config/mcp-servers.js";
import type { Config } from "../config/schema.js";

export type OtlpProtocol = "http/protobuf" | "http/json";

export interface TelemetrySettings {
  /** The base URL, as configured. */
  endpoint: string;
  /** Where logs are posted: `<endpoint>/v1/logs`. */
  logsUrl: string;
  protocol: OtlpProtocol;
  /** Header name → resolved value (credentials: never print). */
  headers: Record<string, string>;
  serviceName: string;
  /** service.name, service.version, host.name, then the configured and OTEL_* attributes. */
  resource: Record<string, string | number | boolean>;
  timeoutMs: number;
}

export type Resolved =
  | { kind: "off" }
  | { kind: "on"; settings: TelemetrySettings }
  | { kind: "invalid"; problems: string[] };

/** The OTLP/HTTP path for logs, appended to the base endpoint (the OTEL_EXPORTER_OTLP_ENDPOINT rule). */
export const LOGS_PATH = "/v1/logs";
/** A header value may not smuggle another header or end the request head. */
const UNSAFE_HEADER_TEXT = /[\r\n\0]/;
/** Attribute keys: the OpenTelemetry convention (dotted lower-case words), generously bounded. */
const ATTRIBUTE_KEY = /^[A-Za-z0-9_.\-/]{1,255}$/;
const MAX_ATTRIBUTE_VALUE_CHARS = 4096;

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

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
  if (u.username !== "" || u.password !== "") {
    // Userinfo would be printed wherever the URL is; credentials belong in headers.
    problems.push(`${where}: must not carry credentials (use telemetry.otlp_headers with value_env)`);
    return undefined;
  }
  return raw;
}

/** `k=v,k2=v2`, values URL-encoded (the W3C Baggage-like format the OTEL_* variables use). */
export function parseKeyValueList(
  raw: string,
  where: string,
  problems: string[],
  secretValues: boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [i, pair] of raw.split(",").entries()) {
    if (pair.trim() === "") continue;
    const eq = pair.indexOf("=");
    const key = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    if (eq < 0 || key === "") {
      problems.push(`${where}: entry ${i + 1} is not key=value`);
      continue;
    }
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      problems.push(
        `${where}: the value of ${key} has a malformed %-escape${secretValues ? "" : ` ("${pair}")`}`,
      );
      continue;
    }
    out[key] = value;
  }
  return out;
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

function resourceAttributes(
  configured: Record<string, unknown>,
  fromEnv: string | undefined,
  problems: string[],
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (fromEnv) {
    for (const [k, v] of Object.entries(
      parseKeyValueList(fromEnv, "OTEL_RESOURCE_ATTRIBUTES", problems, false),
    ))
      out[k] = v;
  }
  for (const [k, v] of Object.entries(configured)) {
    const where = `telemetry.resource_attributes.${k}`;
    if (!ATTRIBUTE_KEY.test(k)) {
      problems.push(`${where}: the key must be letters, digits and . _ - / (at most 255)`);
      continue;
    }
    if (typeof v === "string") {
      if (v.length > MAX_ATTRIBUTE_VALUE_CHARS)
        problems.push(`${where}: longer than ${MAX_ATTRIBUTE_VALUE_CHARS} characters`);
      else out[k] = v;
    } else if (typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) out[k] = v;
    else problems.push(`${where}: must be a string, a number or true/false`);
  }
  return out;
}

/** Resolves the telemetry settings; `off` when no endpoint is configured anywhere. */
export function resolveTelemetry(config: Config, env: NodeJS.ProcessEnv, version: string): Resolved {
  const t = config.telemetry;
  const problems: string[] = [];
  const fromFile = nonEmpty(t.otlp_endpoint);
  const rawEndpoint = fromFile ?? nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (rawEndpoint === undefined) return { kind: "off" };
  const endpoint = checkEndpoint(
    rawEndpoint,
    fromFile ? "telemetry.otlp_endpoint" : "OTEL_EXPORTER_OTLP_ENDPOINT",
    problems,
  );
  const headers: Record<string, string> = {};
  const envHeaders = nonEmpty(env.OTEL_EXPORTER_OTLP_HEADERS);
  if (envHeaders) {
    for (const [k, v] of Object.entries(
      parseKeyValueList(envHeaders, "OTEL_EXPORTER_OTLP_HEADERS", problems, true),
    )) {
      if (UNSAFE_HEADER_TEXT.test(v))
        problems.push(`OTEL_EXPORTER_OTLP_HEADERS: ${k} contains CR, LF or NUL`);
      else headers[k] = v;
    }
  }
  Object.assign(headers, resolveHeaderTables(t.otlp_headers, env, problems));
  const serviceName = nonEmpty(t.service_name) ?? nonEmpty(env.OTEL_SERVICE_NAME) ?? "scoot";
  const resource = {
    ...resourceAttributes(t.resource_attributes, nonEmpty(env.OTEL_RESOURCE_ATTRIBUTES), problems),
    // Scoot's identity is not configurable: a backend groups by it.
    "service.name": serviceName,
    "service.version": version,
    "host.name": os.hostname(),
  };
  if (problems.length > 0 || endpoint === undefined) return { kind: "invalid", problems };
  return {
    kind: "on",
    settings: {
      endpoint,
      logsUrl: `${endpoint.replace(/\/+$/, "")}${LOGS_PATH}`,
      protocol: t.otlp_protocol,
      headers,
      serviceName,
      resource,
      timeoutMs: t.timeout_ms,
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
