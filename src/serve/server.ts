/**
 * The `serve` loop: reads request lines (bounded while read), answers them strictly one at a
 * time (later lines wait, and reading pauses), and returns when the input ends — after the request in hand is answered.
 * A bad line gets an error response and the loop goes on; nothing but responses is written.
 */
import type { Readable } from "node:stream";
import { type AgentEvent, wireEvent } from "../agent/events.js";
import { boundedLines } from "./bounded-lines.js";
import type { Method } from "./methods.js";
import {
  encodeResponse,
  errorResponse,
  MAX_REQUEST_BYTES,
  parseRequest,
  type RequestId,
  redactDeep,
  type ServeResponse,
} from "./protocol.js";

export interface ServeOptions {
  input: Readable;
  /** Receives each response line (newline included). */
  write: (line: string) => void;
  methods: Record<string, Method>;
  /** Aborting it cuts the running request short and stops reading. */
  signal: AbortSignal;
  log: (line: string) => void;
}

export interface ServeSummary {
  requests: number;
  errors: number;
}

/** `run.stream`: one `{"id", "event"}` line per trace event, written before the response. */
function eventWriter(id: RequestId, opts: ServeOptions): (e: AgentEvent) => void {
  return (e) => opts.write(`${JSON.stringify(redactDeep({ id, event: wireEvent(e) }))}\n`);
}

async function answer(line: string, opts: ServeOptions): Promise<ServeResponse> {
  const parsed = parseRequest(line);
  if (!parsed.ok) return parsed.response;
  const { id, method, params } = parsed.value;
  const handler = Object.hasOwn(opts.methods, method) ? opts.methods[method] : undefined;
  if (!handler) {
    const known = Object.keys(opts.methods).join(", ");
    return errorResponse(id, "method_not_found", `unknown method "${method}" (known: ${known})`);
  }
  try {
    const r = await handler(params, opts.signal, eventWriter(id, opts));
    return r.ok ? { id, ok: true, result: r.result } : errorResponse(id, r.code, r.message, r.extra);
  } catch (e) {
    // A bug in one request must not end the server.
    opts.log(`error: ${method} failed: ${(e as Error)?.stack ?? String(e)}`);
    return errorResponse(id, "internal_error", `${method} failed: ${(e as Error)?.message ?? String(e)}`);
  }
}

export async function serveLines(opts: ServeOptions): Promise<ServeSummary> {
  const summary: ServeSummary = { requests: 0, errors: 0 };
  for await (const item of boundedLines(opts.input, MAX_REQUEST_BYTES, opts.signal)) {
    if (opts.signal.aborted) break;
    // Blank lines (a trailing newline, keep-alives) are not requests.
    if ("line" in item && item.line.trim() === "") continue;
    summary.requests += 1;
    const response =
      "line" in item
        ? await answer(item.line, opts)
        : errorResponse(
            null,
            "invalid_request",
            `request line is larger than ${MAX_REQUEST_BYTES} bytes (${item.tooLong} bytes discarded); send smaller requests`,
          );
    if (!response.ok) summary.errors += 1;
    opts.write(encodeResponse(response));
  }
  return summary;
}
