/** Observation clipping: keep head and tail, name the bytes removed in the middle. */

/** Clip sizes (README "The ReACT loop": bash ~2 KB, file_read ~8 KB, ...), in bytes. */
export const CLIP = {
  bash: 2 * 1024,
  file_read: 8 * 1024,
  http_request: 8 * 1024,
  grep: 8 * 1024,
  glob: 8 * 1024,
  outline: 8 * 1024,
  mcp_call: 8 * 1024,
  parallel: 12 * 1024,
  recall: 16 * 1024,
  skill: 32 * 1024,
  final: Number.POSITIVE_INFINITY,
} as const;

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
