/**
 * The one word wrap for a terminal (docs/keyboard.md "The live view", "Lines on a terminal"):
 * text breaks between words at the width instead of wherever the terminal's own wrap falls; a
 * word longer than a whole line is broken. `LineWrap` takes text piece by piece, the column
 * tracked across pieces, so a word that arrives in two pieces is still kept whole: the word being
 * written is held until a space or a newline ends it (or until it is known to be longer than a
 * line), or until `flush` says the writer has nothing more for now. `wrapText` wraps a whole text.
 *
 * A continuation line keeps the indentation of the line it continues (up to half the width);
 * with `hang`, a line laid out in columns (`WARN  name  detail`, `  --flag   what it does`)
 * continues under its last column that starts in the first half of the width. White space at a
 * break is dropped, and the view's colour sequences pass through in place. Only used on a
 * terminal: on a pipe the text goes out byte for byte.
 */
import { charWidth, escapeAt } from "./width.js";

/** Tab stops are this many columns apart. */
const TAB_WIDTH = 8;
/** A continuation keeps its line's indentation only up to this share of the width. */
const MAX_INDENT_SHARE = 0.5;
/** A width below this is taken as this (there is no sensible place to break a narrower line). */
export const MIN_WRAP_WIDTH = 10;

function isBlank(c: string): boolean {
  return c === " " || c === "\t";
}

export interface WrapOptions {
  /**
   * Continuation lines stand under the line's last column that starts in the first half of
   * the width before the first break (text after a run of two or more blanks), not under its
   * indentation.
   */
  hang?: boolean;
}

/** `text` wrapped at `width` columns, as if written from the start of a line; nothing is held back. */
export function wrapText(text: string, width: number, opts: WrapOptions = {}): string {
  const lines = new LineWrap(opts);
  return lines.feed(text, width) + lines.flush(width);
}

export class LineWrap {
  private readonly hang: boolean;
  /** With `hang`: the column continuation lines of this line stand at, once one was found. */
  private hangAt: number | undefined;
  /** This line has been broken: its columns are settled. */
  private broken = false;
  /** Columns written on the current screen line. */
  private col = 0;
  /** Leading white space of the current line, and its columns. */
  private indent = "";
  private indentWidth = 0;
  /** Nothing but white space written on this line so far: more of it is indentation. */
  private atStart = true;
  /** A word has been written on this screen line (only then may the next one go below). */
  private lineHasWord = false;
  /** Held white space (and escapes) before the held word. */
  private space = "";
  /** The word being written, held until it ends, and its columns. */
  private word = "";
  private wordWidth = 0;
  /** The current word is longer than a line: it is written as it comes, broken at the width. */
  private breaking = false;

  constructor(opts: WrapOptions = {}) {
    this.hang = opts.hang === true;
  }

  /** The column the cursor is at after everything returned so far. */
  get column(): number {
    return this.col;
  }

  /** Whether the current line has text (written or held): it has not ended. */
  get open(): boolean {
    return this.col > 0 || this.space !== "" || this.word !== "";
  }

  /** What to write for `text`, wrapped at `width` columns; the last word may be held back. */
  feed(text: string, width: number): string {
    const w = Math.max(MIN_WRAP_WIDTH, width);
    let out = "";
    for (let i = 0; i < text.length; ) {
      const esc = escapeAt(text, i);
      if (esc) {
        i += esc.length;
        out += this.escape(esc);
        continue;
      }
      const c = String.fromCodePoint(text.codePointAt(i)!);
      i += c.length;
      if (c === "\n") {
        out += `${this.placeWord(w)}${this.dropSpace()}\n`;
        this.newLine();
      } else if (isBlank(c)) {
        out += this.placeWord(w);
        if (this.atStart) {
          out += c;
          this.col += this.advance(c, this.col);
          this.indent += c;
          this.indentWidth = this.col;
        } else this.space += c;
      } else {
        if (this.hang && this.word === "" && !this.breaking) this.noteColumn(w);
        this.atStart = false;
        if (this.breaking) out += this.breakChar(c, w);
        else {
          this.word += c;
          this.wordWidth += charWidth(c);
          if (this.wordWidth > w - this.continuation(w).width) out += this.startBreaking(w);
        }
      }
    }
    return out;
  }

