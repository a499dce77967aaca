/**
 * Backend failures as one line each: which URL, what failed, what to try. Every message passes
 * through `redact` and has the token cut out by value, so it may go anywhere (stderr, audit, session).
 */
import { STATUS_CODES } from "node:http";
import { OPENAI_PATH, withV1 } from "../config/base-url.js";
import { REDACTED, redact } from "../core/redact.js";
import { MAX_RESPONSE_BYTES, type TransportFailure } from "./transport.js";
import type { BackendError, BackendErrorKind } from "./types.js";

/** Network failures worth another try: the server may be starting, restarting or shedding load. */
const TRANSIENT_NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EENDEDEARLY",
  "ERR_STREAM_PREMATURE_CLOSE",
]);

const UNREACHABLE_HINT = "is the server running? check `scoot doctor` or set SCOOT_BACKEND_BASE_URL";

export function isTransientNetworkCode(code: string): boolean {
  return TRANSIENT_NETWORK_CODES.has(code);
}

function isTlsCode(code: string): boolean {
  return /^(CERT_|ERR_TLS_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_SSL_|EPROTO$)/.test(code);
}

function attemptsNote(attempts: number): string {
  return attempts > 1 ? ` (after ${attempts} attempts)` : "";
}

/** Final form of every message: no token, no credential shapes, one line. */
export function finishMessage(message: string, token?: string): string {
  // Shapes first: cutting the token out of a longer key first would break the key's shape
  // and leave the rest of it readable.
  let out = redact(message);
  if (token) out = out.split(token).join(REDACTED);
  return out.replace(/\s+/g, " ").trim();
}

export function backendError(
  kind: BackendErrorKind,
  url: string,
  message: string,
  token?: string,
  status?: number,
): BackendError {
  return { kind, url, message: finishMessage(message, token), ...(status === undefined ? {} : { status }) };
}

export function networkMessage(url: string, code: string, detail: string, attempts: number): string {
  if (isTlsCode(code)) {
    return `TLS with the backend at ${url} failed: ${detail} (${code})${attemptsNote(attempts)} — check http vs https in backend.base_url, or set backend.ca_file if the server uses a private CA`;
  }
  if (code === "ENOTFOUND") {
    return `cannot reach the backend at ${url}: host ${new URL(url).hostname} not found — check backend.base_url or set SCOOT_BACKEND_BASE_URL`;
  }
  const what: Record<string, string> = {
    ECONNREFUSED: "connection refused",
    ECONNRESET: detail === "socket hang up" ? "the connection closed without a reply" : "connection reset",
    EENDEDEARLY: "the connection ended before the reply was complete",
    ETIMEDOUT: "connect timed out",
    EAI_AGAIN: "host name lookup failed",
    EHOSTUNREACH: "host unreachable",
    ENETUNREACH: "network unreachable",
  };
  const described = what[code] ?? `${detail} (${code})`;
  return `cannot reach the backend at ${url}: ${described}${attemptsNote(attempts)} — ${UNREACHABLE_HINT}`;
}

export function timeoutMessage(url: string, timeoutMs: number, attempts: number): string {
  return `the backend at ${url} did not answer within ${timeoutMs} ms${attemptsNote(attempts)} — the model may be loading or overloaded; raise backend.timeout_ms or check \`scoot doctor\``;
}

/**
 * Why a reply was cut at the cap on one reply (plain or streamed alike): a model's reply is a few
 * KB, so one this large is a runaway stream or a misconfigured endpoint, and asking again would
 * only bring the same.
 */
export const TOO_LARGE_WORDS = `larger than ${MAX_RESPONSE_BYTES} bytes, the most Scoot reads of one reply`;

export function abortedMessage(url: string): string {
  return `the backend call to ${url} was interrupted`;
}

export function protocolMessage(url: string, what: string, detail: string): string {
  return `the backend at ${url} returned a body that is not ${what}: ${detail} — check backend.api and backend.base_url`;
}

/**
 * Statuses a server gives for a path or a method it does not serve (501: "not implemented"):
 * whatever answered is not an OpenAI-compatible server at that URL. Never worth a retry.
 */
export const WRONG_PATH_STATUSES: ReadonlySet<number> = new Set([404, 405, 501]);

/** Where the request went: the configured base URL and the endpoint under it (`chat/completions`). */
export interface Endpoint {
  baseUrl: string;
  path: string;
}

