/**
 * Bracketed paste for the REPL (docs/keyboard.md "The REPL"): the terminal is asked to mark pasted text
 * (`ESC[200~` … `ESC[201~`), and the newlines inside a paste become PASTED_NEWLINE, so
 * readline sees one line and a pasted multi-line block is one goal. The goal gets its
 * newlines back from `restoreNewlines`.
 */
import { Transform } from "node:stream";

export const PASTE_ON = "\x1b[?2004h";
export const PASTE_OFF = "\x1b[?2004l";
const START = "\x1b[200~";
const END = "\x1b[201~";
/** Shown on the prompt line where a pasted newline was (SYMBOL FOR NEWLINE). */
export const PASTED_NEWLINE = "\u2424";
/**
 * Where a paste begins and ends, for the key router (private-use characters no keyboard sends):
 * pasted text never answers a question. The router takes them out before the line editor.
 */
export const PASTE_BEGIN = "\ue000";
export const PASTE_END = "\ue001";

/** The longest tail of `text` that is a proper prefix of `marker`. */
function partialMarker(text: string, marker: string): number {
  // A lone ESC (the Escape key) is never held back: a marker is held from "ESC [" on.
  for (let n = Math.min(marker.length - 1, text.length); n > 1; n--) {
    if (marker.startsWith(text.slice(-n))) return n;
  }
  return 0;
}

export function pasteFilter(): Transform {
  let inPaste = false;
  let carry = "";
  return new Transform({
    decodeStrings: false,
    transform(chunk: Buffer | string, _enc, done) {
      let text = carry + (typeof chunk === "string" ? chunk : chunk.toString("utf8"));
      carry = "";
      let out = "";
      for (;;) {
        const marker = inPaste ? END : START;
        const at = text.indexOf(marker);
        if (at < 0) break;
        const piece = text.slice(0, at);
        out += inPaste
          ? `${piece.replace(/\r\n|\r|\n/g, PASTED_NEWLINE)}${PASTE_END}`
          : `${piece}${PASTE_BEGIN}`;
        text = text.slice(at + marker.length);
        inPaste = !inPaste;
      }
      const held = Math.max(partialMarker(text, START), partialMarker(text, END));
      carry = text.slice(text.length - held);
      text = text.slice(0, text.length - held);
      out += inPaste ? text.replace(/\r\n|\r|\n/g, PASTED_NEWLINE) : text;
      done(null, out);
    },
  });
}

export function restoreNewlines(line: string): string {
  return line.split(PASTED_NEWLINE).join("\n");
}
