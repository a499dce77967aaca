/**
 * The baseline of bench/sse.mjs: Scoot's hand-written SSE parser as it was before
 * `eventsource-parser` took its place (src/backend/sse.ts at fcb6ab7), compiled to plain
 * JavaScript. Kept here only to be measured against; nothing in src/ imports it.
 */
import { StringDecoder } from "node:string_decoder";

export const MAX_SSE_EVENT_BYTES = 8 * 1024 * 1024;

export class SseParser {
  decoder = new StringDecoder("utf8");
  buffer = "";
  eventName = "";
  data = [];
  dataChars = 0;
  pendingCr = false;

  push(chunk) {
    let text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    if (this.pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
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

  end() {
    const rest = this.buffer + this.decoder.end();
    this.buffer = "";
    const out = [];
    if (rest !== "") {
      const ev = this.line(rest);
      if (ev) out.push(ev);
    }
    const last = this.line("");
    if (last) out.push(last);
    return out;
  }

  line(line) {
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
