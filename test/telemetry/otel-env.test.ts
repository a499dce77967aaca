/**
 * Scoot reads the OTLP exporter's variables as the official OpenTelemetry JS exporter does:
 * for each environment below, the logs URL, the headers and the timeout Scoot resolves
 * (src/telemetry/otel-env.ts via settings.ts) equal what the official exporter's own resolver
 * (`convertLegacyHttpOptions` of @opentelemetry/otlp-exporter-base, the one OTLPLogExporter calls)
 * makes of the same variables; the resource equals what the official env detector gives, over
 * Scoot's defaults. Scoot differs only where the official one is silent about a bad value.
 */
import { convertLegacyHttpOptions } from "@opentelemetry/otlp-exporter-base/node-http";
import { detectResources, envDetector } from "@opentelemetry/resources";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { resolveTelemetry } from "../../src/telemetry/settings.js";

const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

function withEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  for (const k of Object.keys(process.env)) if (k.startsWith("OTEL_")) delete process.env[k];
  Object.assign(process.env, env);
  return { ...env };
}

async function official() {
  const c = convertLegacyHttpOptions({}, "LOGS", "v1/logs", {});
  return { url: c.url, headers: await c.headers(), timeoutMillis: c.timeoutMillis };
}

const CASES: Record<string, string>[] = [
  { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "http://logs.example:4318/custom/path" },
  { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "http://logs.example:4318" },
  { OTEL_EXPORTER_OTLP_ENDPOINT: "http://base.example:4318" },
  { OTEL_EXPORTER_OTLP_ENDPOINT: "http://base.example:4318/prefix/" },
  { OTEL_EXPORTER_OTLP_ENDPOINT: "https://base.example/prefix" },
  {
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://base.example:4318",
    OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "http://logs.example:9999/v1/logs",
    OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=general,x-region=eu%20west",
    OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x-tenant=logs,authorization=Bearer%20abc",
    OTEL_EXPORTER_OTLP_TIMEOUT: "7000",
    OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: "2500",
  },
  {
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://base.example:4318",
    OTEL_EXPORTER_OTLP_HEADERS: "x-only=general",
    OTEL_EXPORTER_OTLP_TIMEOUT: "1234",
  },
];

describe("the same variables, resolved by Scoot and by the official exporter", () => {
  it.each(CASES)("%j", async (vars) => {
    const env = withEnv(vars);
    const mine = resolveTelemetry(defaultConfig(), env, "1.2.3");
    if (mine.kind !== "on") throw new Error(JSON.stringify(mine));
    const theirs = await official();
    expect(mine.settings.logsUrl).toBe(theirs.url);
    expect(mine.settings.headers).toEqual(theirs.headers);
    expect(mine.settings.timeoutMs).toBe(theirs.timeoutMillis);
  });

  it("the resource: the official env detector's attributes, over Scoot's defaults", async () => {
    const env = withEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=attr-name,host.name=node-7,deployment.environment=prod%20eu",
      OTEL_SERVICE_NAME: "env-name",
    });
    const mine = resolveTelemetry(defaultConfig(), env, "1.2.3");
    if (mine.kind !== "on") throw new Error(JSON.stringify(mine));
    const detected = detectResources({ detectors: [envDetector] });
    await detected.waitForAsyncAttributes?.();
    const theirs = detected.attributes;
    expect(Object.keys(theirs).length).toBeGreaterThan(2);
    for (const [k, v] of Object.entries(theirs)) expect(mine.settings.resource[k], k).toBe(v);
    expect(mine.settings.resource["service.version"]).toBe("1.2.3");
  });
});
