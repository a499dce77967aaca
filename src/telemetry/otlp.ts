/**
 * The OTLP/HTTP log sink: the official OpenTelemetry exporters (protobuf or JSON), loaded
 * with a dynamic import only when telemetry is configured, so an unconfigured `scoot` never
 * resolves a byte of them (test/telemetry/lazy-load.test.ts). The exporter's own transport
 * (Node's http) and its own short retries run inside `timeoutMs`; Scoot's backoff between
 * failed batches lives in the shipper.
 */
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { redact } from "../core/redact.js";
import type { Result } from "../core/types.js";
import type { SourceItem } from "./audit-source.js";
import { toLogRecord } from "./records.js";
import type { TelemetrySettings } from "./settings.js";

/** Why a batch was not acknowledged; `status` when the collector answered with an HTTP error. */
export interface SendError {
  message: string;
  status?: number;
}

export interface LogSink {
  /** Sends one batch; ok only when the collector acknowledged it. An empty batch probes the endpoint. */
  send(items: SourceItem[]): Promise<Result<void, SendError>>;
  shutdown(): Promise<void>;
}

/** A collector's error body can be long; the first part says what is wrong. */
const MAX_ERROR_CHARS = 300;
export const SCOPE_NAME = "scoot.audit";

interface ExporterLike {
  export(records: ReadableLogRecord[], done: (r: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
}

function describe(error: Error | undefined): SendError {
  if (!error) return { message: "the collector did not accept the batch" };
  const e = error as Error & { code?: number | string; data?: string; cause?: { code?: string } };
  const parts = [e.message || String(e)];
  if (typeof e.code === "number") parts.push(`HTTP ${e.code}`);
  const cause = e.cause?.code;
  if (cause && !parts[0]!.includes(cause)) parts.push(cause);
  if (typeof e.data === "string" && e.data.trim() !== "") parts.push(e.data.trim());
  const text = redact(parts.join(": "));
  const message = text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}...` : text;
  return typeof e.code === "number" ? { message, status: e.code } : { message };
}

export async function openLogSink(s: TelemetrySettings, version: string): Promise<LogSink> {
  const [{ resourceFromAttributes }, exporterModule] = await Promise.all([
    import("@opentelemetry/resources"),
    s.protocol === "http/json"
      ? import("@opentelemetry/exporter-logs-otlp-http")
      : import("@opentelemetry/exporter-logs-otlp-proto"),
  ]);
  const resource = resourceFromAttributes(s.resource);
  const scope = { name: SCOPE_NAME, version };
  const exporter = new exporterModule.OTLPLogExporter({
    url: s.logsUrl,
    headers: { ...s.headers },
    timeoutMillis: s.timeoutMs,
    // One batch at a time: the cursor moves only past an acknowledged batch.
    concurrencyLimit: 1,
  }) as unknown as ExporterLike;
  return {
    send(items) {
      const records = items.map((i) => toLogRecord(i, resource, scope));
      return new Promise((resolve) => {
        try {
          exporter.export(records, (r) => {
            resolve(r.code === 0 ? { ok: true, value: undefined } : { ok: false, error: describe(r.error) });
          });
        } catch (e) {
          resolve({ ok: false, error: describe(e as Error) });
        }
      });
    },
    async shutdown() {
      try {
        await exporter.shutdown();
      } catch {
        // closing an exporter whose last request failed: nothing left to release
      }
    },
  };
}