  /**
   * What the writer has so far, all of it: the held word and white space are written (the
   * column goes on from there), for a writer whose text ends here for now, such as a question.
   */
  flush(width: number): string {
    const w = Math.max(MIN_WRAP_WIDTH, width);
    let out = this.placeWord(w);
    if (this.space !== "") {
      this.col += this.spaceWidth();
      out += this.space;
      this.space = "";
    }
    return out;
  }

  /** A word starts after held white space: a run of two or more blanks marks a column. */
  private noteColumn(width: number): void {
    if (this.broken || this.atStart || !this.lineHasWord) return;
    const blanks = this.space.replace(/[^ \t]/g, "");
    if (blanks.length < 2 && !blanks.includes("\t")) return;
    const at = this.col + this.spaceWidth();
    if (at <= width * MAX_INDENT_SHARE) this.hangAt = at;
  }

  private advance(c: string, col: number): number {
    return c === "\t" ? TAB_WIDTH - (col % TAB_WIDTH) : 1;
  }

  private spaceWidth(): number {
    let col = this.col;
    for (const c of this.space) if (isBlank(c)) col += this.advance(c, col);
    return col - this.col;
  }

  /** The escapes held with white space that a break drops. */
  private dropSpace(): string {
    const kept = this.space.replace(/[ \t]/g, "");
    this.space = "";
    return kept;
  }

  private continuation(width: number): { text: string; width: number } {
    if (this.hangAt !== undefined && this.hangAt > this.indentWidth)
      return { text: " ".repeat(this.hangAt), width: this.hangAt };
    return this.indentWidth <= width * MAX_INDENT_SHARE
      ? { text: this.indent, width: this.indentWidth }
      : { text: "", width: 0 };
  }

  private lineBreak(width: number): string {
    const cont = this.continuation(width);
    this.col = cont.width;
    this.lineHasWord = false;
    this.broken = true;
    return `\n${cont.text}`;
  }

  private escape(esc: string): string {
    if (this.breaking || (this.word === "" && this.space === "")) return esc;
    if (this.word !== "") this.word += esc;
    else this.space += esc;
    return "";
  }

  /** Writes the held word after the held space, on this line when it fits, else on the next. */
  private placeWord(width: number): string {
    if (this.breaking) {
      this.breaking = false;
      return "";
    }
    if (this.word === "") return "";
    const spaceWidth = this.spaceWidth();
    let out: string;
    if (!this.lineHasWord || this.col + spaceWidth + this.wordWidth <= width) {
      out = this.space + this.word;
      this.col += spaceWidth + this.wordWidth;
    } else {
      out = this.dropSpace() + this.lineBreak(width) + this.word;
      this.col += this.wordWidth;
    }
    this.space = "";
    this.word = "";
    this.wordWidth = 0;
    this.lineHasWord = true;
    return out;
  }

  /** The held word is longer than a line: it starts here and is broken at the width from now on. */
  private startBreaking(width: number): string {
    const spaceWidth = this.spaceWidth();
    let out: string;
    if (this.lineHasWord && this.col + spaceWidth + 1 > width) out = this.dropSpace() + this.lineBreak(width);
    else {
      out = this.space;
      this.col += spaceWidth;
      this.space = "";
    }
    const word = this.word;
    this.word = "";
    this.wordWidth = 0;
    this.breaking = true;
    for (let i = 0; i < word.length; ) {
      const esc = escapeAt(word, i);
      if (esc) {
        out += esc;
        i += esc.length;
        continue;
      }
      const c = String.fromCodePoint(word.codePointAt(i)!);
      i += c.length;
      out += this.breakChar(c, width);
    }
    return out;
  }

  private breakChar(c: string, width: number): string {
    const cw = charWidth(c);
    let out = "";
    if (this.col + cw > width && this.lineHasWord) out = this.lineBreak(width);
    this.col += cw;
    this.lineHasWord = true;
    return out + c;
  }

  private newLine(): void {
    this.col = 0;
    this.indent = "";
    this.indentWidth = 0;
    this.atStart = true;
    this.lineHasWord = false;
    this.breaking = false;
    this.hangAt = undefined;
    this.broken = false;
  }
}
