/**
 * Server-sent events (the `text/event-stream` framing both OpenAI wire shapes stream in),
 * parsed incrementally by `eventsource-parser`: bytes arrive in arbitrary pieces, so a line, a
 * field or a UTF-8 character may be split anywhere. This wrapper decodes the bytes, gives the
 * events completed by each piece, dispatches a last event that lacks its blank line, and
 * bounds the size of one event. Only `event` and `data` matter to Scoot; `id`, `retry` and
 * comment lines (`:` keep-alives) are read and ignored.
 */
import { StringDecoder } from "node:string_decoder";
import {
  createParser,
  type EventSourceMessage,
  type EventSourceParser,
  type ParseError,
} from "eventsource-parser";

export interface SseEvent {
  /** The `event:` field, or "message" when the server sent none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
}

/** One event's data larger than this is not a token delta: the stream is treated as broken. */
export const MAX_SSE_EVENT_BYTES = 8 * 1024 * 1024;

const TOO_LARGE = `one server-sent event is larger than ${MAX_SSE_EVENT_BYTES} bytes`;

export class SseParser {
  private readonly decoder = new StringDecoder("utf8");
  private readonly parser: EventSourceParser;
  /** The events completed by the piece being fed. */
  private out: SseEvent[] = [];

  constructor() {
    this.parser = createParser({
      onEvent: (m: EventSourceMessage) => {
        // The library bounds what it holds between pieces; an event whole in one piece is checked here.
        if (m.data.length > MAX_SSE_EVENT_BYTES) throw new Error(TOO_LARGE);
        this.out.push({ event: m.event ?? "message", data: m.data });
      },
      // Unknown fields and a bad `retry` are ignored, as the format asks; only size stops the stream.
      onError: (e: ParseError) => {
        if (e.type === "max-buffer-size-exceeded") throw new Error(TOO_LARGE);
      },
      maxBufferSize: MAX_SSE_EVENT_BYTES,
    });
  }

  /** Feeds raw bytes; returns the events completed by them. Throws when one event is too large. */
  push(chunk: Buffer | string): SseEvent[] {
    return this.feed(typeof chunk === "string" ? chunk : this.decoder.write(chunk));
  }

  /** End of stream: a last event without its blank line is still dispatched (lenient servers). */
  end(): SseEvent[] {
    // Two line ends close a pending line (or complete a held "\r") and then the event.
    return this.feed(`${this.decoder.end()}\n\n`);
  }

  private feed(text: string): SseEvent[] {
    this.out = [];
    if (text !== "") this.parser.feed(text);
    const events = this.out;
    this.out = [];
    return events;
  }
}
