/**
 * A `fetch`-shaped function on `node:http`/`node:https` for the MCP SDK's remote
 * transports. Global fetch cannot take extra trusted roots without the undici package,
 * and `backend.ca_file` must apply to remote MCP servers too; owning the agents also
 * lets the pool destroy every socket when a run ends. Redirects are never followed
 * here: the SDK follows same-origin ones itself (it asks for `redirect: "manual"`).
 */
import * as http from "node:http";
import type * as https from "node:https";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { httpsModule, tlsModule } from "../core/builtins.js";

/** The shape the SDK accepts as its `fetch` option. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Statuses whose responses carry no body (the Response constructor rejects one). */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export interface NodeFetch {
  fetch: FetchLike;
  /** Destroys every socket the agents hold, open streams included. */
  close(): void;
}

/** `ca`: extra PEM roots, added to (not replacing) Node's bundled roots. */
export function createNodeFetch(opts: { ca?: string } = {}): NodeFetch {
  const httpAgent = new http.Agent({ keepAlive: true });
  const httpsAgent = new (httpsModule().Agent)({
    keepAlive: true,
    ...(opts.ca === undefined ? {} : { ca: [...tlsModule().rootCertificates, opts.ca] }),
  });
  const fetch: FetchLike = (url, init) => nodeFetch(url, init ?? {}, httpAgent, httpsAgent);
  return {
    fetch,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

function requestBody(body: RequestInit["body"]): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // The SDK only ever sends JSON text; anything else is a bug, not a runtime condition.
  throw new TypeError("MCP fetch: unsupported request body type");
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException("The operation was aborted.", "AbortError");
}

function nodeFetch(
  input: string | URL,
  init: RequestInit,
  httpAgent: http.Agent,
  httpsAgent: https.Agent,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    let url: URL;
    let body: Buffer | undefined;
    try {
      url = new URL(String(input));
      body = requestBody(init.body);
    } catch (err) {
      reject(err);
      return;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      reject(new TypeError(`MCP fetch: unsupported protocol ${url.protocol}`));
      return;
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const method = (init.method ?? "GET").toUpperCase();
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== undefined) headers["content-length"] = String(body.length);
    const secure = url.protocol === "https:";
    const req = (secure ? httpsModule() : http).request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method,
      headers,
      agent: secure ? httpsAgent : httpAgent,
    });

    let res: http.IncomingMessage | undefined;
    // The SDK reuses one transport-wide signal for every request: the listener must go
    // when this exchange ends, or each request would leave one behind.
    const onAbort = () => {
      const err = abortError(signal!);
      if (res) res.destroy(err);
      else req.destroy(err);
    };
    const cleanup = () => signal?.removeEventListener("abort", onAbort);
    signal?.addEventListener("abort", onAbort, { once: true });

    req.on("error", (err) => {
      cleanup();
      reject(err);
    });
    req.on("response", (incoming) => {
      res = incoming;
      incoming.on("close", cleanup);
      const responseHeaders = new Headers();
      const raw = incoming.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) responseHeaders.append(raw[i]!, raw[i + 1]!);
      const status = incoming.statusCode ?? 0;
      const empty = method === "HEAD" || NULL_BODY_STATUS.has(status);
      if (empty) incoming.resume();
      const stream = empty ? null : (Readable.toWeb(incoming) as NodeReadableStream<Uint8Array>);
      try {
        resolve(
          new Response(stream as unknown as ReadableStream<Uint8Array> | null, {
            status,
            statusText: incoming.statusMessage ?? "",
            headers: responseHeaders,
          }),
        );
      } catch (err) {
        incoming.destroy();
        reject(err);
      }
    });
    req.end(body);
  });
}
