/**
 * `backend.extra_body` split from the keys Scoot owns. Config loading warns about the
 * ignored keys; the backend client sends only the rest.
 */
import type { BackendApi } from "./schema.js";

/**
 * Keys `extra_body` may not set: Scoot owns what the model sees (`model`, the history) and
 * needs a single JSON reply it can parse (`stream` would turn the reply into SSE). `store`
 * (server-side retention of the conversation) is set by `backend.store` alone, so a copied
 * `extra_body` cannot silently turn retention on.
 */
export const PROTECTED_BODY_KEYS: Record<BackendApi, readonly string[]> = {
  chat: ["model", "messages", "stream", "store"],
  responses: ["model", "input", "instructions", "stream", "store"],
};

/** `extra_body` without the protected keys, and the names of those it tried to set. */
export function splitExtraBody(
  api: BackendApi,
  extra: Record<string, unknown>,
): { extra: Record<string, unknown>; ignored: string[] } {
  const out: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(extra ?? {})) {
    if (PROTECTED_BODY_KEYS[api].includes(key)) ignored.push(key);
    else out[key] = value;
  }
  return { extra: out, ignored };
}
