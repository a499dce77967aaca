/**
 * A scripted OpenAI-compatible server for tests: a real loopback HTTP server whose completion
 * replies come from a script, one item per request. It speaks `/v1/chat/completions`,
 * `/v1/responses` (each answered in its own shape, with usage) and `GET /v1/models`.
 *
 * Works for in-process clients and for the built CLI spawned as a child with
 * `SCOOT_BACKEND_BASE_URL=<url>` — spawn it asynchronously (spawnSync would block this
 * process's event loop, and with it the server).
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type ScriptItem =
  | {
      /** The model's text; an object is sent as its JSON text (a step, usually). */
      reply: string | object;
      delayMs?: number;
      /** Overrides the computed usage numbers. */
      usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
    }
  | { status: number; retryAfter?: number | string; body?: string | object; delayMs?: number }
  /** Never answers; `close()` destroys the socket. */
  | { hang: true }
  /** Destroys the socket after reading the request. */
  | { drop: true }
  /** 200 with a body that is not JSON. */
  | { malformed: true }
  /**
   * 400 "response_format json_schema not supported" when the request carries a structured-output
   * format (`true`: any; a string: only that type). Otherwise the item is skipped and the next
   * item answers the request.
   */
  | { rejectFormat: true | "json_schema" | "json_object" }
  /**
   * A streamed reply: the text in these pieces, each its own SSE event
   * (`chat.completion.chunk` or `response.output_text.delta`), with `pauseMs` between pieces.
   * `cut: true` destroys the connection after the pieces (no end marker); `hold: true` keeps
   * it open after them, the reply unfinished, until the client goes (an abort) or `close()` —
   * a model still writing when the person interrupts. A request that did not ask for
   * `stream: true` gets the joined text as plain JSON.
   */
  | {
      stream: string[];
      pauseMs?: number;
      cut?: boolean;
      hold?: boolean;
      /** Called as each piece is written (index), for ordering assertions. */
      onPiece?: (index: number) => void;
      /** Stream even when the request did not ask for it (a proxy that always streams). */
      force?: boolean;
      /** Content type of the stream (default `text/event-stream`). */
      contentType?: string;
    }
  /** 400 when the request asks for `stream: true` (a server that rejects the field); otherwise skipped. */
  | { rejectStream: true }
  /**
   * A body written exactly as given with status 200 (a response body or SSE events in a
   * server's documented shape). `hold: true` keeps the connection open after it, like a server
   * that never stops sampling; `close()` ends it.
   */
  | { raw: string; contentType?: string; hold?: boolean }
  | ((req: RecordedRequest) => ScriptItem);

export interface RecordedRequest {
  method: string;
  /** Path with query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON, or the raw text when the body is not JSON (undefined when empty). */
  body: unknown;
  raw: string;
}

export interface ScriptedServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string;
  /** Every request received, in order (completions and `/models`). */
  requests: RecordedRequest[];
  /** Only the completion requests (chat and responses). */
  completions(): RecordedRequest[];
  push(...items: ScriptItem[]): void;
  /** Script items not yet consumed. */
  remaining(): number;
  close(): Promise<void>;
}

/**
 * What an extra route answers: JSON (or raw text) with a status, or nothing at all. `contentType`
 * sends a string body under another type (an HTML error page from a server that is not
 * OpenAI-compatible).
 */
export type RouteAnswer = { status?: number; body: unknown; contentType?: string } | { hang: true };

export interface ScriptedServerOptions {
  /** Ids listed by `GET /v1/models`. */
  models?: string[];
  /**
   * Extra routes keyed by `"<METHOD> <path>"` (e.g. `"GET /props"`), answered before the built-in
   * ones, so `"GET /v1/models"` can be given another shape. A string body is sent as is.
   */
  routes?: Record<string, (req: RecordedRequest) => RouteAnswer>;
  /**
   * How `reply` items answer a request with `stream: true`: "plain" (default) answers plain
   * JSON, like a server that ignores streaming; "sse" streams the text in `ssePieces` pieces.
   */
  streaming?: "plain" | "sse";
  ssePieces?: number;
}

