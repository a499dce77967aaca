/**
 * The model backend: one call = one turn's request, retried on transient failures,
 * stepped down through the structured-output levels when `auto` meets a server that rejects them.
 */

import { splitExtraBody } from "../config/extra-body.js";
import { type Config, effectiveBackendTimeout } from "../config/schema.js";
import { abortableSleep } from "../core/sleep.js";
import type { Result } from "../core/types.js";
import {
  abortedMessage,
  backendError,
  httpMessage,
  isTransientNetworkCode,
  mayBeUnknownModel,
  protocolMessage,
  TOO_LARGE_WORDS,
  transportError,
} from "./errors.js";
import { probeBackendInfo } from "./probe.js";
import { backoffMs, isTransientStatus, retryAfterMs } from "./retry.js";
import {
  createStreamDecoder,
  isEventStream,
  type StreamDecoder,
  streamFields,
  WHITESPACE_FLOOD_CHARS,
} from "./stream.js";
import { exchange } from "./transport.js";
import type {
  Backend,
  BackendError,
  BackendEvent,
  BackendReply,
  BackendRequest,
  StructuredLevel,
} from "./types.js";
import { buildBody, displayUrl, joinUrl, listsModel, parseReply, serverMessage } from "./wire.js";

/** How long a failed request waits for the server's model list, to name the models it has. */
const MODEL_LIST_TIMEOUT_MS = 3_000;

/**
 * Statuses that mean "this request shape is not accepted". Any of them while a format is sent
 * makes `auto` step down: servers word the rejection too differently to match on text, and a
 * 400 with another cause fails again at `none`, where its real message reaches the user.
 * 422 is what FastAPI-based servers answer for a field they do not know.
 */
const SHAPE_REJECTED_STATUSES = new Set([400, 422]);

const LOWER_LEVEL: Record<StructuredLevel, StructuredLevel | undefined> = {
  json_schema: "json_object",
  json_object: "none",
  none: undefined,
};

const USER_AGENT = "scoot";

/** A body that is server-sent events whatever its content type says. */
function looksLikeEventStream(body: string): boolean {
  return /^\s*(data|event):/.test(body);
}

export interface BackendOptions {
  /** Sent as `Authorization: Bearer <token>`; no header without one (local backends). */
  token?: string;
  /** CLI `--retries`, overriding backend.max_retries. */
  retries?: number;
  onEvent?: (e: BackendEvent) => void;
  /** Injectable for tests; must return early when the signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injectable jitter source for tests. */
  random?: () => number;
}

