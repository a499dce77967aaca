/**
 * What `scoot audit export` and `scoot daemon run` share before shipping: the resolved
 * settings, the audit key (the chain hashes are HMACs when the log has one), the cursor file
 * and the exporter lock, which keeps two shippers of one home from sending everything twice.
 */
import path from "node:path";
import type { HomePaths } from "../config/home.js";
import type { Config } from "../config/schema.js";
import { type HeldLock, tryLock } from "../core/lock.js";
import type { Result } from "../core/types.js";
import { scootVersion } from "../core/version.js";
import { loadAuditKey } from "../store/audit-chain.js";
import { auditOptions } from "../store/audit-writer.js";
import { CURSOR_FILE } from "./cursor.js";
import { resolveTelemetry, type TelemetrySettings } from "./settings.js";

export const EXPORT_LOCK_FILE = "telemetry-export.lock";

export interface ExportSetup {
  settings: TelemetrySettings;
  key: Buffer | undefined;
  cursorFile: string;
  lockFile: string;
  version: string;
}

export const NOT_CONFIGURED =
  "telemetry is not configured: set otlp_endpoint under [telemetry] in config.toml (or OTEL_EXPORTER_OTLP_ENDPOINT), e.g. http://127.0.0.1:4318";

/** undefined when telemetry is off; an error listing every problem when it is misconfigured. */
export function prepareExport(
  config: Config,
  paths: HomePaths,
  env: NodeJS.ProcessEnv,
): Result<ExportSetup | undefined> {
  const version = scootVersion();
  const resolved = resolveTelemetry(config, env, version);
  if (resolved.kind === "off") return { ok: true, value: undefined };
  if (resolved.kind === "invalid")
    return { ok: false, error: `telemetry is misconfigured: ${resolved.problems.join("; ")}` };
  const key = loadAuditKey(auditOptions(config.audit, paths.audit).hmacKeyFile);
  if (!key.ok) return key;
  return {
    ok: true,
    value: {
      settings: resolved.settings,
      key: key.value,
      cursorFile: path.join(paths.state, CURSOR_FILE),
      lockFile: path.join(paths.state, EXPORT_LOCK_FILE),
      version,
    },
  };
}

/** The exporter lock, or the pid of the shipper that holds it. */
export function lockExporter(setup: ExportSetup): Result<HeldLock, { holder?: number }> {
  const r = tryLock(setup.lockFile);
  return "release" in r ? { ok: true, value: r } : { ok: false, error: { holder: r.holder } };
}

export function busyExporterMessage(holder: number | undefined): string {
  return `another exporter${holder ? ` (pid ${holder})` : ""} is shipping this home's audit log (scoot daemon run or scoot audit export); it carries on from the same cursor`;
}
