/**
 * The OTLP/HTTP log sink: the official OpenTelemetry serializers (protobuf or JSON) and export
 * transport, put together through their public exports as the official OTLPLogExporter is,
 * loaded with a dynamic import only when telemetry is configured, so an unconfigured `scoot`
 * never resolves a byte of them (test/telemetry/lazy-load.test.ts). The official transport
 * (Node's http) and its own short retries (of the retryable answers only) run inside
 * `timeoutMs`; Scoot's backoff between failed batches, and setting aside the batches a collector
 * refused for good, live in the shipper.
 */
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { redact } from "../core/redact.js";
import type { Result } from "../core/types.js";
import type { SourceItem } from "./audit-source.js";
import {
  clipMessage,
  collectorMessage,
  isRetryableStatus,
  type PartialSuccess,
  partialSuccessOf,
} from "./collector-answer.js";
import { toLogRecord } from "./records.js";
import type { TelemetrySettings } from "./settings.js";

/**
 * Why a batch was not acknowledged. `status` when the collector answered with an HTTP error;
 * `retryable` false when the specification forbids sending the batch again (any error status
 * but 429/502/503/504): the shipper sets it aside instead.
 */
export interface SendError {
  message: string;
  status?: number;
  retryable: boolean;
}

/** An acknowledged batch; `partial` when the collector took only some of its records. */
export interface Ack {
  partial?: PartialSuccess;
}

export interface LogSink {
  /** Sends one batch; ok only when the collector acknowledged it. An empty batch probes the endpoint. */
  send(items: SourceItem[]): Promise<Result<Ack, SendError>>;
  shutdown(): Promise<void>;
}

export const SCOPE_NAME = "scoot.audit";
/** The component type the official OTLP/HTTP log exporters report for themselves. */
const EXPORTER_COMPONENT_TYPE = "otlp_http_log_exporter";

interface ExporterLike {
  export(records: ReadableLogRecord[], done: (r: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
}

/** The official serializers' shape (`ISerializer` of @opentelemetry/otlp-transformer). */
interface Serializer {
  serializeRequest(request: ReadableLogRecord[]): Uint8Array | undefined;
  deserializeResponse(data: Uint8Array): unknown;
}

/**
 * The official serializer, with every successful answer's deserialized body (where a partial
 * success is) also handed to `onResponse`. The export delegate deserializes an answer through the
 * serializer it was given, a public parameter, so nothing private of the exporter is touched.
 */
export function watchingSerializer(
  official: Serializer,
  onResponse: (response: unknown) => void,
): Serializer {
  return {
    serializeRequest: (request) => official.serializeRequest(request),
    deserializeResponse(data) {
      const response = official.deserializeResponse(data);
      onResponse(response);
      return response;
    },
  };
}

export function describeSendError(error: Error | undefined): SendError {
  if (!error) return { message: "the collector did not accept the batch", retryable: true };
  const e = error as Error & { code?: number | string; data?: string; cause?: { code?: string } };
  if (typeof e.code === "number") {
    const said = collectorMessage(e.data);
    const message = `HTTP ${e.code}${e.message ? ` ${e.message}` : ""}${said ? `: ${said}` : ""}`;
    return { message: clipMessage(message), status: e.code, retryable: isRetryableStatus(e.code) };
  }
  const parts = [e.message || String(e)];
  const cause = e.cause?.code;
  if (cause && !parts[0]!.includes(cause)) parts.push(cause);
  return { message: clipMessage(redact(parts.join(": "))), retryable: true };
}

export async function openLogSink(s: TelemetrySettings, version: string): Promise<LogSink> {
  const [{ resourceFromAttributes }, base, nodeHttp, transformer] = await Promise.all([
    import("@opentelemetry/resources"),
    import("@opentelemetry/otlp-exporter-base"),
    import("@opentelemetry/otlp-exporter-base/node-http"),
    import("@opentelemetry/otlp-transformer"),
  ]);
  const resource = resourceFromAttributes(s.resource);
  const scope = { name: SCOPE_NAME, version };
  const json = s.protocol === "http/json";
  let partial: PartialSuccess | undefined;
  // The official serializer, watched for partial successes (which the official OTLPLogExporter
  // only reports to OpenTelemetry's diagnostic log).
  const serializer = watchingSerializer(
    json ? transformer.JsonLogsSerializer : transformer.ProtobufLogsSerializer,
    (response) => {
      const p = partialSuccessOf(response);
      if (p) partial = p;
    },
  );
  // Assembled from the public parts as the official OTLPLogExporter assembles itself (its
  // transport, retries and environment reading included). url, headers and timeout as Scoot
  // resolved them (settings.ts, by the exporter specification); what Scoot does not set
  // (OTEL_EXPORTER_OTLP_*COMPRESSION, *CERTIFICATE, *CLIENT_KEY) is read from the environment
  // as the official exporter reads it.
  const options = nodeHttp.convertLegacyHttpOptions(
    {
      url: s.logsUrl,
      headers: { ...s.headers },
      timeoutMillis: s.timeoutMs,
      // One batch at a time: the cursor moves only past an acknowledged batch.
      concurrencyLimit: 1,
    },
    "LOGS",
    "v1/logs",
    { "Content-Type": json ? "application/json" : "application/x-protobuf" },
  );
  const official = new base.OTLPExporterBase(
    nodeHttp.createOtlpHttpExportDelegate(
      options,
      serializer,
      EXPORTER_COMPONENT_TYPE,
      transformer.LogsExporterMetricsHelper,
      undefined,
    ),
  );
  const exporter = official as unknown as ExporterLike;
  return {
    send(items) {
      const records = items.map((i) => toLogRecord(i, resource, scope));
      partial = undefined;
      return new Promise((resolve) => {
        try {
          exporter.export(records, (r) => {
            if (r.code !== 0) return resolve({ ok: false, error: describeSendError(r.error) });
            resolve({ ok: true, value: partial ? { partial } : {} });
          });
        } catch (e) {
          resolve({ ok: false, error: describeSendError(e as Error) });
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
