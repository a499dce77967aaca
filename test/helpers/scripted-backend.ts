/**
 * The in-process twin of test/helpers/scripted-server.ts: a `Backend` whose replies come from
 * the same `ScriptItem` script, one item per `complete()` call, with no HTTP in between. A
 * loop test written against it can switch to the loopback server (and the real client) by
 * handing the same script to `startScriptedServer`.
 *
 * What the wire adds is not here: no retries, no structured-output downgrade, no SSE framing.
 * Items that only make sense on the wire (`raw`, `rejectFormat`, `rejectStream`) throw with a
 * pointer to the loopback server, so a test cannot silently mean something else in process.
 */
import type {
  Backend,
  BackendError,
  BackendReply,
  BackendRequest,
  StructuredLevel,
  Usage,
} from "../../src/backend/types.js";
import type { Result } from "../../src/core/types.js";
import type { RecordedRequest, ScriptItem } from "./scripted-server.js";
import { split } from "./scripted-server.js";

/** Where in-process requests say they went: the path the loopback server would have seen. */
const CHAT_PATH = "/v1/chat/completions";
const IN_PROCESS_URL = `in-process${CHAT_PATH}`;
/** A function item returning another function more often than this is a test bug. */
const MAX_FUNCTION_DEPTH = 16;
/** Pieces a reply is cut into when the request streams and the item is a plain `reply`. */
const DEFAULT_STREAM_PIECES = 3;

type Resolved = Exclude<ScriptItem, (req: RecordedRequest) => ScriptItem>;

export interface ScriptedBackendOptions {
  /** The level every reply reports and `level()` returns (default `json_schema`). */
  level?: StructuredLevel;
  /** The model name in each recorded request body (default `scripted-model`). */
  model?: string;
  /** Pieces a `reply` is streamed in when the request has `onDelta` (default 3). */
  streamPieces?: number;
}

export interface ScriptedBackend extends Backend {
  /**
   * Every call as the loopback server would have recorded it (`body.messages`, `raw`), so
   * assertions read the same either way.
   */
  requests: RecordedRequest[];
  /** The same list: every in-process request is a completion request. */
  completions(): RecordedRequest[];
  /** Every call as the loop made it (messages copied at call time). */
  calls: BackendRequest[];
  push(...items: ScriptItem[]): void;
  /** Script items not yet consumed. */
  remaining(): number;
  /** Ends pending `hang` and `delayMs` items (they answer "aborted"). */
  close(): Promise<void>;
}

/** Usage numbers that are deterministic and plausible: about four bytes per token (as the server). */
function tokens(text: string): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(text) / 4));
}

function wireOnly(what: string): Error {
  return new Error(
    `scripted backend: a ${what} item needs the wire; use startScriptedServer (test/helpers/scripted-server.ts)`,
  );
}

