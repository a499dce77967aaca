/**
 * One HTTP exchange with a deadline, over Node's own http/https (a fresh process pays
 * 0.16 s for node:http against 0.38 s or more for fetch, undici or the openai package).
 * Keep-alive agents are shared per process so consecutive turns reuse one connection.
 */
import http from "node:http";
import type https from "node:https";
import { httpsModule } from "../core/builtins.js";
import type { Result } from "../core/types.js";
import { makeHttpsAgent } from "../net/tls.js";

/**
 * A model reply is a few KB; anything this large is a misconfigured endpoint or a runaway
 * stream, not an answer. It bounds a streamed body as well as a buffered one: the exchange ends
 * at the first byte past it (docs/context.md "Streaming").
 */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** TCP keep-alive probe interval for pooled sockets. */
const KEEP_ALIVE_MSECS = 1_000;

export interface HttpCall {
  method: "GET" | "POST";
  url: URL;
  headers: Record<string, string>;
  body?: Buffer;
  /** Covers connect, upload and the whole response. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** PEM bundle added to the trusted roots for https URLs. */
  caFile?: string;
  /**
   * Streaming (docs/context.md "Streaming"): called once the status and headers are in. A sink it
   * returns receives the body as it arrives instead of it being buffered (`body` is then
   * ""); the sink returns false to stop reading (the exchange then ends as received).
   */
  stream?: (status: number, headers: http.IncomingHttpHeaders) => ((chunk: Buffer) => boolean) | undefined;
}

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  bytes: number;
  latencyMs: number;
}

export type TransportFailure =
  | {
      kind: "network";
      /** Node's error code (ECONNREFUSED, ...) or our own for a cut-short body. */
      code: string;
      detail: string;
      latencyMs: number;
    }
  | { kind: "timeout"; latencyMs: number }
  | { kind: "aborted"; latencyMs: number }
  | { kind: "too_large"; latencyMs: number }
  | { kind: "config"; detail: string; latencyMs: number };

let httpAgent: http.Agent | undefined;
/** Keyed by ca_file ("" for Node's own roots); a bad ca_file is remembered so it is read once. */
const httpsAgents = new Map<string, Result<https.Agent>>();

function agentFor(url: URL, caFile: string | undefined): Result<http.Agent> {
  if (url.protocol === "http:") {
    httpAgent ??= new http.Agent({ keepAlive: true, keepAliveMsecs: KEEP_ALIVE_MSECS });
    return { ok: true, value: httpAgent };
  }
  const key = caFile ?? "";
  let agent = httpsAgents.get(key);
  if (!agent) {
    agent = makeHttpsAgent(caFile, { keepAlive: true, keepAliveMsecs: KEEP_ALIVE_MSECS });
    httpsAgents.set(key, agent);
  }
  return agent;
}

export function exchange(call: HttpCall): Promise<Result<HttpResponse, TransportFailure>> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    if (call.signal?.aborted) return resolve({ ok: false, error: { kind: "aborted", latencyMs: 0 } });
    const agent = agentFor(call.url, call.caFile);
    if (!agent.ok)
      return resolve({ ok: false, error: { kind: "config", detail: agent.error, latencyMs: 0 } });

    let settled = false;
    const finish = (r: Result<HttpResponse, TransportFailure>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      call.signal?.removeEventListener("abort", onAbort);
      resolve(r);
    };
    const mod = call.url.protocol === "https:" ? httpsModule() : http;
    const req = mod.request(call.url, { method: call.method, headers: call.headers, agent: agent.value });
    // destroy() after finish(): the socket is dropped, never handed back to the pool half-read.
    const timer = setTimeout(() => {
      finish({ ok: false, error: { kind: "timeout", latencyMs: elapsed() } });
      req.destroy();
    }, call.timeoutMs);
    const onAbort = () => {
      finish({ ok: false, error: { kind: "aborted", latencyMs: elapsed() } });
      req.destroy();
    };
    call.signal?.addEventListener("abort", onAbort, { once: true });

    const networkFailure = (code: string, detail: string) =>
      finish({
        ok: false,
        error: { kind: "network", code, detail, latencyMs: elapsed() },
      });
    req.on("error", (e: NodeJS.ErrnoException) => networkFailure(e.code ?? "EUNKNOWN", e.message));
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const sink = call.stream?.(res.statusCode ?? 0, res.headers);
      const done = () =>
        finish({
          ok: true,
          value: {
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: "",
            bytes: size,
            latencyMs: elapsed(),
          },
        });
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          finish({ ok: false, error: { kind: "too_large", latencyMs: elapsed() } });
          req.destroy();
          return;
        }
        if (sink) {
          if (!sink(chunk)) {
            done();
            req.destroy();
          }
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () => {
        if (sink) return done();
        const body = Buffer.concat(chunks);
        finish({
          ok: true,
          value: {
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: body.toString("utf8"),
            bytes: body.length,
            latencyMs: elapsed(),
          },
        });
      });
      res.on("error", (e: NodeJS.ErrnoException) => networkFailure(e.code ?? "EENDEDEARLY", e.message));
      res.on("close", () => {
        if (!res.complete) networkFailure("EENDEDEARLY", "connection ended before the reply was complete");
      });
    });
    req.end(call.body);
  });
}
