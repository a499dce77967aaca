/**
 * Clipping text to a byte size, head and tail kept, with a marker naming the bytes removed in
 * the middle. Shared by tools, the loop, the trace, stores and MCP rendering (core).
 */

export function clip(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return text;
  const keep = Math.max(0, maxBytes - 64);
  const headLen = Math.ceil(keep * 0.6);
  const tailLen = keep - headLen;
  // Decoding partial UTF-8 at the cut edges yields U+FFFD at worst; never throws.
  const head = buf
    .subarray(0, headLen)
    .toString("utf8")
    .replace(/\uFFFD$/, "");
  const tail = buf
    .subarray(buf.length - tailLen)
    .toString("utf8")
    .replace(/^\uFFFD/, "");
  const removed = buf.length - Buffer.byteLength(head) - Buffer.byteLength(tail);
  return `${head}\n[... ${removed} bytes clipped ...]\n${tail}`;
}