export function scriptedBackend(
  script: ScriptItem[] = [],
  options: ScriptedBackendOptions = {},
): ScriptedBackend {
  const queue: ScriptItem[] = [...script];
  const requests: RecordedRequest[] = [];
  const calls: BackendRequest[] = [];
  const level = options.level ?? "json_schema";
  const pending = new Set<() => void>();

  const fail = (kind: BackendError["kind"], message: string, status?: number) =>
    ({
      ok: false,
      error: { kind, message, url: IN_PROCESS_URL, ...(status === undefined ? {} : { status }) },
    }) as const;

  const record = (req: BackendRequest): RecordedRequest => {
    const body = {
      model: options.model ?? "scripted-model",
      messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
      ...(req.onDelta ? { stream: true } : {}),
      response_format: { type: level, schema: req.stepSchema },
    };
    const raw = JSON.stringify(body);
    const rec: RecordedRequest = { method: "POST", path: CHAT_PATH, headers: {}, body, raw };
    requests.push(rec);
    calls.push({ ...req, messages: req.messages.map((m) => ({ ...m })) });
    return rec;
  };

  const next = (rec: RecordedRequest): Resolved | undefined => {
    let item = queue.shift();
    for (let depth = 0; typeof item === "function"; depth++) {
      if (depth >= MAX_FUNCTION_DEPTH) throw new Error("scripted backend: function items nest too deep");
      item = item(rec);
    }
    return item;
  };

  /** Waits `ms`, or until the request's signal or `close()` ends the wait; false: it was ended. */
  const wait = (ms: number | undefined, signal: AbortSignal | undefined): Promise<boolean> =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve(false);
      const done = (outcome: boolean) => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        pending.delete(onAbort);
        resolve(outcome);
      };
      const onAbort = () => done(false);
      const timer = ms === undefined ? undefined : setTimeout(() => done(true), ms);
      signal?.addEventListener("abort", onAbort, { once: true });
      pending.add(onAbort);
    });

  const reply = (
    rec: RecordedRequest,
    text: string,
    usage: Partial<Usage> | undefined,
    streamed: boolean,
  ) => {
    const prompt = usage?.prompt_tokens ?? tokens(rec.raw);
    const completion = usage?.completion_tokens ?? tokens(text);
    const value: BackendReply = {
      text,
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: usage?.total_tokens ?? prompt + completion,
      },
      latencyMs: 1,
      requestBytes: Buffer.byteLength(rec.raw),
      responseBytes: Buffer.byteLength(text),
      level,
      attempts: 1,
      ...(streamed ? { streamed: true } : {}),
    };
    return { ok: true, value } as const;
  };

  async function complete(req: BackendRequest): Promise<Result<BackendReply, BackendError>> {
    const rec = record(req);
    const n = requests.length;
    const item = next(rec);
    if (item === undefined)
      return fail("protocol", `scripted backend: script exhausted (completion request #${n})`);
    if ("raw" in item) throw wireOnly("raw");
    if ("rejectFormat" in item) throw wireOnly("rejectFormat");
    if ("rejectStream" in item) throw wireOnly("rejectStream");
    if ("hang" in item) {
      await wait(undefined, req.signal);
      return fail("aborted", "scripted backend: the request was aborted while the script hung");
    }
    if ("drop" in item) return fail("network", "scripted backend: connection dropped (scripted)");
    if ("malformed" in item) return fail("protocol", "scripted backend: the reply is not JSON (scripted)");
    if ("stream" in item) {
      if (!req.onDelta && !item.force) return reply(rec, item.stream.join(""), undefined, false);
      for (const [i, piece] of item.stream.entries()) {
        req.onDelta?.(piece);
        item.onPiece?.(i);
        if (item.pauseMs && i + 1 < item.stream.length && !(await wait(item.pauseMs, req.signal)))
          return fail("aborted", "scripted backend: aborted mid-stream");
      }
      if (item.cut) return fail("network", "scripted backend: the stream was cut (scripted)");
      return reply(rec, item.stream.join(""), undefined, true);
    }
    if (item.delayMs && !(await wait(item.delayMs, req.signal)))
      return fail("aborted", "scripted backend: aborted while the reply was delayed");
    if ("reply" in item) {
      const text = typeof item.reply === "string" ? item.reply : JSON.stringify(item.reply);
      if (req.onDelta) {
        for (const piece of split(text, options.streamPieces ?? DEFAULT_STREAM_PIECES)) req.onDelta(piece);
        return reply(rec, text, item.usage, true);
      }
      return reply(rec, text, item.usage, false);
    }
    const body =
      item.body === undefined
        ? `scripted status ${item.status}`
        : typeof item.body === "string"
          ? item.body
          : JSON.stringify(item.body);
    return fail("http", `scripted backend: HTTP ${item.status}: ${body}`, item.status);
  }

  return {
    complete,
    level: () => level,
    requests,
    completions: () => requests,
    calls,
    push: (...items) => {
      queue.push(...items);
    },
    remaining: () => queue.length,
    close: async () => {
      for (const end of [...pending]) end();
    },
  };
}
