/**
 * The `serve` wire format: one JSON request per line `{id, method, params}`, one response per
 * line `{id, ok, result}` or `{id, ok: false, error: {code, message}}`.
 *
 * `id` is a string or a number and is echoed back; a request without an id is still handled and
 * answered with `id: null` (the reference v0.9.1 does so, and its clients rely on it);
 * when a line is too broken to carry a usable id the response has `id: null` too. `params` may
 * be left out when a method takes none. A line that is not JSON is answered `bad_json`.
 */
import { redact } from "../core/redact.js";

/** A request line larger than this is refused unread (a goal is text, not a file upload). */
export const MAX_REQUEST_BYTES = 1024 * 1024;

export type ErrorCode =
  | "bad_json"
  | "invalid_request"
  | "method_not_found"
  | "invalid_params"
  | "not_found"
  | "run_failed"
  | "internal_error";

export type RequestId = string | number | null;

export interface ServeRequest {
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
}

export interface ServeError {
  code: ErrorCode;
  message: string;
  /** Extra context (e.g. the session id of a failed run). */
  [key: string]: unknown;
}

export type ServeResponse =
  | { id: RequestId; ok: true; result: unknown }
  | { id: RequestId; ok: false; error: ServeError };

export type Parsed = { ok: true; value: ServeRequest } | { ok: false; response: ServeResponse };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function errorResponse(
  id: RequestId,
  code: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
): ServeResponse {
  return { id, ok: false, error: { code, message, ...extra } };
}

export function parseRequest(line: string): Parsed {
  if (Buffer.byteLength(line) > MAX_REQUEST_BYTES) {
    return {
      ok: false,
      response: errorResponse(
        null,
        "invalid_request",
        `request line is larger than ${MAX_REQUEST_BYTES} bytes`,
      ),
    };
  }
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch (e) {
    return {
      ok: false,
      response: errorResponse(null, "bad_json", `not valid JSON: ${(e as Error).message}`),
    };
  }
  if (!isObject(data)) {
    return {
      ok: false,
      response: errorResponse(
        null,
        "invalid_request",
        'a request is a JSON object {"id", "method", "params"}',
      ),
    };
  }
  const rawId = data.id;
  const idOk =
    rawId === undefined ||
    rawId === null ||
    typeof rawId === "string" ||
    (typeof rawId === "number" && Number.isFinite(rawId));
  if (!idOk) {
    return { ok: false, response: errorResponse(null, "invalid_request", "id must be a string or a number") };
  }
  const id = (rawId ?? null) as RequestId;
  if (typeof data.method !== "string" || data.method === "") {
    const why = data.method === undefined ? "method is missing" : "method must be a non-empty string";
    return { ok: false, response: errorResponse(id, "invalid_request", why) };
  }
  const params = data.params === undefined ? {} : data.params;
  if (!isObject(params)) {
    return { ok: false, response: errorResponse(id, "invalid_params", "params must be a JSON object") };
  }
  return { ok: true, value: { id, method: data.method, params } };
}

/** Every string in the response passes the redactor before it is serialised, so the line stays valid JSON. */
export function redactDeep(v: unknown): unknown {
  if (typeof v === "string") return redact(v);
  if (Array.isArray(v)) return v.map(redactDeep);
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = redactDeep(x);
    return out;
  }
  return v;
}

export function encodeResponse(r: ServeResponse): string {
  return `${JSON.stringify(redactDeep(r))}\n`;
}