export function createBackend(config: Config["backend"], opts: BackendOptions = {}): Backend {
  const api = config.api;
  const endpoint = { baseUrl: config.base_url, path: api === "chat" ? "chat/completions" : "responses" };
  const url = joinUrl(config.base_url, endpoint.path);
  const shown = url.ok ? displayUrl(url.value) : config.base_url;
  const { extra, ignored } = splitExtraBody(api, config.extra_body);
  let pendingWarning =
    ignored.length > 0
      ? `backend.extra_body keys ${ignored.join(", ")} are ignored: Scoot sets them itself`
      : undefined;
  const auto = config.structured_output === "auto";
  // Per instance; the agent keeps one instance per process, so "remembered for the process".
  let level: StructuredLevel = config.structured_output === "auto" ? "json_schema" : config.structured_output;
  const maxRetries = Math.max(0, Math.floor(opts.retries ?? config.max_retries));
  const timeoutMs = effectiveBackendTimeout({ backend: config });
  const sleep = opts.sleep ?? abortableSleep;
  const emit = (e: BackendEvent) => opts.onEvent?.(e);
  const fail = (kind: BackendError["kind"], message: string, status?: number, refused?: true) =>
    ({
      ok: false,
      error: { ...backendError(kind, shown, message, opts.token, status), ...(refused ? { refused } : {}) },
    }) as const;
  const replyKind = api === "chat" ? "a chat completion" : "a Responses API reply";

  // Remembered for the process like the level: once a server shows it does not stream,
  // later turns ask for plain JSON straight away (docs/context.md "Streaming").
  let streamOn = config.stream;

  const headers = (body: Buffer, streaming: boolean): Record<string, string> => ({
    "content-type": "application/json",
    accept: streaming ? "text/event-stream, application/json" : "application/json",
    "content-length": String(body.length),
    "user-agent": USER_AGENT,
    ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
  });

  /** The server's models when they do not include backend.model; undefined when it cannot say. */
  async function unlistedModel(
    signal: AbortSignal | undefined,
  ): Promise<{ model: string; listed: string[] } | undefined> {
    const r = await probeBackendInfo(config, opts.token, MODEL_LIST_TIMEOUT_MS, signal);
    if (!r.ok || r.value.ids.length === 0 || listsModel(r.value.ids, config.model)) return undefined;
    return { model: config.model, listed: r.value.ids };
  }

  async function complete(req: BackendRequest): Promise<Result<BackendReply, BackendError>> {
    if (!url.ok) return fail("config", url.error);
    if (pendingWarning) {
      emit({ type: "warning", message: pendingWarning });
      pendingWarning = undefined;
    }
    let tryLevel = level;
    let attempts = 0;
    let retriesUsed = 0;
    let tryStream = streamOn;
    // A shape rejection that also hits the request without `stream` was not about streaming.
    let streamCleared = false;
    for (;;) {
      const fields = buildBody({
        api,
        model: config.model,
        messages: req.messages,
        level: tryLevel,
        stepSchema: req.stepSchema,
        store: config.store,
        extra,
      });
      const body = Buffer.from(JSON.stringify(tryStream ? { ...fields, ...streamFields(api) } : fields));
      attempts++;
      let decoder: StreamDecoder | undefined;
      const r = await exchange({
        method: "POST",
        url: url.value,
        headers: headers(body, tryStream),
        body,
        timeoutMs,
        signal: req.signal,
        caFile: config.ca_file,
        // An event stream is read as one even when not asked for (some proxies always stream).
        stream: (status, h) => {
          if (status < 200 || status >= 300 || !isEventStream(h["content-type"])) return undefined;
          decoder = createStreamDecoder(api, req.onDelta, req.onReasoning);
          return decoder.data;
        },
      });
      const streamed = decoder as StreamDecoder | undefined;
      emit({
        type: "attempt",
        url: shown,
        attempt: attempts,
        level: tryLevel,
        outcome: r.ok ? r.value.status : r.error.kind,
        latencyMs: r.ok ? r.value.latencyMs : r.error.latencyMs,
        requestBytes: body.length,
        responseBytes: r.ok ? r.value.bytes : 0,
      });

      // Each branch either returns or leaves `retry` describing a transient failure.
      let retry: { reason: string; error: BackendError; delayMs?: number };
      if (r.ok) {
        const res = r.value;
        if (res.status >= 200 && res.status < 300) {
          let parsed = streamed ? streamed.finish() : parseReply(api, res.body);
          if (!streamed && !parsed.ok && looksLikeEventStream(res.body)) {
            // Events under another content type: read them after the fact (nothing shown early).
            const late = createStreamDecoder(api, req.onDelta, req.onReasoning);
            late.data(Buffer.from(res.body));
            parsed = late.finish();
          } else if (parsed.ok && tryStream && !streamed) {
            // 2xx plain JSON to `stream: true`: this server ignores the field; plain from now on.
            streamOn = false;
            emit({ type: "stream_off", reason: "the server answered plain JSON to stream: true" });
          }
          if (parsed.ok && !tryStream && streamOn) {
            streamOn = false;
            emit({ type: "stream_off", reason: "the server rejected stream: true" });
          }
          if (!parsed.ok && streamed) {
            return fail(
              "protocol",
              `${shown}: the reply stream ended without a complete reply: ${parsed.error}; the partial reply was discarded, not retried`,
              res.status,
              parsed.refused,
            );
          }
          if (!parsed.ok)
            return fail(
              "protocol",
              protocolMessage(shown, replyKind, parsed.error),
              res.status,
              parsed.refused,
            );
          if (auto) level = tryLevel;
          const v = parsed.value as typeof parsed.value & { flooded?: boolean };
          if (v.flooded)
            emit({
              type: "warning",
              message: `the reply's complete step was followed only by white space; stopped reading after ${WHITESPACE_FLOOD_CHARS} characters of it`,
            });
          return {
            ok: true,
            value: {
              text: parsed.value.text,
              ...(parsed.value.usage ? { usage: parsed.value.usage } : {}),
              ...(v.reasoning ? { reasoning: v.reasoning } : {}),
              ...(v.cutOff ? { cutOff: v.cutOff } : {}),
              ...(v.calls ? { calls: v.calls } : {}),
              latencyMs: res.latencyMs,
              requestBytes: body.length,
              responseBytes: res.bytes,
              level: tryLevel,
              attempts,
              streamed: Boolean(streamed),
            },
          };
        }
        const said = serverMessage(res.body);
        if (SHAPE_REJECTED_STATUSES.has(res.status)) {
          if (tryStream && !streamCleared) {
            // Same turn without `stream` first: some servers reject the field (or stream_options).
            tryStream = false;
            continue;
          }
          if (!tryStream && streamOn && !streamCleared) {
            streamCleared = true;
            tryStream = true;
          }
        }
        const lower = LOWER_LEVEL[tryLevel];
        if (auto && lower && SHAPE_REJECTED_STATUSES.has(res.status)) {
          // Same turn, one level lower; does not spend a retry.
          emit({
            type: "downgrade",
            from: tryLevel,
            to: lower,
            status: res.status,
            reason: backendError("http", shown, said, opts.token).message,
          });
          tryLevel = lower;
          continue;
        }
        // An answer about the model: the server's own list says whether it has one of that name.
        const unlisted = mayBeUnknownModel(res.status, said) ? await unlistedModel(req.signal) : undefined;
        const error = backendError(
          "http",
          shown,
          httpMessage(shown, res.status, said, attempts, !auto && tryLevel !== "none", endpoint, unlisted),
          opts.token,
          res.status,
        );
        if (!isTransientStatus(res.status)) return { ok: false, error };
        retry = { reason: `HTTP ${res.status}`, error, delayMs: retryAfterMs(res.headers["retry-after"]) };
      } else {
        const f = r.error;
        if (streamed && streamed.bytes() > 0 && f.kind !== "aborted") {
          // After the first byte a retry could show the user a second, different answer:
          // the turn fails with one clear line instead (docs/context.md "Streaming").
          const why =
            f.kind === "timeout"
              ? `no end within ${timeoutMs} ms`
              : f.kind === "network"
                ? f.detail
                : f.kind === "too_large"
                  ? TOO_LARGE_WORDS
                  : "the connection failed";
          return fail(
            "network",
            `${shown}: the reply stream was cut after ${streamed.bytes()} bytes (${why}); the partial reply was discarded, not retried`,
          );
        }
        const error = transportError(f, {
          url: shown,
          what: replyKind,
          timeoutMs,
          attempts,
          token: opts.token,
        });
        if (f.kind === "timeout") retry = { reason: `no answer within ${timeoutMs} ms`, error };
        else if (f.kind === "network" && isTransientNetworkCode(f.code)) retry = { reason: f.code, error };
        else return { ok: false, error };
      }

      if (retriesUsed >= maxRetries) return { ok: false, error: retry.error };
      const delayMs = retry.delayMs ?? backoffMs(retriesUsed, opts.random);
      retriesUsed++;
      emit({ type: "retry", url: shown, attempt: attempts, delayMs, reason: retry.reason });
      await sleep(delayMs, req.signal);
      if (req.signal?.aborted) return fail("aborted", abortedMessage(shown));
    }
  }

  return { complete, level: () => level };
}