/**
 * Whether an error answer says the URL is wrong rather than the request: 405 and 501 always; a
 * 404 unless the server's own message is about the model (OpenAI and Ollama answer an unknown
 * model with 404 at the right URL).
 */
function wrongPath(status: number, serverText: string): boolean {
  if (!WRONG_PATH_STATUSES.has(status)) return false;
  return status !== 404 || !/\bmodel\b/i.test(serverText);
}

/** "is base_url right? …": where an OpenAI-compatible server answers, from the configured base URL. */
function wrongPathHint(at: Endpoint): string {
  let base: URL;
  try {
    base = new URL(at.baseUrl.trim());
  } catch {
    return `is backend.base_url right? OpenAI-compatible servers answer at …${OPENAI_PATH}/${at.path}`;
  }
  const fixed = withV1(base);
  if (fixed !== undefined)
    return `is backend.base_url right? OpenAI-compatible servers answer at ${fixed.replace(/\/$/, "")}/${at.path}: add ${OPENAI_PATH} (base_url = "${fixed.replace(/\/$/, "")}")`;
  // The model list is the same for both wire APIs; the completion endpoint depends on backend.api.
  const api = at.path === "models" ? "" : " (check backend.api too)";
  return `is backend.base_url right? OpenAI-compatible servers answer at …${OPENAI_PATH}/${at.path}${api}`;
}

function statusHint(status: number, explicitSchema: boolean): string {
  if (status === 401 || status === 403)
    return "check the token (backend.api_key_env, api_key_file or api_key_cmd)";
  if (status === 404) return "check backend.base_url, backend.api and backend.model";
  if (status === 413) return "the request is too large; lower agent.context_budget_bytes";
  if (status === 429) return "rate limited; wait and try again, or raise --retries";
  if (status >= 500) return "the server failed; check its logs or try again later";
  if (explicitSchema) {
    return 'if the server does not support structured output, set backend.structured_output = "auto"';
  }
  return "the server rejected the request";
}

/** How many of the server's models a refusal of the configured one names. */
export const LISTED_MODELS_SHOWN = 10;

/** Whether an error answer may be about the model's name: worth asking the server for its list. */
export function mayBeUnknownModel(status: number, serverText: string): boolean {
  return (status === 404 || status === 400) && /\bmodel\b/i.test(serverText);
}

/** The hint for a model the server does not list: the names it does (docs/keyboard.md "Health checks"). */
function unlistedModelHint(model: string, listed: readonly string[]): string {
  const shown = listed.slice(0, LISTED_MODELS_SHOWN).join(", ");
  const more =
    listed.length > LISTED_MODELS_SHOWN ? ` (and ${listed.length - LISTED_MODELS_SHOWN} more)` : "";
  return `backend.model "${model}" is not among the models the server lists: ${shown}${more}; set backend.model (or --model) to one of them`;
}

export function httpMessage(
  url: string,
  status: number,
  serverText: string,
  attempts: number,
  explicitSchema: boolean,
  /** Where the request went, for the hint when the URL is not an OpenAI-compatible endpoint. */
  endpoint?: Endpoint,
  /** The configured model and the server's list, when the list does not hold it. */
  unlisted?: { model: string; listed: readonly string[] },
): string {
  const phrase = STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : "";
  const hint = unlisted
    ? unlistedModelHint(unlisted.model, unlisted.listed)
    : endpoint && wrongPath(status, serverText)
      ? wrongPathHint(endpoint)
      : statusHint(status, explicitSchema);
  return `the backend at ${url} answered ${status}${phrase}: ${serverText}${attemptsNote(attempts)} — ${hint}`;
}

/**
 * The user-facing error for an exchange that produced no HTTP response. `what` names the
 * expected reply ("a chat completion", "a model list"); `attempts` counts the requests made.
 */
export function transportError(
  f: TransportFailure,
  at: { url: string; what: string; timeoutMs: number; attempts: number; token?: string },
): BackendError {
  switch (f.kind) {
    case "aborted":
      return backendError("aborted", at.url, abortedMessage(at.url), at.token);
    case "config":
      return backendError("config", at.url, f.detail, at.token);
    case "too_large":
      return backendError("protocol", at.url, protocolMessage(at.url, at.what, TOO_LARGE_WORDS), at.token);
    case "timeout":
      return backendError("timeout", at.url, timeoutMessage(at.url, at.timeoutMs, at.attempts), at.token);
    case "network":
      return backendError("network", at.url, networkMessage(at.url, f.code, f.detail, at.attempts), at.token);
  }
}
