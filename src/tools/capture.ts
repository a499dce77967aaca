/**
 * Bounded capture of a child's output stream. The stream is always drained to its end
 * (a child blocked on a full pipe would never finish), but only `capBytes` are kept:
 * the first half and the most recent half, because the end of a long log (the error,
 * the summary) is usually what matters and the start says what was running.
 */
import type { Readable } from "node:stream";

export interface Capture {
  /** Resolves when the stream ended, errored or was destroyed. */
  done: Promise<void>;
  /** Bytes the stream produced, kept or not. */
  total(): number;
  /** Bytes of them kept for `text`. */
  kept(): number;
  /** The kept text, with a marker where bytes were dropped. */
  text(label: string): string;
  /** Stops reading (the producer may still hold the pipe open). */
  stop(): void;
}

export function captureStream(
  stream: Readable,
  capBytes: number,
  /** Sees every chunk as it arrives, kept or not (bash's OutputTally). */
  onChunk?: (chunk: Buffer) => void,
): Capture {
  const headCap = Math.ceil(capBytes / 2);
  const tailCap = capBytes - headCap;
  const head: Buffer[] = [];
  let headLen = 0;
  const tail: Buffer[] = [];
  let tailLen = 0;
  let total = 0;

  stream.on("data", (chunk: Buffer) => {
    onChunk?.(chunk);
    total += chunk.length;
    if (headLen < headCap) {
      const take = chunk.subarray(0, headCap - headLen);
      head.push(take);
      headLen += take.length;
      chunk = chunk.subarray(take.length);
      if (chunk.length === 0) return;
    }
    tail.push(chunk);
    tailLen += chunk.length;
    // Drop whole chunks from the front while the rest still covers the tail budget.
    while (tail.length > 1 && tailLen - tail[0]!.length >= tailCap) tailLen -= tail.shift()!.length;
  });

  const done = new Promise<void>((resolve) => {
    stream.once("close", resolve);
    stream.once("end", resolve);
    stream.once("error", () => resolve());
  });

  return {
    done,
    total: () => total,
    kept: () => headLen + Math.min(tailLen, tailCap),
    text(label: string): string {
      let tailBuf = Buffer.concat(tail);
      if (tailBuf.length > tailCap) tailBuf = tailBuf.subarray(tailBuf.length - tailCap);
      const headText = Buffer.concat(head).toString("utf8");
      const dropped = total - headLen - tailBuf.length;
      if (dropped <= 0) return headText + tailBuf.toString("utf8");
      // Cut edges may split a UTF-8 sequence; the replacement characters there are harmless.
      return (
        `${headText}\n[... ${label} truncated: ${dropped} of ${total} bytes dropped here ` +
        `(first ${headLen} and last ${tailBuf.length} kept) ...]\n${tailBuf.toString("utf8")}`
      );
    },
    stop(): void {
      stream.destroy();
    },
  };
}
