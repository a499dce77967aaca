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
import { REJECTED_FILE } from "./rejected.js";
import { resolveTelemetry, type TelemetrySettings } from "./settings.js";

export const EXPORT_LOCK_FILE = "telemetry-export.lock";

export interface ExportSetup {
  settings: TelemetrySettings;
  key: Buffer | undefined;
  cursorFile: string;
  /** Where batches the collector refused (or partly rejected) are recorded, beside the cursor. */
  rejectedFile: string;
  lockFile: string;
  version: string;
}

/** Whether there is anything to ship: off (nothing configured), disabled (OTEL_SDK_DISABLED) or on. */
export type ExportPlan =
  | { kind: "off" }
  | { kind: "disabled"; reason: string }
  | { kind: "on"; setup: ExportSetup };

export const NOT_CONFIGURED =
  "telemetry is not configured: set otlp_endpoint under [telemetry] in config.toml (or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT), e.g. http://127.0.0.1:4318";

/** The plan; an error listing every problem when telemetry is misconfigured. */
export function prepareExport(config: Config, paths: HomePaths, env: NodeJS.ProcessEnv): Result<ExportPlan> {
  const version = scootVersion();
  const resolved = resolveTelemetry(config, env, version);
  if (resolved.kind === "off" || resolved.kind === "disabled") return { ok: true, value: resolved };
  if (resolved.kind === "invalid")
    return { ok: false, error: `telemetry is misconfigured: ${resolved.problems.join("; ")}` };
  const key = loadAuditKey(auditOptions(config.audit, paths.audit).hmacKeyFile);
  if (!key.ok) return key;
  return {
    ok: true,
    value: {
      kind: "on",
      setup: {
        settings: resolved.settings,
        key: key.value,
        cursorFile: path.join(paths.state, CURSOR_FILE),
        rejectedFile: path.join(paths.state, REJECTED_FILE),
        lockFile: path.join(paths.state, EXPORT_LOCK_FILE),
        version,
      },
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
