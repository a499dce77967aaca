/**
 * Request lines for `serve`, bounded while they are read (docs/editors.md "scoot
 * serve"). readline buffers a whole line before anyone can look at its size, so one 600 MB
 * line kills the process with the request in flight. Here a line over the limit stops being
 * buffered the moment it passes the limit; the rest is discarded up to the next newline and
 * the line comes out as `{ tooLong }`, so the server answers it and keeps serving.
 *
 * Lines are split on `\n` (a trailing `\r` is dropped) and decoded as UTF-8 only once whole.
 * Reading pauses while lines wait, so a slow request holds back the input, as before.
 */
import type { Readable } from "node:stream";

/** `head`: the line's first bytes (at most `headBytes`), kept so a caller can still name its request. */
export type BoundedLine = { line: string } | { tooLong: number; head?: string };

export async function* boundedLines(
  input: Readable,
  maxBytes: number,
  signal: AbortSignal,
  headBytes = 0,
): AsyncGenerator<BoundedLine> {
  const queue: BoundedLine[] = [];
  let parts: Buffer[] = [];
  let size = 0;
  let discarding = false;
  let discarded = 0;
  let head: string | undefined;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  const finishLine = () => {
    if (discarding) queue.push({ tooLong: discarded, ...(head !== undefined ? { head } : {}) });
    else {
      let text = Buffer.concat(parts, size).toString("utf8");
      if (text.endsWith("\r")) text = text.slice(0, -1);
      queue.push({ line: text });
    }
    parts = [];
    size = 0;
    discarding = false;
    discarded = 0;
    head = undefined;
  };
  const onData = (raw: Buffer | string) => {
    const chunk = typeof raw === "string" ? Buffer.from(raw) : raw;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      if (discarding) discarded += piece.length;
      else if (size + piece.length > maxBytes) {
        discarding = true;
        discarded = size + piece.length;
        if (headBytes > 0)
          head = Buffer.concat([...parts, piece], Math.min(headBytes, size + piece.length)).toString("utf8");
        parts = [];
        size = 0;
      } else if (piece.length > 0) {
        parts.push(piece);
        size += piece.length;
      }
      if (nl < 0) break;
      finishLine();
      start = nl + 1;
    }
    if (queue.length > 0) input.pause();
    poke();
  };
  const onEnd = () => {
    if (size > 0 || discarding) finishLine();
    ended = true;
    poke();
  };
  const onError = (e: Error) => {
    failure = e;
    ended = true;
    poke();
  };
  input.on("data", onData);
  input.on("end", onEnd);
  input.on("close", onEnd);
  input.on("error", onError);
  signal.addEventListener("abort", poke, { once: true });
  try {
    for (;;) {
      if (signal.aborted) return;
      const next = queue.shift();
      if (next !== undefined) {
        if (queue.length === 0 && !ended) input.resume();
        yield next;
        continue;
      }
      if (failure) throw failure;
      if (ended) return;
      input.resume();
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    input.off("data", onData);
    input.off("end", onEnd);
    input.off("close", onEnd);
    input.off("error", onError);
    signal.removeEventListener("abort", poke);
    input.pause();
  }
}
