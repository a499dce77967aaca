/**
 * The OTLP exporter's environment variables for the logs signal, read as the OpenTelemetry
 * specification defines them (https://opentelemetry.io/docs/specs/otel/protocol/exporter/):
 * the signal-specific variable (`OTEL_EXPORTER_OTLP_LOGS_*`) over the general one
 * (`OTEL_EXPORTER_OTLP_*`); the logs endpoint used as given, the base endpoint with `v1/logs`
 * appended; headers merged per key, the logs-specific ones winning; `OTEL_SDK_DISABLED`.
 *
 * Pure and free of OpenTelemetry imports (Scoot decides whether there is anything to load before
 * loading it). The official exporter resolves the same variables the same way
 * (`test/telemetry/otel-env.test.ts` holds the two side by side), but silently: a URL it cannot
 * parse becomes http://localhost:4318, a malformed header list is dropped. Here every bad value
 * gets a message naming the variable.
 */

/** The OTLP/HTTP path of the logs signal, relative to the base endpoint. */
export const LOGS_RESOURCE_PATH = "v1/logs";
/** The specification's default per-request timeout. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** The encodings the official exporters in package.json speak (OTLP over HTTP only). */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];
/** The specification's default protocol. */
export const DEFAULT_PROTOCOL: OtlpProtocol = "http/protobuf";
/** A header value may not smuggle another header or end the request head. */
export const UNSAFE_HEADER_TEXT = /[\r\n\0]/;

/** A value from the environment with the name of the variable it came from. */
export interface FromEnv<T> {
  value: T;
  from: string;
}

