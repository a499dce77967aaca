/**
 * What reaches a terminal (docs/safety.md "Hostile inputs"): control, invisible and reordering
 * characters are shown escaped, everything else stays. The older table (escape sequences, CRLF,
 * JSON exactness) is in test/agent/model-terminal.test.ts.
 */
import { describe, expect, it } from "vitest";
import { terminalText } from "../../src/core/terminal-text.js";

describe("invisible and reordering characters are shown escaped", () => {
  it.each([
    // The attacks: what a person reads is not what runs.
    ["evil\u202egnp.sh", "evil\\u202egnp.sh"],
    ["rm -rf x\u2028echo ok", "rm -rf x\\u2028echo ok"],
    ["para\u2029graph", "para\\u2029graph"],
    ["src/ma\u200bin.ts", "src/ma\\u200bin.ts"],
    ["a\u0000b", "a\\x00b"],
    // Zero-width characters.
    ["a\u200cb\u200dc\u2060d\ufeffe", "a\\u200cb\\u200dc\\u2060d\\ufeffe"],
    // Bidirectional marks, embeddings, overrides and isolates.
    ["\u200ex\u200fy\u061cz", "\\u200ex\\u200fy\\u061cz"],
    ["\u202a\u202b\u202c\u202d\u202e", "\\u202a\\u202b\\u202c\\u202d\\u202e"],
    ["\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"],
    // Other format characters: the soft hyphen, an invisible tag letter (a surrogate pair).
    ["soft\u00adhyphen", "soft\\u00adhyphen"],
    ["tag\u{e0041}", "tag\\udb40\\udc41"],
    // C0, DEL and C1 controls.
    ["\u0007bell\u001b[2J", "\\x07bell\\x1b[2J"],
    ["del\u007f", "del\\u007f"],
    ["next\u0085line\u009b", "next\\u0085line\\u009b"],
  ])("%j → %j", (input, shown) => {
    expect(terminalText(input)).toBe(shown);
  });

  it.each([
    ["plain text\twith tab\nand newline"],
    ["שלום עולם"],
    ["漢字 and emoji 🙂"],
    ["combining e\u0301"],
    ["non-breaking\u00a0space"],
  ])("%j stays as it is", (input) => {
    expect(terminalText(input)).toBe(input);
  });
});
