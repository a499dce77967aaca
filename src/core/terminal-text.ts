/**
 * Neutralising control and invisible characters in everything Scoot writes to a terminal
 * (docs/safety.md "Hostile inputs"). Text from the model, tools, skills, sessions and the command line
 * can carry escape sequences: OSC 52 writes the user's clipboard, others retitle the window,
 * clear the screen or hide text. It can also carry characters that draw nothing or reorder what
 * is drawn, so that what a person reads (in an approval question, the live view, an editor's
 * tool-call title) is not what runs. Every byte written through `Io` passes `terminalText`:
 *
 * - C0 controls except newline and tab become `\xNN` (ESC → `\x1b`, NUL → `\x00`); a carriage
 *   return directly before a newline is dropped (CRLF text reads the same), a lone one is
 *   escaped (it could overwrite the line it sits on);
 * - DEL and the C1 controls (U+007F–U+009F; U+009B is a one-character CSI on some terminals)
 *   become `\u00NN` — the JSON escape, so `--json`, `session show` and `audit show` output (whose
 *   C0 characters JSON already escapes) stays valid JSON that decodes to exactly the same
 *   strings;
 * - every format character (Unicode category Cf) — the bidirectional embedding, override,
 *   isolate and mark controls (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C) that
 *   reorder how the text around them is displayed ("Trojan Source"), the zero-width ones
 *   (U+200B–U+200D, U+2060, U+FEFF), the soft hyphen and the invisible tag characters — and
 *   the line and paragraph separators U+2028/U+2029 (a line break to a terminal, one line to a
 *   shell) become `\u202e` and so on, the same JSON escape (a surrogate pair above U+FFFF).
 *   Right-to-left letters themselves are untouched; an emoji joined with U+200D shows its parts.
 */

const CONTROL = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/gu;

function hex2(code: number): string {
  return code.toString(16).padStart(2, "0");
}

function jsonEscape(unit: number): string {
  return `\\u${unit.toString(16).padStart(4, "0")}`;
}

/** The escaped form of one character `c` matched by CONTROL. */
function escaped(c: string): string {
  if (c === "\r\n") return "\n";
  const code = c.codePointAt(0)!;
  if (code < 0x20) return `\\x${hex2(code)}`;
  // Above U+FFFF (tag characters): the UTF-16 pair, as JSON writes it.
  if (c.length === 2) return jsonEscape(c.charCodeAt(0)) + jsonEscape(c.charCodeAt(1));
  return jsonEscape(code);
}

export function terminalText(text: string): string {
  return text.replace(CONTROL, escaped);
}
