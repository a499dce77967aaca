/**
 * `http_request`: one HTTP/HTTPS request with Node's own `http`/`https`, under the tool
 * deadline from connect to the last body byte, never hanging.
 *
 * Redirects are followed by hand so that every hop goes back through the policy gate:
 * an allowed public URL must not be able to bounce the request to an internal host.
 * Credentials the caller set (Authorization, Cookie) are not carried to another origin.
 */
import http from "node:http";
import type https from "node:https";
import { httpsModule } from "../core/builtins.js";
import type { Result } from "../core/types.js";
import { checkedLookup, INTERNAL_ADDRESS_CODE } from "../net/checked-lookup.js";
import { planRedirect } from "../net/redirect-headers.js";
import { loadCaBundle } from "../net/tls.js";
import { CLIP } from "./clip.js";
import { declareInput, type InputOf, oneOf, optMap, optStr, str } from "./declare.js";
import { done, failed } from "./result.js";
import type { ApprovalScope, Tool, ToolContext, ToolDetails, ToolResult } from "./types.js";

export const METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"] as const;
export type HttpMethod = (typeof METHODS)[number];

/** Response body bytes read at most; the rest is not downloaded. */
export const BODY_CAP_BYTES = 1024 * 1024;
/** Redirects followed at most. */
export const MAX_REDIRECTS = 5;
/** Framing and routing headers belong to the client; letting the model set them invites smuggling. */
const FORBIDDEN_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Response headers worth showing the model; the rest (cookies above all) stay out of the context. */
const KEY_HEADERS = [
  "content-type",
  "content-length",
  "content-encoding",
  "location",
  "date",
  "last-modified",
  "etag",
  "cache-control",
  "retry-after",
  "www-authenticate",
  "content-disposition",
];
const USER_AGENT = "scoot";
/** Bytes inspected to tell text from binary when the content type does not say. */
const SNIFF_BYTES = 8192;

/** The one declaration; the URL, body-per-method and header checks are its refinement. */
const FIELDS = {
  method: oneOf(METHODS, { example: '"GET"', normalize: (m) => m.trim().toUpperCase() }),
  url: str('"https://..."'),
  body: optStr('"optional text"', { nonEmpty: false, nullable: true }),
  headers: optMap('{"optional-name": "value"}'),
};
export const INPUT = declareInput("http_request", FIELDS, refineRequest);

export interface HttpRequestInput {
  method: HttpMethod;
  url: string;
  body?: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
}

