/**
 * The OTLP/HTTP log sink: the official OpenTelemetry exporters (protobuf or JSON), loaded
 * with a dynamic import only when telemetry is configured, so an unconfigured `scoot` never
 * resolves a byte of them (test/telemetry/lazy-load.test.ts). The exporter's own transport
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

interface ExporterLike {
  export(records: ReadableLogRecord[], done: (r: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
}

/** Where the official exporter hands a successful answer's body (deserialized) to be looked at. */
interface ResponseHandlerHost {
  _delegate?: { _responseHandler?: { handleResponse(response: unknown): void } };
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

/**
 * The official exporter reports a partial success only to OpenTelemetry's diagnostic log; its
 * response handler is where the deserialized answer passes, so Scoot listens there. The
 * exporter versions are pinned in package.json; test/telemetry/export.test.ts fails if the
 * place moves.
 */
function listenForPartialSuccess(exporter: unknown, onPartial: (p: PartialSuccess) => void): void {
  const delegate = (exporter as ResponseHandlerHost)._delegate;
  if (typeof delegate?._responseHandler?.handleResponse !== "function")
    throw new Error(
      "the OTLP log exporter no longer exposes its response handler, so a partial success could not be seen: Scoot needs the @opentelemetry versions its package.json pins",
    );
  delegate._responseHandler = {
    handleResponse(response: unknown) {
      const p = partialSuccessOf(response);
      if (p) onPartial(p);
    },
  };
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
  // url, headers and timeout as Scoot resolved them (settings.ts, by the exporter specification);
  // what Scoot does not set (OTEL_EXPORTER_OTLP_*COMPRESSION, *CERTIFICATE, *CLIENT_KEY) the
  // exporter reads from the environment itself.
  const official = new exporterModule.OTLPLogExporter({
    url: s.logsUrl,
    headers: { ...s.headers },
    timeoutMillis: s.timeoutMs,
    // One batch at a time: the cursor moves only past an acknowledged batch.
    concurrencyLimit: 1,
  });
  let partial: PartialSuccess | undefined;
  listenForPartialSuccess(official, (p) => {
    partial = p;
  });
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
