/**
 * The diff an editor is shown of a planned change (src/acp/tool-kind.ts shownChange): escaped as
 * the keyboard escapes it, with the count of what was escaped. The count is checked against
 * terminalText itself for every BMP character and the tag characters, so the warning can never
 * say fewer characters were escaped than were.
 */
import { describe, expect, it } from "vitest";
import { DIFF_MAX_FILE_BYTES, escapedCharacters, shownChange } from "../../src/acp/tool-kind.js";
import type { FileChange } from "../../src/agent/file-change.js";
import { terminalText } from "../../src/core/terminal-text.js";

function change(before: string | Buffer | null, after: string): FileChange {
  return {
    abs: "/p/f.txt",
    shown: "f.txt",
    before: typeof before === "string" ? Buffer.from(before) : before,
    after: { ok: true, value: after },
  };
}

describe("escapedCharacters counts exactly what terminalText escapes", () => {
  it("every BMP character and every tag character, alone", () => {
    const points = [
      ...Array.from({ length: 0x10000 }, (_, i) => i),
      ...Array.from({ length: 0x80 }, (_, i) => 0xe0000 + i),
    ];
    let escaped = 0;
    for (const p of points) {
      if (p >= 0xd800 && p <= 0xdfff) continue;
      const c = String.fromCodePoint(p);
      const isEscaped = terminalText(c) !== c;
      const n = escapedCharacters(c);
      expect(n.nul + n.other, `U+${p.toString(16)}`).toBe(isEscaped ? 1 : 0);
      if (isEscaped) escaped += 1;
    }
    // NUL to U+001F but tab and newline, DEL and C1, U+2028/9, the format characters.
    expect(escaped).toBeGreaterThan(200);
  });
  it("a CRLF line end is not counted, a lone carriage return is", () => {
    expect(escapedCharacters("a\r\nb\r\n")).toEqual({ nul: 0, other: 0 });
    expect(escapedCharacters("a\rb\r\r\n")).toEqual({ nul: 0, other: 2 });
    expect(escapedCharacters("\u0000\u0000x\u001b\u202e\u{e0041}")).toEqual({ nul: 2, other: 3 });
  });
});

describe("shownChange", () => {
  it("escapes both sides and warns about the new text; CRLF line ends stay", () => {
    const s = shownChange(change("old\u0007\r\n", "new\u001b[2J\r\nx\u2066y\r\n"));
    expect(s).toEqual({
      diff: { path: "/p/f.txt", oldText: "old\\x07\r\n", newText: "new\\x1b[2J\r\nx\\u2066y\r\n" },
      warning:
        "⚠ this holds 2 control or invisible characters, shown escaped (\\x00, \\u202e): read it with care",
    });
  });
  it("a binary file being replaced is not sent as text; a new text holding NUL bytes is", () => {
    expect(shownChange(change(Buffer.from([0x89, 0x50, 0x00, 0x01]), "text\n"))).toBeUndefined();
    expect(shownChange(change("text\n", "a\u0000\u0000b\n"))?.diff.newText).toBe("a\\x00\\x00b\n");
  });
  it("a large file shows the changed region, escaped, and counts the region's new text", () => {
    const line = `${"x".repeat(99)}\n`;
    const body = line.repeat(Math.ceil(DIFF_MAX_FILE_BYTES / line.length) + 10);
    const after = `${body}a\u0000b\u202ec\n${body}`;
    const s = shownChange(change(`${body}abc\n${body}`, after));
    expect(s?.diff).toEqual({ path: "/p/f.txt", oldText: "abc", newText: "a\\x00b\\u202ec" });
    expect(s?.warning).toBe(
      "⚠ this holds 1 NUL byte and 1 control or invisible character, shown escaped (\\x00, \\u202e): read it with care",
    );
  });
  it("a change that cannot be made has nothing to show", () => {
    expect(shownChange({ ...change("a", "b"), after: { ok: false, error: "no" } })).toBeUndefined();
    expect(shownChange(undefined)).toBeUndefined();
  });
});