const fail = (error: string): { ok: false; error: string } => ({
  ok: false,
  error: `http_request: ${error}`,
});

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function refineRequest(o: InputOf<typeof FIELDS>): Result<HttpRequestInput> {
  const { method } = o;
  const url = o.url.trim();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail(`"url" is not an absolute URL: ${url}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return fail(`only http and https URLs are supported, not ${parsed.protocol}`);
  }
  if (o.body !== undefined && (method === "GET" || method === "HEAD")) {
    return fail(`a ${method} request cannot carry a body; use POST, PUT or PATCH`);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(o.headers ?? {})) {
    const lower = name.toLowerCase();
    if (FORBIDDEN_HEADERS.has(lower))
      return fail(`header "${name}" is set by Scoot and cannot be overridden`);
    if (lower in headers) return fail(`header "${name}" is given twice`);
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch {
      return fail(`header "${name}" has an invalid name or value (no control characters or newlines)`);
    }
    headers[lower] = value;
  }
  const body = o.body !== undefined ? { body: o.body } : {};
  return { ok: true, value: { method, url: parsed.href, ...body, headers } };
}

/** Kept for callers that parse an http_request input directly. */
export function parseHttpRequest(raw: string): Result<HttpRequestInput> {
  return INPUT.parse(raw);
}

// ---------------------------------------------------------------------------------------
// One request

type Stop = { kind: "timeout"; ms: number } | { kind: "interrupted" };

function stopText(stop: Stop): string {
  return stop.kind === "timeout" ? `timed out after ${stop.ms} ms` : "interrupted";
}

function stoppedDetails(stop: Stop): ToolDetails {
  return { stopped: stop.kind === "timeout" ? "deadline" : "interrupted" };
}

interface Response {
  ok: true;
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  /** At most BODY_CAP_BYTES. */
  body: Buffer;
  truncated: boolean;
  /** Why the body ended early (deadline, reset), when it did. */
  incomplete?: string;
}
type Outcome = Response | { ok: false; error: string };

interface Send {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  agent: http.Agent;
  /** Connect-time address check (guarded + block_internal_http); see net/checked-lookup.ts. */
  lookup?: ReturnType<typeof checkedLookup>;
  signal: AbortSignal;
  /** Why the signal fired. */
  stop: () => Stop;
}

function requestBodyType(body: string): string {
  try {
    const v: unknown = JSON.parse(body);
    if (typeof v === "object" && v !== null) return "application/json";
  } catch {
    // not JSON: plain text
  }
  return "text/plain; charset=utf-8";
}

const TLS_TRUST_CODES =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_UNTRUSTED)$/;

function describeError(e: unknown, url: URL): string {
  const code = (e as NodeJS.ErrnoException).code ?? "";
  const msg = errorText(e);
  if (code === INTERNAL_ADDRESS_CODE) return `connection to ${url.href} refused: ${msg}`;
  if (code === "ECONNREFUSED") return `connection refused to ${url.href}`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NODATA" || code === "EAI_NONAME") {
    return `could not resolve host ${url.hostname}`;
  }
  if (code === "ECONNRESET") return `connection reset by ${url.href} (${msg})`;
  if (code === "ETIMEDOUT" || code === "EHOSTUNREACH" || code === "ENETUNREACH") {
    return `cannot reach ${url.host}: ${msg}`;
  }
  if (TLS_TRUST_CODES.test(code)) {
    return `TLS certificate of ${url.host} is not trusted (${code}); a private CA can be added with backend.ca_file`;
  }
  if (
    code === "CERT_HAS_EXPIRED" ||
    code === "ERR_TLS_CERT_ALTNAME_INVALID" ||
    /^ERR_(TLS|SSL)_/.test(code)
  ) {
    return `TLS error with ${url.host}: ${msg}`;
  }
  if (code === "HPE_HEADER_OVERFLOW") return `response headers from ${url.href} are too large`;
  if (code.startsWith("HPE_")) return `malformed HTTP response from ${url.href}: ${msg}`;
  return `request to ${url.href} failed: ${msg}${code ? ` (${code})` : ""}`;
}

function sendOnce(s: Send): Promise<Outcome> {
  return new Promise((resolve) => {
    let phase = "connecting to";
    let settled = false;
    let req: http.ClientRequest | undefined;
    let res: http.IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;

    const received = (incomplete?: string): Response => ({
      ok: true,
      status: res!.statusCode ?? 0,
      statusText: res!.statusMessage ?? "",
      headers: res!.headers,
      body: Buffer.concat(chunks),
      truncated,
      ...(incomplete ? { incomplete } : {}),
    });
    const finish = (o: Outcome) => {
      if (settled) return;
      settled = true;
      s.signal.removeEventListener("abort", onAbort);
      // Nothing more is wanted from this exchange; destroying also frees the socket.
      res?.destroy();
      req?.destroy();
      resolve(o);
    };
    const onAbort = () => {
      const why = stopText(s.stop());
      if (res) finish(received(`${why} while reading the body`));
      else finish({ ok: false, error: `${why} ${phase} ${s.url.href}` });
    };
    if (s.signal.aborted) return onAbort();
    s.signal.addEventListener("abort", onAbort, { once: true });

    const headers: Record<string, string> = { "user-agent": USER_AGENT, ...s.headers };
    if (s.body !== undefined) {
      headers["content-length"] = String(Buffer.byteLength(s.body));
      headers["content-type"] ??= requestBodyType(s.body);
    }
    const secure = s.url.protocol === "https:";
    try {
      const lookup = s.lookup ? { lookup: s.lookup } : {};
      req = (secure ? httpsModule() : http).request(s.url, {
        method: s.method,
        headers,
        agent: s.agent,
        ...lookup,
      });
    } catch (e) {
      return finish({ ok: false, error: describeError(e, s.url) });
    }
    req.on("error", (e) => finish({ ok: false, error: describeError(e, s.url) }));
    req.on("socket", (socket) => {
      socket.once("connect", () => {
        phase = secure ? "in the TLS handshake with" : "waiting for response headers from";
      });
      socket.once("secureConnect", () => {
        phase = "waiting for response headers from";
      });
    });
    req.on("response", (r) => {
      res = r;
      r.on("error", (e) => finish(received(`connection lost while reading the body: ${errorText(e)}`)));
      r.on("close", () => {
        if (!r.complete) finish(received("connection closed before the body was complete"));
      });
      if (REDIRECT_STATUSES.has(r.statusCode ?? 0) && r.headers.location) return finish(received());
      r.on("data", (chunk: Buffer) => {
        const room = BODY_CAP_BYTES - kept;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          kept += room;
          truncated = true;
          return finish(received());
        }
        chunks.push(chunk);
        kept += chunk.length;
      });
      r.on("end", () => finish(received()));
    });
    req.end(s.body);
  });
}

// ---------------------------------------------------------------------------------------
// The observation

function isTextType(mime: string): boolean | undefined {
  if (mime === "") return undefined;
  if (mime.startsWith("text/") || /[+/](json|xml)$/.test(mime)) return true;
  if (/(json|xml|javascript|ecmascript|yaml|toml|csv|x-www-form-urlencoded|graphql|markdown)/.test(mime)) {
    return true;
  }
  if (/^(image|audio|video|font)\//.test(mime)) return false;
  if (
    /^application\/(octet-stream|pdf|zip|gzip|x-tar|x-gzip|x-bzip2|x-7z|wasm|x-protobuf|vnd\.)/.test(mime)
  ) {
    return false;
  }
  return undefined;
}

function looksBinary(body: Buffer): boolean {
  const head = body.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return true;
  try {
    // stream: true tolerates a sequence cut at the sniff boundary.
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
    return false;
  } catch {
    return true;
  }
}

function decodeBody(body: Buffer, contentType: string): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(", ") : v;
}

function formatResponse(r: Response, method: HttpMethod, finalUrl: string, redirects: number): string {
  const lines = [`HTTP ${r.status} ${r.statusText}`.trimEnd()];
  if (redirects > 0)
    lines.push(`final-url: ${finalUrl} (after ${redirects} redirect${redirects > 1 ? "s" : ""})`);
  for (const name of KEY_HEADERS) {
    const value = headerValue(r.headers[name]);
    if (value !== undefined) lines.push(`${name}: ${value}`);
  }
  lines.push("");

  const contentType = headerValue(r.headers["content-type"]) ?? "";
  const encoding = (headerValue(r.headers["content-encoding"]) ?? "identity").toLowerCase();
  const size = `${r.body.length}${r.truncated ? "+" : ""} bytes`;
  if (method === "HEAD") lines.push("(no body: HEAD request)");
  else if (r.body.length === 0) lines.push("(empty body)");
  else if (encoding !== "identity") {
    lines.push(`[${encoding}-encoded body: ${size}, content-type ${contentType || "unknown"}; not shown]`);
  } else if (isTextType(contentType.split(";")[0]!.trim().toLowerCase()) ?? !looksBinary(r.body)) {
    lines.push(decodeBody(r.body, contentType));
  } else {
    lines.push(`[binary body: ${size}, content-type ${contentType || "unknown"}; not shown]`);
  }
  if (r.truncated) {
    const declared = headerValue(r.headers["content-length"]);
    lines.push(
      `[body truncated: first ${r.body.length} bytes kept${declared ? ` of ${declared}` : ""}; the rest was not read]`,
    );
  }
  if (r.incomplete) lines.push(`[body incomplete: ${r.incomplete}]`);
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------
// The call: deadline, agents, redirects

function nextMethod(status: number, method: HttpMethod): HttpMethod {
  if (status === 303 && method !== "HEAD") return "GET";
  if ((status === 301 || status === 302) && method === "POST") return "GET";
  return method;
}

/**
 * Any response is the tool's work done, a 404 or a 500 included: the request was made and
 * the status is the answer. Not reaching the server, a redirect not followed, or the
 * deadline or an interrupt ending the exchange (even mid-body) is a failed call.
 */
export async function runHttpRequest(input: HttpRequestInput, ctx: ToolContext): Promise<ToolResult> {
  // One deadline over every hop: the tool's own timer, or the caller's signal.
  const ac = new AbortController();
  let stop: Stop = { kind: "interrupted" };
  const timer = setTimeout(() => {
    stop = { kind: "timeout", ms: ctx.timeoutMs };
    ac.abort();
  }, ctx.timeoutMs);
  const onAbort = () => {
    const reason: unknown = ctx.signal.reason;
    const isTimeout = reason instanceof Error && reason.name === "TimeoutError";
    stop = isTimeout ? { kind: "timeout", ms: ctx.timeoutMs } : { kind: "interrupted" };
    ac.abort();
  };
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener("abort", onAbort, { once: true });

  // Fresh agents without keep-alive: nothing of this call lingers after it.
  let httpAgent: http.Agent | undefined;
  let httpsAgent: https.Agent | undefined;
  const agentFor = (url: URL): Result<http.Agent> => {
    if (url.protocol === "http:") {
      httpAgent ??= new http.Agent({ keepAlive: false });
      return { ok: true, value: httpAgent };
    }
    if (!httpsAgent) {
      const ca = loadCaBundle(ctx.config.backend.ca_file);
      if (!ca.ok) return ca;
      httpsAgent = new (httpsModule().Agent)({ keepAlive: false, ...(ca.value ? { ca: ca.value } : {}) });
    }
    return { ok: true, value: httpsAgent };
  };

  // Every hop, the first included, connects only to addresses checked at connect time.
  const guarded = ctx.mode === "guarded" && ctx.config.tools.block_internal_http;
  const lookup = guarded ? checkedLookup() : undefined;
  let method = input.method;
  let url = new URL(input.url);
  let body = input.body;
  let headers = { ...input.headers };
  try {
    for (let redirects = 0; ; redirects++) {
      const agent = agentFor(url);
      if (!agent.ok) return failed(`http_request: ${agent.error}`);
      const sent = await sendOnce({
        method,
        url,
        headers,
        ...(body !== undefined ? { body } : {}),
        agent: agent.value,
        ...(lookup ? { lookup } : {}),
        signal: ac.signal,
        stop: () => stop,
      });
      if (!sent.ok) {
        const text = `http_request: ${sent.error}`;
        return ac.signal.aborted ? failed(text, stoppedDetails(stop)) : failed(text);
      }
      const location = headerValue(sent.headers.location);
      if (!REDIRECT_STATUSES.has(sent.status) || !location) {
        const text = formatResponse(sent, method, url.href, redirects);
        return sent.incomplete !== undefined && ac.signal.aborted
          ? failed(text, stoppedDetails(stop))
          : done(text);
      }

      const hop = `HTTP ${sent.status} from ${url.href} to ${location}`;
      if (redirects >= MAX_REDIRECTS) {
        return failed(
          `http_request: stopped after ${MAX_REDIRECTS} redirects; redirect ${redirects + 1} (${hop}) not followed`,
        );
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        return failed(`http_request: redirect ${redirects + 1} (${hop}) has an invalid Location`);
      }
      if (next.protocol !== "http:" && next.protocol !== "https:") {
        return failed(
          `http_request: redirect ${redirects + 1} (${hop}) not followed: only http and https are supported`,
        );
      }
      const method2 = nextMethod(sent.status, method);
      const decision = ctx.gate("http_request", JSON.stringify({ method: method2, url: next.href }));
      if (!decision.allow) {
        return failed(
          `http_request: redirect ${redirects + 1} (${sent.status} from ${url.href} to ${next.href}) denied by policy: ${decision.reason}`,
        );
      }
      const plan = planRedirect({
        from: url,
        to: next,
        status: sent.status,
        headers,
        body,
        methodChanged: method2 !== method,
      });
      if (!plan.ok) return failed(`http_request: redirect ${redirects + 1} (${hop}) ${plan.error}`);
      headers = plan.headers;
      body = plan.body;
      method = method2;
      url = next;
    }
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
    httpAgent?.destroy();
    httpsAgent?.destroy();
  }
}

const SCOPE_FIX = 'write "<METHOD> <scheme>://<host>[:<port>]", e.g. "POST https://api.example.com"';

/**
 * A rule's `match` for http_request: a method and an origin, written as the URL parser reads
 * them (`post HTTPS://API.Example.com:443` is `POST https://api.example.com`). A user name,
 * a path or a query is refused: the scope is the whole origin, and `https://example.com@evil.test`
 * is an origin on evil.test.
 */
function parseRequestMatch(match: string): Result<string> {
  const parts = match.trim().split(/\s+/);
  if (parts.length !== 2)
    return { ok: false, error: `"${match}" is not a method and an origin; ${SCOPE_FIX}` };
  const method = parts[0]!.toUpperCase();
  if (!(METHODS as readonly string[]).includes(method))
    return { ok: false, error: `"${parts[0]}" is not a method (${METHODS.join(", ")}); ${SCOPE_FIX}` };
  let url: URL;
  try {
    url = new URL(parts[1]!);
  } catch {
    return { ok: false, error: `"${parts[1]}" is not an absolute URL; ${SCOPE_FIX}` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return { ok: false, error: `"${parts[1]}" is not http or https; ${SCOPE_FIX}` };
  if (url.username !== "" || url.password !== "")
    return {
      ok: false,
      error: `"${parts[1]}" holds a user name or password before "@": the host is what follows it; write "${method} ${url.origin}" if that is the one meant`,
    };
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "")
    return {
      ok: false,
      error: `"${parts[1]}" has a path, query or fragment, but a scope is a whole origin; write "${method} ${url.origin}"`,
    };
  return { ok: true, value: `${method} ${url.origin}` };
}

/** "Always" and rules cover one method on one origin (scheme, host, port; docs/safety.md "Approval scopes"). */
const REQUEST_SCOPE: ApprovalScope<HttpRequestInput> = {
  of: (input) => `${input.method} ${new URL(input.url).origin}`,
  parseMatch: parseRequestMatch,
  example: "POST https://api.example.com",
  meaning(scope) {
    const [method, origin] = scope.split(" ");
    return `${method} requests to ${origin}`;
  },
};

export const httpRequestTool: Tool<HttpRequestInput> = {
  name: "http_request",
  describe:
    "Make one HTTP or HTTPS request (GET, POST, PUT, DELETE, HEAD, PATCH) with a hard timeout. Returns the " +
    "status, key headers and the body (up to 1 MiB). Redirects are followed (at most 5).",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.http_request,
  preferOverShell: true,
  parse: INPUT.parse,
  effects(input: HttpRequestInput) {
    const read = input.method === "GET" || input.method === "HEAD";
    return { capability: read ? "net_read" : "net_write", url: { method: input.method, url: input.url } };
  },
  approvalScope: REQUEST_SCOPE,
  present: (input: HttpRequestInput) => {
    const call = `${input.method} ${input.url}`;
    return { title: call, keyArgument: call, locations: [] };
  },
  // Inside `parallel` only reads run: a fan-out must not change anything.
  parallelChild: (input: HttpRequestInput) =>
    input.method === "GET" || input.method === "HEAD"
      ? undefined
      : `http_request in parallel must use GET or HEAD, not ${input.method}`,
  run: runHttpRequest,
};
