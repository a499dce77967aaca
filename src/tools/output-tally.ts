/**
 * What a command printed, counted as it streams (docs/keyboard.md "The live view"): every byte
 * and line of its stdout and stderr — also those the bounded capture (capture.ts) drops — and
 * its last lines in the order they arrived. The live view shows those last lines with the true
 * size, and, while the command runs, its newest lines under the spinner.
 *
 * Lines are what `wc -l` counts (newline bytes), plus one for an unterminated last line of a
 * stream. A line is read the way a terminal shows it: a CRLF ending is dropped and, after a
 * lone carriage return (a progress bar redrawing itself), only the text after it counts.
 */

/** How many of the last lines are kept (the view shows fewer). */
export const TAIL_LINES = 10;
/** A kept line is cut to this many bytes (the view cuts it to the screen anyway). */
export const TAIL_LINE_BYTES = 1024;

const LF = 0x0a;
const CR = 0x0d;

/** The whole output of a command, kept or not. */
export interface OutputSummary {
  /** Bytes of stdout and stderr together. */
  bytes: number;
  /** Lines of stdout and stderr together. */
  lines: number;
  /** Bytes of them the capture kept for the observation (less than `bytes` when it dropped some). */
  kept: number;
  /** The last lines (at most TAIL_LINES), oldest first, in arrival order across both streams. */
  tail: string[];
}

/** One stream's open (unterminated) line. */
class OpenLine {
  private parts: Buffer[] = [];
  private size = 0;
  cut = false;
  /** A carriage return ended the last chunk: the next byte says whether it was CRLF. */
  pendingCR = false;
  /** Bytes since the last newline (an unterminated last line counts when non-zero). */
  since = 0;

  add(bytes: Buffer): void {
    const room = TAIL_LINE_BYTES - this.size;
    if (bytes.length > room) this.cut = true;
    const take = bytes.length > room ? bytes.subarray(0, Math.max(0, room)) : bytes;
    if (take.length === 0) return;
    // Copied: a chunk must not be held alive by a few bytes of it.
    this.parts.push(Buffer.from(take));
    this.size += take.length;
  }

  reset(): void {
    this.parts = [];
    this.size = 0;
    this.cut = false;
  }

  text(): string {
    const s = Buffer.concat(this.parts).toString("utf8");
    return this.cut ? `${s}…` : s;
  }
}

export class OutputTally {
  private bytes = 0;
  private newlines = 0;
  private readonly tail: string[] = [];
  private readonly open = { stdout: new OpenLine(), stderr: new OpenLine() };

  feed(stream: "stdout" | "stderr", chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.bytes += chunk.length;
    const line = this.open[stream];
    let from = 0;
    // Only the last TAIL_LINES lines of a chunk can stay in the tail: the newlines before them
    // are only counted, so a command printing millions of lines costs one scan per chunk.
    let count = 0;
    for (let at = chunk.indexOf(LF); at !== -1; at = chunk.indexOf(LF, at + 1)) count += 1;
    if (count > TAIL_LINES) {
      let at = chunk.length;
      for (let i = 0; i <= TAIL_LINES; i++) at = chunk.lastIndexOf(LF, at - 1);
      this.newlines += count - TAIL_LINES;
      line.reset();
      line.pendingCR = false;
      line.since = 0;
      from = at + 1;
    }
    if (line.pendingCR) {
      line.pendingCR = false;
      if (chunk[from] !== LF) line.reset();
    }
    for (;;) {
      const lf = chunk.indexOf(LF, from);
      const end = lf === -1 ? chunk.length : lf;
      let piece = chunk.subarray(from, end);
      line.since += piece.length;
      if (piece.length > 0 && piece[piece.length - 1] === CR) {
        piece = piece.subarray(0, piece.length - 1);
        if (lf === -1) line.pendingCR = true;
      }
      const cr = piece.lastIndexOf(CR);
      if (cr !== -1) {
        line.reset();
        piece = piece.subarray(cr + 1);
      }
      line.add(piece);
      if (lf === -1) break;
      this.newlines += 1;
      this.push(line.text());
      line.reset();
      line.since = 0;
      from = lf + 1;
    }
  }

  private push(text: string): void {
    this.tail.push(text);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
  }

  /** The newest `n` lines, an open line of each stream included (what is on screen now). */
  newest(n: number): string[] {
    const lines = [...this.tail];
    for (const line of [this.open.stdout, this.open.stderr]) if (line.since > 0) lines.push(line.text());
    return lines.slice(-n);
  }

  /** The totals once the command ended; `kept` is what the capture holds. */
  summary(kept: number): OutputSummary {
    const unterminated = [this.open.stdout, this.open.stderr].filter((l) => l.since > 0).length;
    return {
      bytes: this.bytes,
      lines: this.newlines + unterminated,
      kept,
      tail: this.newest(TAIL_LINES),
    };
  }
}