/** Unset, empty and blank are all "not set" (as the official exporter reads them). */
export function envText(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

/** The first of the names that is set, with its name. */
function firstSet(env: NodeJS.ProcessEnv, names: readonly string[]): FromEnv<string> | undefined {
  for (const from of names) {
    const value = envText(env, from);
    if (value !== undefined) return { value, from };
  }
  return undefined;
}

/** `<base>` + `/` when missing + `v1/logs` (the rule for OTEL_EXPORTER_OTLP_ENDPOINT and the base URL in the file). */
export function appendLogsPath(base: string): string {
  return `${base.endsWith("/") ? base : `${base}/`}${LOGS_RESOURCE_PATH}`;
}

/**
 * The logs URL from the environment: `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` as given, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `v1/logs` appended; undefined when neither is set.
 */
export function logsEndpointFromEnv(env: NodeJS.ProcessEnv): FromEnv<string> | undefined {
  const specific = envText(env, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT");
  if (specific !== undefined) return { value: specific, from: "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT" };
  const base = envText(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (base !== undefined) return { value: appendLogsPath(base), from: "OTEL_EXPORTER_OTLP_ENDPOINT" };
  return undefined;
}

/** `OTEL_SDK_DISABLED`: only `true` (any case) disables; another value than true/false is a warning. */
export function sdkDisabled(env: NodeJS.ProcessEnv, warnings: string[]): boolean {
  const raw = envText(env, "OTEL_SDK_DISABLED")?.toLowerCase();
  if (raw === undefined || raw === "false") return false;
  if (raw === "true") return true;
  warnings.push(`OTEL_SDK_DISABLED: "${raw}" is neither true nor false; taken as false (telemetry stays on)`);
  return false;
}

/**
 * `OTEL_LOGS_EXPORTER` (the SDK environment specification's exporter selector, a comma-separated
 * list, `otlp` by default): true when it is `none`, which turns log export off. Scoot ships its
 * logs over OTLP only, so another value (`console`) is ignored with a warning, and so is `none`
 * listed beside another exporter (the specification's own rule).
 */
export function logsExporterOff(env: NodeJS.ProcessEnv, warnings: string[]): boolean {
  const raw = envText(env, "OTEL_LOGS_EXPORTER");
  if (raw === undefined) return false;
  const values = raw
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== "");
  if (values.length === 1 && values[0] === "none") return true;
  if (values.includes("none"))
    warnings.push(`OTEL_LOGS_EXPORTER: "${raw}" lists none beside another exporter; none is ignored`);
  const other = values.filter((v) => v !== "otlp" && v !== "none");
  if (other.length > 0)
    warnings.push(
      `OTEL_LOGS_EXPORTER: ${other.join(", ")} ignored: Scoot exports logs over OTLP only (otlp, or none to turn it off)`,
    );
  return false;
}

/** `OTEL_EXPORTER_OTLP_LOGS_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`; a value Scoot cannot speak is a problem. */
export function protocolFromEnv(
  env: NodeJS.ProcessEnv,
  problems: string[],
): FromEnv<OtlpProtocol> | undefined {
  const set = firstSet(env, ["OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]);
  if (!set) return undefined;
  const value = set.value.toLowerCase();
  if ((OTLP_PROTOCOLS as readonly string[]).includes(value))
    return { value: value as OtlpProtocol, from: set.from };
  if (value === "grpc")
    problems.push(
      `${set.from}: "grpc" is not supported: Scoot exports OTLP over HTTP only; set http/protobuf or http/json and use the collector's OTLP/HTTP port (4318)`,
    );
  else problems.push(`${set.from}: "${set.value}" is not one of ${OTLP_PROTOCOLS.join(", ")}`);
  return undefined;
}

/**
 * `OTEL_EXPORTER_OTLP_LOGS_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT`, in milliseconds. A value
 * that is not a whole number in 1..max is ignored with a warning, as the specification asks of
 * numeric variables, and the next source is used.
 */
export function timeoutFromEnv(
  env: NodeJS.ProcessEnv,
  maxMs: number,
  warnings: string[],
): FromEnv<number> | undefined {
  for (const from of ["OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"]) {
    const raw = envText(env, from);
    if (raw === undefined) continue;
    const n = Number(raw);
    if (/^\d+$/.test(raw) && n >= 1 && n <= maxMs) return { value: n, from };
    warnings.push(`${from}: "${raw}" is not a whole number of milliseconds in 1..${maxMs}; ignored`);
  }
  return undefined;
}

/** `k=v,k2=v2`, keys and values URL-encoded (the W3C Baggage-like format the OTEL_* variables use). */
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
    let name: string;
    try {
      name = decodeURIComponent(key);
      value = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      problems.push(
        `${where}: the value of ${key} has a malformed %-escape${secretValues ? "" : ` ("${pair}")`}`,
      );
      continue;
    }
    out[name] = value;
  }
  return out;
}

/**
 * Merges header sets per name, case-insensitively (HTTP header names are): a later set's value
 * replaces an earlier one's, whatever the case of either name.
 */
export function mergeHeaders(...sets: Record<string, string>[]): Record<string, string> {
  const out: Record<string, string> = {};
  const byLower = new Map<string, string>();
  for (const set of sets) {
    for (const [name, value] of Object.entries(set)) {
      const lower = name.toLowerCase();
      const earlier = byLower.get(lower);
      if (earlier !== undefined) delete out[earlier];
      byLower.set(lower, name);
      out[name] = value;
    }
  }
  return out;
}

/** `OTEL_EXPORTER_OTLP_HEADERS`, then `OTEL_EXPORTER_OTLP_LOGS_HEADERS` over it, per key. */
export function headersFromEnv(env: NodeJS.ProcessEnv, problems: string[]): Record<string, string> {
  const sets: Record<string, string>[] = [];
  for (const from of ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS"]) {
    const raw = envText(env, from);
    if (raw === undefined) continue;
    const set: Record<string, string> = {};
    for (const [k, v] of Object.entries(parseKeyValueList(raw, from, problems, true))) {
      if (UNSAFE_HEADER_TEXT.test(k) || UNSAFE_HEADER_TEXT.test(v))
        problems.push(`${from}: ${k.replace(UNSAFE_HEADER_TEXT, "?")} contains CR, LF or NUL`);
      else set[k] = v;
    }
    sets.push(set);
  }
  return mergeHeaders(...sets);
}
