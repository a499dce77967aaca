/**
 * The one streaming redactor (docs/context.md "Streaming"): text that leaves Scoot piece by piece
 * (the answer on stdout, the thought on stderr, ACP chunks, serve events) is redacted here
 * before any subscriber sees it. The rules are redact.ts's own; what this adds is the cut:
 * a piece is released only up to a point no credential can straddle, and the rest is held
 * back until more text (or the end of the stream) shows where the credential ends.
 *
 * A cut is only ever made right after white space, because every credential shape is one
 * word except "Bearer <token>" and a PEM block (their open tails are held: openShapeStart).
 * A registered value may contain white space: while the held text could still be the start
 * of one, it is held too. Whole matches in the held text must not be cut through either.
 */
import { credentialSpans, openShapeStart, redact, spacedSecrets } from "./redact.js";

/** How much of `text` can go out now without cutting a credential in two. */
export function safeCut(text: string): number {
  const spans = credentialSpans(text);
  const spaced = spacedSecrets();
  // A match that runs to the end of the text may go on (an open PEM block, a growing key):
  // nothing from its start on can go out yet.
  let limit = text.length;
  for (const [s, e] of spans) if (e === text.length && s < limit) limit = s;
  for (let c = limit; c > 0; c--) {
    if (!/\s/.test(text[c - 1]!)) continue;
    if (spans.some(([s, e]) => s < c && c < e)) continue;
    if (openShapeStart(text.slice(0, c)) !== undefined) continue;
    if (spaced.some((secret) => straddles(text, c, secret))) continue;
    return c;
  }
  return 0;
}

/** Whether a registered value could start before `c` and go on past the end of `text`. */
function straddles(text: string, c: number, secret: string): boolean {
  // An occurrence wholly inside `text` is a span already; only one cut off by the end counts.
  const from = Math.max(0, text.length - secret.length + 1);
  for (let s = from; s < c; s++) if (secret.startsWith(text.slice(s))) return true;
  return false;
}

/** One stream of text: push pieces in, get out what can safely be shown, redacted. */
export class StreamRedactor {
  private held = "";

  push(piece: string): string {
    this.held += piece;
    const n = safeCut(this.held);
    if (n === 0) return "";
    const out = this.held.slice(0, n);
    this.held = this.held.slice(n);
    return redact(out);
  }

  /** The end of the stream: whatever is held, redacted as a whole. */
  end(): string {
    const out = this.held;
    this.held = "";
    return out === "" ? "" : redact(out);
  }
}

/** An event that carries a piece of streamed text: its type ends in `_delta` and it has `text`. */
type Piece = { type: string; text: string };

function isPiece(e: { type: string }): e is Piece {
  return e.type.endsWith("_delta") && typeof (e as { text?: unknown }).text === "string";
}

/** Pieces of one stream share a redactor: one per event type and turn. */
function channelOf(e: Piece): string {
  const turn = (e as { turn?: unknown }).turn;
  return `${e.type}:${typeof turn === "number" ? turn : ""}`;
}

export interface RedactingListener<E> {
  (e: E): void;
  /** Releases every held tail (a run's end). */
  flush(): void;
}

/**
 * Wraps an event listener so every streamed piece it receives is redacted and safely cut, by
 * construction: any event whose type ends in `_delta` with a `text` field. Before any other
 * event, and before a piece of another stream, the held tails are released, so the order
 * subscribers see (thought, then answer, then the step) is the order of the stream.
 */
export function redactStreamedEvents<E extends { type: string }>(
  listener: (e: E) => void,
): RedactingListener<E> {
  const channels = new Map<string, { redactor: StreamRedactor; last: E }>();
  const release = (except?: string) => {
    for (const [key, ch] of channels) {
      if (key === except) continue;
      channels.delete(key);
      const text = ch.redactor.end();
      if (text !== "") listener({ ...ch.last, text });
    }
  };
  const wrapped = ((e: E) => {
    if (!isPiece(e)) {
      release();
      listener(e);
      return;
    }
    const key = channelOf(e);
    release(key);
    let ch = channels.get(key);
    if (!ch) {
      ch = { redactor: new StreamRedactor(), last: e };
      channels.set(key, ch);
    }
    ch.last = e;
    const text = ch.redactor.push(e.text);
    if (text !== "") listener({ ...e, text });
  }) as RedactingListener<E>;
  wrapped.flush = () => release();
  return wrapped;
}
