/**
 * Doctor's telemetry checks, present only when telemetry or metrics are configured: the
 * settings resolve, and the collector answers one empty export. An HTTP 4xx is a
 * misconfiguration (FAIL: wrong path, missing credentials); a collector that is down or slow
 * is a WARN — events wait in the audit log and nothing is lost (docs/telemetry.md "Telemetry and metrics").
 */
import type { HomePaths } from "../config/home.js";
import type { Config } from "../config/schema.js";
import { scootVersion } from "../core/version.js";
import { parseListen, resolveTelemetry } from "../telemetry/settings.js";
import type { Check } from "./doctor-check.js";

/** Doctor must answer quickly even when the collector hangs. */
export const DOCTOR_EXPORT_TIMEOUT_MS = 3_000;
const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export async function telemetryChecks(
  config: Config,
  _paths: HomePaths,
  env: NodeJS.ProcessEnv,
): Promise<Check[]> {
  const checks: Check[] = [];
  const listen = config.daemon.metrics_listen?.trim();
  if (listen) {
    const p = parseListen(listen);
    if (!p.ok) checks.push({ name: "metrics", status: "FAIL", detail: p.error });
    else if (!LOOPBACK.has(p.host) && !p.host.startsWith("127."))
      checks.push({
        name: "metrics",
        status: "WARN",
        detail: `daemon.metrics_listen ${p.host}:${p.port} is reachable from other hosts; /metrics has no authentication`,
      });
    else
      checks.push({
        name: "metrics",
        status: "OK",
        detail: `the daemon serves http://${p.host}:${p.port}/metrics`,
      });
  }
  const resolved = resolveTelemetry(config, env, scootVersion());
  if (resolved.kind === "off") return checks;
  if (resolved.kind === "disabled") {
    checks.push({
      name: "telemetry",
      status: "WARN",
      detail: `${resolved.reason}: audit events are not shipped`,
    });
    return checks;
  }
  if (resolved.kind === "invalid") {
    checks.push({ name: "telemetry", status: "FAIL", detail: resolved.problems.join("; ") });
    return checks;
  }
  const s = resolved.settings;
  const warned = s.warnings.length > 0 ? ` (warning: ${s.warnings.join("; ")})` : "";
  const { openLogSink } = await import("../telemetry/otlp.js");
  const sink = await openLogSink(
    { ...s, timeoutMs: Math.min(s.timeoutMs, DOCTOR_EXPORT_TIMEOUT_MS) },
    scootVersion(),
  );
  try {
    const r = await sink.send([]);
    if (r.ok)
      checks.push({
        name: "telemetry",
        status: warned ? "WARN" : "OK",
        detail: `the collector at ${s.logsUrl} accepted an empty export (${s.protocol})${warned}`,
      });
    else if (r.error.status !== undefined && r.error.status >= 400 && r.error.status < 500)
      checks.push({
        name: "telemetry",
        status: "FAIL",
        detail: `the collector at ${s.logsUrl} refused an empty export: ${r.error.message}. Check the endpoint (${s.endpointFrom}; a base URL gets /v1/logs appended, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT is used as given) and the headers`,
      });
    else
      checks.push({
        name: "telemetry",
        status: "WARN",
        detail: `the collector at ${s.logsUrl} did not answer an empty export: ${r.error.message}. Events wait in the audit log until it does`,
      });
  } finally {
    await sink.shutdown();
  }
  return checks;
}
