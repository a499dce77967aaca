/**
 * What a redirect hop may carry (docs/safety.md "Hostile inputs").
 *
 * A request's headers and body were meant for the origin the model named. When a redirect
 * leaves that origin, any header could be a credential (`X-Api-Key`, `Private-Token`, a
 * custom auth scheme), so every header the request set is dropped except a short safe list;
 * the body is resent only on 307/308 to the same origin (the only redirects that keep the
 * method *and* the destination owner); and a hop from https to http is never followed, since
 * whatever is sent would travel in clear text.
 */

/** Headers that describe the request without authenticating it; kept across origins. */
export const REDIRECT_SAFE_HEADERS: readonly string[] = ["accept", "accept-language", "user-agent"];

export type RedirectPlan =
  | { ok: true; headers: Record<string, string>; body?: string }
  | { ok: false; error: string };

/**
 * Headers and body for the next hop. `headers` are the lower-cased headers sent on the last
 * hop; `methodChanged` is true when the redirect turned the method into GET.
 */
export function planRedirect(opts: {
  from: URL;
  to: URL;
  status: number;
  headers: Record<string, string>;
  body?: string;
  methodChanged: boolean;
}): RedirectPlan {
  const { from, to, status, methodChanged } = opts;
  if (from.protocol === "https:" && to.protocol === "http:") {
    return { ok: false, error: "not followed: it leaves https for plain http" };
  }
  const sameOrigin = from.origin === to.origin;
  const keepBody =
    opts.body !== undefined && !methodChanged && (status === 307 || status === 308) && sameOrigin;
  if (opts.body !== undefined && !methodChanged && !keepBody) {
    // 307/308 promise the same method and body; resending the body elsewhere is refused, and
    // sending the method without it would be a different request.
    return { ok: false, error: "not followed: it would resend the request body to another origin" };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(opts.headers)) {
    const n = name.toLowerCase();
    if (sameOrigin || REDIRECT_SAFE_HEADERS.includes(n)) headers[n] = value;
  }
  if (!keepBody) delete headers["content-type"];
  else if (opts.headers["content-type"] !== undefined) headers["content-type"] = opts.headers["content-type"];
  return { ok: true, headers, ...(keepBody ? { body: opts.body } : {}) };
}