const CHAT_PATH = "/v1/chat/completions";
const RESPONSES_PATH = "/v1/responses";
const MODELS_PATH = "/v1/models";
/** A function item returning another function more often than this is a test bug. */
const MAX_FUNCTION_DEPTH = 16;

type Resolved = Exclude<ScriptItem, (req: RecordedRequest) => ScriptItem>;

/** Usage numbers that are deterministic and plausible: about four bytes per token. */
function tokens(text: string): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(text) / 4));
}

function formatType(path: string, body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const format =
    path === RESPONSES_PATH ? (b.text as Record<string, unknown> | undefined)?.format : b.response_format;
  if (typeof format !== "object" || format === null) return undefined;
  return String((format as Record<string, unknown>).type);
}

function sendJson(
  res: http.ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function replyBody(
  path: string,
  req: RecordedRequest,
  item: Extract<Resolved, { reply: unknown }>,
  n: number,
) {
  const text = typeof item.reply === "string" ? item.reply : JSON.stringify(item.reply);
  const model = (req.body as { model?: unknown } | undefined)?.model ?? "scripted";
  const prompt = item.usage?.prompt_tokens ?? tokens(req.raw);
  const completion = item.usage?.completion_tokens ?? tokens(text);
  const total = item.usage?.total_tokens ?? prompt + completion;
  const created = Math.floor(Date.now() / 1000);
  if (path === RESPONSES_PATH) {
    // The REST shape: `output_text` is an SDK convenience, so it is not sent here.
    return {
      id: `resp_scripted_${n}`,
      object: "response",
      created_at: created,
      status: "completed",
      model,
      output: [
        {
          type: "message",
          id: `msg_scripted_${n}`,
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text, annotations: [] }],
        },
      ],
      usage: { input_tokens: prompt, output_tokens: completion, total_tokens: total },
    };
  }
  return {
    id: `chatcmpl-scripted-${n}`,
    object: "chat.completion",
    created,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total },
  };
}

function wantsStream(body: unknown): boolean {
  return typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true;
}

