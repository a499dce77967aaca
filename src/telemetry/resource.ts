/**
 * The resource of Scoot's log records: what the operator gives wins over Scoot's defaults.
 *
 * Weakest first: Scoot's defaults (`service.name` = scoot, `service.version`, `host.name`),
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME` (over the `service.name` in the former, as the
 * specification says), `telemetry.resource_attributes`, `telemetry.service_name`. When two of
 * the operator's sources give one key different values, a warning names both and the winner;
 * a default replaced by the operator is no conflict (that is what the setting is for).
 */
import os from "node:os";
import { envText, parseKeyValueList } from "./otel-env.js";

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** Attribute keys: the OpenTelemetry convention (dotted lower-case words), generously bounded. */
const ATTRIBUTE_KEY = /^[A-Za-z0-9_.\-/]{1,255}$/;
export const MAX_ATTRIBUTE_VALUE_CHARS = 4096;

interface Source {
  name: string;
  attributes: Attributes;
}

function fileAttributes(configured: Record<string, unknown>, problems: string[]): Attributes {
  const out: Attributes = {};
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

function envAttributes(env: NodeJS.ProcessEnv, problems: string[]): Attributes {
  const raw = envText(env, "OTEL_RESOURCE_ATTRIBUTES");
  if (raw === undefined) return {};
  const out: Attributes = {};
  for (const [k, v] of Object.entries(parseKeyValueList(raw, "OTEL_RESOURCE_ATTRIBUTES", problems, false))) {
    if (!ATTRIBUTE_KEY.test(k))
      problems.push(
        `OTEL_RESOURCE_ATTRIBUTES: the key "${k}" must be letters, digits and . _ - / (at most 255)`,
      );
    else if (v.length > MAX_ATTRIBUTE_VALUE_CHARS)
      problems.push(`OTEL_RESOURCE_ATTRIBUTES: ${k} is longer than ${MAX_ATTRIBUTE_VALUE_CHARS} characters`);
    else out[k] = v;
  }
  return out;
}

export function resolveResource(opts: {
  fileAttributes: Record<string, unknown>;
  fileServiceName: string | undefined;
  env: NodeJS.ProcessEnv;
  version: string;
  problems: string[];
  warnings: string[];
}): Attributes {
  const { env, problems, warnings } = opts;
  const envService = envText(env, "OTEL_SERVICE_NAME");
  const fileService = opts.fileServiceName?.trim() || undefined;
  const sources: Source[] = [
    { name: "OTEL_RESOURCE_ATTRIBUTES", attributes: envAttributes(env, problems) },
    { name: "OTEL_SERVICE_NAME", attributes: envService ? { "service.name": envService } : {} },
    { name: "telemetry.resource_attributes", attributes: fileAttributes(opts.fileAttributes, problems) },
    { name: "telemetry.service_name", attributes: fileService ? { "service.name": fileService } : {} },
  ];
  const out: Attributes = {
    "service.name": "scoot",
    "service.version": opts.version,
    "host.name": os.hostname(),
  };
  const givenBy = new Map<string, Source>();
  for (const source of sources) {
    for (const [k, v] of Object.entries(source.attributes)) {
      const earlier = givenBy.get(k);
      if (earlier && earlier.attributes[k] !== v)
        warnings.push(
          `resource attribute ${k}: ${source.name} ("${String(v)}") wins over ${earlier.name} ("${String(earlier.attributes[k])}")`,
        );
      givenBy.set(k, source);
      out[k] = v;
    }
  }
  return out;
}
