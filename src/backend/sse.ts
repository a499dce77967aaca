/**
 * Server-sent events (the `text/event-stream` framing both OpenAI wire shapes stream in),
 * parsed incrementally: bytes arrive in arbitrary pieces, so a line, a field or a UTF-8
 * character may be split anywhere. Only `event` and `data` matter to Scoot; `id`, `retry`
 * and comment lines (`:` keep-alives) are read and ignored.
 */
import { StringDecoder } from "node:string_decoder";

export interface SseEvent {
  /** The `event:` field, or "message" when the server sent none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
}

/** One event's data larger than this is not a token delta: the stream is treated as broken. */
export const MAX_SSE_EVENT_BYTES = 8 * 1024 * 1024;

export class SseParser {
  private readonly decoder = new StringDecoder("utf8");
  private buffer = "";
  private eventName = "";
  private data: string[] = [];
  private dataChars = 0;
  /** A chunk ended on "\r": if the next starts with "\n", that "\n" belongs to the same line end. */
  private pendingCr = false;

  /** Feeds raw bytes; returns the events completed by them. Throws when one event is too large. */
  push(chunk: Buffer | string): SseEvent[] {
    let text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    if (this.pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      // A lone "\r" at the very end may be the first half of "\r\n".
      if (m[0] === "\r" && m.index === this.buffer.length - 1) {
        this.pendingCr = true;
      }
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    if (this.buffer.length + this.dataChars > MAX_SSE_EVENT_BYTES) {
      throw new Error(`one server-sent event is larger than ${MAX_SSE_EVENT_BYTES} bytes`);
    }
    return out;
  }

  /** End of stream: a last event without its blank line is still dispatched (lenient servers). */
  end(): SseEvent[] {
    const rest = this.buffer + this.decoder.end();
    this.buffer = "";
    const out: SseEvent[] = [];
    if (rest !== "") {
      const ev = this.line(rest);
      if (ev) out.push(ev);
    }
    const last = this.line("");
    if (last) out.push(last);
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") {
      if (this.data.length === 0) {
        this.eventName = "";
        return undefined;
      }
      const ev = { event: this.eventName || "message", data: this.data.join("\n") };
      this.eventName = "";
      this.data = [];
      this.dataChars = 0;
      return ev;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") {
      this.data.push(value);
      this.dataChars += value.length + 1;
      if (this.dataChars > MAX_SSE_EVENT_BYTES) {
        throw new Error(`one server-sent event is larger than ${MAX_SSE_EVENT_BYTES} bytes`);
      }
    } else if (field === "event") this.eventName = value;
    return undefined;
  }
}