/** `text` in `pieces` nearly equal parts (by UTF-16 units; never splits a surrogate pair). */
export function split(text: string, pieces: number): string[] {
  const chars = [...text];
  const size = Math.max(1, Math.ceil(chars.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out.length > 0 ? out : [""];
}

/** The SSE events of one streamed reply, in the shape of the endpoint asked. */
function sseEvents(
  path: string,
  rec: RecordedRequest,
  pieces: string[],
  n: number,
): { head: string[]; deltas: string[]; tail: string[] } {
  const text = pieces.join("");
  const model = (rec.body as { model?: unknown } | undefined)?.model ?? "scripted";
  const prompt = tokens(rec.raw);
  const completion = tokens(text);
  const created = Math.floor(Date.now() / 1000);
  const ev = (name: string | undefined, data: unknown) =>
    `${name ? `event: ${name}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
  if (path === RESPONSES_PATH) {
    const id = `resp_scripted_${n}`;
    const typed = (type: string, extra: Record<string, unknown>) => ev(type, { type, ...extra });
    const response = (status: string, extra: Record<string, unknown> = {}) => ({
      id,
      object: "response",
      created_at: created,
      status,
      model,
      output: [],
      ...extra,
    });
    return {
      head: [
        typed("response.created", { response: response("in_progress") }),
        typed("response.output_item.added", {
          output_index: 0,
          item: { type: "message", id: `msg_${n}`, role: "assistant", content: [] },
        }),
        typed("response.content_part.added", {
          output_index: 0,
          content_index: 0,
          part: { type: "output_text", text: "" },
        }),
      ],
      deltas: pieces.map((p) =>
        typed("response.output_text.delta", { output_index: 0, content_index: 0, delta: p }),
      ),
      tail: [
        typed("response.output_text.done", { output_index: 0, content_index: 0, text }),
        typed("response.completed", {
          response: response("completed", {
            output: [
              {
                type: "message",
                id: `msg_${n}`,
                role: "assistant",
                content: [{ type: "output_text", text, annotations: [] }],
              },
            ],
            usage: { input_tokens: prompt, output_tokens: completion, total_tokens: prompt + completion },
          }),
        }),
      ],
    };
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null, usage?: unknown) => ({
    id: `chatcmpl-scripted-${n}`,
    object: "chat.completion.chunk",
    created,
    model,
    choices: finish === "usage" ? [] : [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  });
  const includeUsage =
    (rec.body as { stream_options?: { include_usage?: unknown } } | undefined)?.stream_options
      ?.include_usage === true;
  return {
    head: [ev(undefined, chunk({ role: "assistant", content: "" }, null))],
    deltas: pieces.map((p) => ev(undefined, chunk({ content: p }, null))),
    tail: [
      ev(undefined, chunk({}, "stop")),
      ...(includeUsage
        ? [
            ev(
              undefined,
              chunk({}, "usage", {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: prompt + completion,
              }),
            ),
          ]
        : []),
      ev(undefined, "[DONE]"),
    ],
  };
}

function streamReply(
  res: http.ServerResponse,
  req: http.IncomingMessage,
  path: string,
  rec: RecordedRequest,
  item: {
    stream: string[];
    pauseMs?: number;
    cut?: boolean;
    hold?: boolean;
    onPiece?: (index: number) => void;
    contentType?: string;
  },
  n: number,
  later: (ms: number, fn: () => void) => void,
) {
  const { head, deltas, tail } = sseEvents(path, rec, item.stream, n);
  res.writeHead(200, {
    "content-type": item.contentType ?? "text/event-stream",
    "cache-control": "no-cache",
  });
  res.write(head.join(""));
  const sendPiece = (i: number) => {
    if (res.destroyed) return;
    if (i >= deltas.length) {
      if (item.cut) req.socket.destroy();
      else if (!item.hold) res.end(tail.join(""));
      return;
    }
    // The next step waits until this piece is flushed: a cut must come after the bytes.
    res.write(deltas[i], () => {
      item.onPiece?.(i);
      if (item.pauseMs && i + 1 < deltas.length) later(item.pauseMs, () => sendPiece(i + 1));
      else sendPiece(i + 1);
    });
  };
  sendPiece(0);
}

export async function startScriptedServer(
  script: ScriptItem[] = [],
  options: ScriptedServerOptions = {},
): Promise<ScriptedServer> {
  const queue: ScriptItem[] = [...script];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let completionCount = 0;

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  /** The item that answers this request: functions are called, inapplicable rejectFormat items skipped. */
  const next = (path: string, rec: RecordedRequest): Resolved | undefined => {
    for (;;) {
      let item = queue.shift();
      for (let depth = 0; typeof item === "function"; depth++) {
        if (depth >= MAX_FUNCTION_DEPTH) throw new Error("scripted server: function items nest too deep");
        item = item(rec);
      }
      if (item === undefined) return undefined;
      if ("rejectFormat" in item) {
        const type = formatType(path, rec.body);
        if (type === undefined || (item.rejectFormat !== true && item.rejectFormat !== type)) continue;
      }
      if ("rejectStream" in item && !wantsStream(rec.body)) continue;
      return item;
    }
  };

  const answer = (
    path: string,
    rec: RecordedRequest,
    res: http.ServerResponse,
    req: http.IncomingMessage,
  ) => {
    completionCount++;
    const n = completionCount;
    const item = next(path, rec);
    if (item === undefined) {
      sendJson(res, 500, {
        error: {
          message: `scripted server: script exhausted (completion request #${n} to ${path})`,
          type: "test",
        },
      });
      return;
    }
    if ("hang" in item) return;
    if ("drop" in item) {
      req.socket.destroy();
      return;
    }
    if ("malformed" in item) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("<html>this is not JSON</html>");
      return;
    }
    if ("raw" in item) {
      res.writeHead(200, { "content-type": item.contentType ?? "application/json" });
      if (item.hold) res.write(item.raw);
      else res.end(item.raw);
      return;
    }
    if ("rejectStream" in item) {
      sendJson(res, 400, {
        error: { message: "stream is not supported by this server", type: "invalid_request_error" },
      });
      return;
    }
    if ("stream" in item) {
      if (!wantsStream(rec.body) && !item.force) {
        sendJson(res, 200, replyBody(path, rec, { reply: item.stream.join("") }, n));
        return;
      }
      streamReply(res, req, path, rec, item, n, later);
      return;
    }
    if ("rejectFormat" in item) {
      sendJson(res, 400, {
        error: {
          message: `response_format json_schema not supported by this server`,
          type: "invalid_request_error",
          param: "response_format",
        },
      });
      return;
    }
    const send = () => {
      if ("reply" in item) {
        if (options.streaming === "sse" && wantsStream(rec.body)) {
          const text = typeof item.reply === "string" ? item.reply : JSON.stringify(item.reply);
          streamReply(res, req, path, rec, { stream: split(text, options.ssePieces ?? 3) }, n, later);
          return;
        }
        sendJson(res, 200, replyBody(path, rec, item, n));
        return;
      }
      const headers: Record<string, string> =
        item.retryAfter === undefined ? {} : { "retry-after": String(item.retryAfter) };
      const body = item.body ?? { error: { message: `scripted status ${item.status}`, type: "test" } };
      sendJson(res, item.status, body, headers);
    };
    if (item.delayMs) later(item.delayMs, send);
    else send();
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      if (raw !== "") {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      const url = req.url ?? "/";
      const path = url.split("?")[0]!;
      const rec: RecordedRequest = { method: req.method ?? "", path: url, headers: req.headers, body, raw };
      requests.push(rec);
      const route = options.routes?.[`${req.method} ${path}`];
      if (route) {
        const a = route(rec);
        if ("hang" in a) return;
        sendJson(res, a.status ?? 200, a.body, a.contentType ? { "content-type": a.contentType } : {});
      } else if (req.method === "POST" && (path === CHAT_PATH || path === RESPONSES_PATH)) {
        answer(path, rec, res, req);
      } else if (req.method === "GET" && path === MODELS_PATH) {
        const ids = options.models ?? ["scripted-model"];
        sendJson(res, 200, {
          object: "list",
          data: ids.map((id) => ({ id, object: "model", owned_by: "scoot-test" })),
        });
      } else {
        sendJson(res, 404, {
          error: { message: `scripted server: no route for ${req.method} ${path}`, type: "test" },
        });
      }
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    completions: () =>
      requests.filter((r) => r.path.startsWith(CHAT_PATH) || r.path.startsWith(RESPONSES_PATH)),
    push: (...items) => {
      queue.push(...items);
    },
    remaining: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        // Hanging requests and idle keep-alive connections would otherwise hold close() open.
        for (const s of sockets) s.destroy();
      }),
  };
}

/**
 * The fields of one model step: `action_input` is the string itself, or the input as JSON text.
 * The one place a test builds a step, so every test writes steps the way the prompt asks for them.
 */
export function stepFields(
  action: string,
  input: unknown,
  thought = `do ${action}`,
): { thought: string; action: string; action_input: string } {
  return { thought, action, action_input: typeof input === "string" ? input : JSON.stringify(input) };
}

/** One scripted model step, as the scripted server replies it. */
export function step(action: string, input: unknown, thought = `do ${action}`): ScriptItem {
  return { reply: stepFields(action, input, thought) };
}

/** One model step as the JSON text a model writes (an assistant message's content). */
export function stepText(action: string, input: unknown, thought = `do ${action}`): string {
  return JSON.stringify(stepFields(action, input, thought));
}
