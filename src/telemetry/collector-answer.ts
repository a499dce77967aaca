/**
 * What a collector's answer means for a batch, by the OTLP specification
 * (https://opentelemetry.io/docs/specs/otlp/#failures-1): only 429, 502, 503 and 504 may be
 * retried; every other error status means the batch will never be accepted and must not be
 * sent again. And what the collector said: an error body is a `google.rpc.Status` (JSON for
 * http/json, protobuf for http/protobuf) whose `message` is the part worth showing; a success
 * may carry a partial success (`rejected_log_records`, `error_message`).
 */
import { redact } from "../core/redact.js";

/** The statuses the specification lets a client retry. */
export const RETRYABLE_STATUSES: readonly number[] = [429, 502, 503, 504];
/** A collector's message can be long; the first part says what is wrong. */
export const MAX_MESSAGE_CHARS = 300;

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.includes(status);
}

/** Control characters (a binary protobuf's framing among them) are not part of a message. */
const CONTROL = /[\u0000-\u001f\u007f\ufffd]+/g;

export function clipMessage(text: string): string {
  const clean = redact(text.replace(CONTROL, " ").replace(/\s+/g, " ").trim());
  return clean.length > MAX_MESSAGE_CHARS ? `${clean.slice(0, MAX_MESSAGE_CHARS)}...` : clean;
}

const STATUS_CODE_TAG = 0x08; // google.rpc.Status field 1 (code), varint
const STATUS_MESSAGE_TAG = 0x12; // field 2 (message), length-delimited
const STATUS_DETAILS_TAG = 0x1a; // field 3 (details), length-delimited

/**
 * The `message` of a protobuf `google.rpc.Status` as the official transport hands the body over:
 * decoded as UTF-8 text, in which a length prefix's bytes of 0x80 and above became U+FFFD. The
 * code is one byte (0..16); the length's last byte is below 0x80; the message runs up to the
 * details field, if any.
 */
function protobufStatusMessage(text: string): string | undefined {
  let i = text.charCodeAt(0) === STATUS_CODE_TAG ? 2 : 0;
  if (text.charCodeAt(i) !== STATUS_MESSAGE_TAG) return undefined;
  i += 1;
  while (i < text.length && text.charCodeAt(i) >= 0x80) i += 1;
  const rest = text.slice(i + 1);
  const details = rest.indexOf(String.fromCharCode(STATUS_DETAILS_TAG));
  return details === -1 ? rest : rest.slice(0, details);
}

/** The collector's message in an error body, or the body itself when it is not a Status. */
export function collectorMessage(body: string | undefined): string {
  const text = (body ?? "").trim();
  if (text === "") return "";
  if (text.startsWith("{")) {
    try {
      const status = JSON.parse(text) as { message?: unknown };
      if (typeof status.message === "string" && status.message.trim() !== "")
        return clipMessage(status.message);
    } catch {
      // not JSON after all: shown as text
    }
  }
  return clipMessage(protobufStatusMessage(text) ?? text);
}

export interface PartialSuccess {
  rejected: number;
  message: string;
}

/**
 * The partial success in a deserialized export response (protobuf: a number; JSON: an int64,
 * which the JSON mapping writes as a string). Undefined when there is none or it rejected
 * nothing and said nothing.
 */
export function partialSuccessOf(response: unknown): PartialSuccess | undefined {
  const p = (response as { partialSuccess?: { rejectedLogRecords?: unknown; errorMessage?: unknown } } | null)
    ?.partialSuccess;
  if (p === undefined || p === null || typeof p !== "object") return undefined;
  const n = Number(String(p.rejectedLogRecords ?? 0));
  const rejected = Number.isSafeInteger(n) && n > 0 ? n : 0;
  const message = typeof p.errorMessage === "string" ? clipMessage(p.errorMessage) : "";
  return rejected === 0 && message === "" ? undefined : { rejected, message };
}
