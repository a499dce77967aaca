/**
 * When and how long to wait before retrying a backend call: transient failures only,
 * exponential backoff with jitter, and the server's own `Retry-After` when it sends one.
 */

/** First backoff step; doubles per retry. */
export const BACKOFF_BASE_MS = 250;
/** No single backoff sleeps longer than this. */
export const BACKOFF_CAP_MS = 8_000;
/** A server may ask for more, but an interactive agent should not sit silent longer than this per retry. */
export const RETRY_AFTER_CAP_MS = 30_000;

/**
 * 408 timeout, 409 conflict (OpenAI uses it for transient lock contention), 429 rate limit, any
 * 5xx but 501: "not implemented" is what a server says of a path or method it never serves, and
 * asking again gets the same answer.
 */
export function isTransientStatus(status: number): boolean {
  if (status === 501) return false;
  return status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * `Retry-After` as milliseconds: delta-seconds (decimals tolerated) or an HTTP date.
 * Undefined when absent or unreadable; clamped to [0, RETRY_AFTER_CAP_MS].
 */
export function retryAfterMs(
  header: string | string[] | undefined,
  now: number = Date.now(),
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(value)) {
    ms = Math.round(Number(value) * 1000);
  } else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(RETRY_AFTER_CAP_MS, Math.max(0, ms));
}

/**
 * Backoff before retry number `retry` (0-based): half fixed, half random ("equal jitter"),
 * so concurrent Scoot processes spread out but never retry instantly.
 */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
