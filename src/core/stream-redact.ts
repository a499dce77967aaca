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
import {
  credentialSpans,
  longestSecret,
  openShapeStart,
  REDACTED,
  type RunningEnd,
  redact,
  runningCredential,
  SHAPE_CONTEXT_MAX_CHARS,
  spacedSecrets,
} from "./redact.js";

/**
 * The most text one stream holds back (docs/context.md "Streaming"). Past it, a credential still
 * being written is redacted whole at once and whatever continues it is dropped; any other text
 * is released but for its last FORCED_TAIL_CHARS. Far above any real credential (a 16384-bit
 * RSA key's PEM block is about 12.6 KB), and small enough that every piece costs time in
 * proportion to its own length, not to everything streamed before it.
 */
export const STREAM_HOLD_MAX_CHARS = 32 * 1024;

/**
 * Kept back when a long run of text without a place to cut is released: longer than the
 * unfinished start of any credential shape (a PEM BEGIN line, `Bearer` and its white space, a
 * connection-string key), which is all a credential can have shown before it is one.
 */
const FORCED_TAIL_CHARS = 1024;

/** The end of a PEM END line that arrived in an earlier piece is looked for this far back. */
const END_OVERLAP_CHARS = 128;

const SPACE = /\s/;

/** How much of `text` can go out now without cutting a credential in two. */
export function safeCut(text: string): number {
  const spans = credentialSpans(text);
  const spaced = spacedSecrets();
  // A match that runs to the end of the text may go on (an open PEM block, a growing key):
  // nothing from its start on can go out yet.
  let limit = text.length;
  for (const [s, e] of spans) if (e === text.length && s < limit) limit = s;
  for (let c = limit; c > 0; c--) {
    if (!SPACE.test(text[c - 1]!)) continue;
    if (spans.some(([s, e]) => s < c && c < e)) continue;
    if (openShapeStart(text, c) !== undefined) continue;
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

/** A credential being dropped after it was redacted whole: where each of its matches ends. */
interface Dropping {
  ends: Array<RunningEnd & { tail: string }>;
}

/**
 * One stream of text: push pieces in, get out what can safely be shown, redacted. What it
 * holds is bounded (STREAM_HOLD_MAX_CHARS), and a piece is scanned again only when it could
 * make a new place to cut, so its cost is linear in what arrives.
 */
export class StreamRedactor {
  private held = "";
  /** The held text ends in a credential still being written (it blocks every cut after its start). */
  private running: RunningEnd[] | undefined;
  /** What arrived since the running credential may have ended. */
  private mayHaveEnded = false;
  private dropping: Dropping | undefined;

  push(piece: string): string {
    let text = piece;
    if (this.dropping) {
      const rest = this.drop(text);
      if (rest === undefined) return "";
      text = rest;
    }
    const before = this.held;
    this.held += text;
    const max = STREAM_HOLD_MAX_CHARS + longestSecret();
    if (this.running && !this.mayHaveEnded) {
      const around = before.slice(-END_OVERLAP_CHARS) + text;
      this.mayHaveEnded = this.running.some(({ end }) => end.test(around));
    }
    // Only white space makes a new place to cut (or a spaced registered value that stopped
    // matching); while a credential runs, only its end can.
    const rescan =
      this.held.length > max ||
      spacedSecrets().length > 0 ||
      (SPACE.test(text) && (this.running === undefined || this.mayHaveEnded));
    if (!rescan) return "";
    let out = "";
    const n = safeCut(this.held);
    if (n > 0) {
      out = redact(this.held.slice(0, n));
      this.held = this.held.slice(n);
    }
    if (this.held.length > max) return out + this.force();
    const running = runningCredential(this.held);
    this.running = running?.ends;
    this.mayHaveEnded = false;
    return out;
  }

  /** The end of the stream: whatever is held, redacted as a whole. */
  end(): string {
    const out = this.held;
    this.held = "";
    this.running = undefined;
    this.mayHaveEnded = false;
    // A credential being dropped ran to the end: it went out as REDACTED already.
    this.dropping = undefined;
    return out === "" ? "" : redact(out);
  }

  /**
   * The held text passed STREAM_HOLD_MAX_CHARS without a place to cut. A credential still being
   * written at its end goes out as REDACTED (with everything before it, redacted) and the rest
   * of it is dropped as it arrives; otherwise all but the last FORCED_TAIL_CHARS go out.
   */
  private force(): string {
    const held = this.held;
    this.running = undefined;
    this.mayHaveEnded = false;
    const spans = credentialSpans(held).sort((a, b) => b[0] - a[0]);
    const running = runningCredential(held);
    if (running) {
      // A credential that begins earlier and reaches into this one goes with it.
      let x = running.start;
      for (const [s, e] of spans) if (s < x && e > x) x = s;
      this.held = "";
      this.dropping = {
        ends: running.ends.map((r) => ({
          ...r,
          tail: held.slice(Math.max(r.start, held.length - END_OVERLAP_CHARS)),
        })),
      };
      return redact(held.slice(0, x)) + REDACTED;
    }
    // Not inside a credential nor just before one (its key and `=` decide what it is).
    let y = held.length - FORCED_TAIL_CHARS - longestSecret();
    for (const [s, e] of spans) if (s - SHAPE_CONTEXT_MAX_CHARS < y && y < e) y = s - SHAPE_CONTEXT_MAX_CHARS;
    if (y <= 0) {
      // Credentials one after another all the way: cut right after the last whole one.
      y = Math.max(0, ...spans.map(([, e]) => e).filter((e) => e <= held.length - FORCED_TAIL_CHARS));
      if (y === 0) y = held.length - FORCED_TAIL_CHARS;
    }
    // Never between the two halves of a character.
    const code = held.charCodeAt(y - 1);
    if (code >= 0xd800 && code <= 0xdbff) y--;
    this.held = held.slice(y);
    this.running = runningCredential(this.held)?.ends;
    return redact(held.slice(0, y));
  }

  /** Drops text that continues a credential already shown as REDACTED; returns what follows it. */
  private drop(piece: string): string | undefined {
    const d = this.dropping!;
    let endAt = 0;
    const still: Dropping["ends"] = [];
    for (const r of d.ends) {
      const search = r.tail + piece;
      const m = r.end.exec(search);
      if (!m) {
        still.push({ ...r, tail: search.slice(-END_OVERLAP_CHARS) });
        continue;
      }
      const at = m.index + (r.endIncluded ? m[0].length : 0) - r.tail.length;
      endAt = Math.max(endAt, at);
    }
    if (still.length > 0) {
      d.ends = still;
      return undefined;
    }
    this.dropping = undefined;
    return piece.slice(endAt);
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
