/**
 * Neutralising control characters in everything Scoot writes to a terminal
 * (docs/safety.md "Hostile inputs"). Text from the model, tools, skills, sessions and the command line
 * can carry escape sequences: OSC 52 writes the user's clipboard, others retitle the window,
 * clear the screen or hide text. Every byte written through `Io` passes `terminalText`:
 *
 * - C0 controls except newline and tab become `\xNN` (ESC → `\x1b`); a carriage return
 *   directly before a newline is dropped (CRLF text reads the same), a lone one is escaped
 *   (it could overwrite the line it sits on);
 * - C1 controls (U+0080–U+009F; U+009B is a one-character CSI on some terminals) become
 *   `\u00NN` — the JSON escape, so `--json`, `session show` and `audit show` output (whose
 *   C0 characters JSON already escapes) stays valid JSON that decodes to exactly the same
 *   strings;
 * - bidirectional embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069),
 *   which reorder how the text around them is displayed ("Trojan Source"), become `\u202e`
 *   and so on, for the same reason. Right-to-left letters themselves are untouched.
 */

const CONTROL = /\r\n|[\u0000-\u0008\u000b-\u001f\u0080-\u009f\u202a-\u202e\u2066-\u2069]/g;

function hex2(code: number): string {
  return code.toString(16).padStart(2, "0");
}

export function terminalText(text: string): string {
  return text.replace(CONTROL, (c) => {
    if (c === "\r\n") return "\n";
    const code = c.charCodeAt(0);
    if (code < 0x80) return `\\x${hex2(code)}`;
    return `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
