/**
 * The live view's text on a terminal: word wrap across streamed pieces, widths and cuts, the
 * sizes a command preview states, and the preview itself.
 */
import { describe, expect, it } from "vitest";
import { humanBytes, outputTail, thousands } from "../../src/cli/view/summary.js";
import { cutToWidth, textWidth } from "../../src/cli/view/width.js";
import { LineWrap } from "../../src/cli/view/wrap.js";

/** `pieces` fed one by one at `width`, then a newline: what the terminal gets. */
function wrapped(pieces: string[], width: number): string {
  const w = new LineWrap();
  return pieces.map((p) => w.feed(p, width)).join("") + w.feed("\n", width);
}

const TEXT =
  "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. " +
  "Sphinx of black quartz, judge my vow: how vexingly quick daft zebras jump, and the five " +
  "boxing wizards jump quickly over https://example.com/a/rather/long/address/that/goes/on.";

describe("word wrap", () => {
  it.each([
    [["hello wor", "ld again"], 10, "hello\nworld\nagain\n"],
    // A line may fill the width exactly.
    [["one two three four"], 10, "one two\nthree four\n"],
    // A word longer than a line is broken at the width, starting where it stands.
    [[`a ${"x".repeat(25)}`], 10, `a xxxxxxxx\n${"x".repeat(10)}\n${"x".repeat(7)}\n`],
    // Continuation lines keep the line's indentation.
    [["    indented words wrap here"], 16, "    indented\n    words wrap\n    here\n"],
    // A newline in the text starts over; white space at a break is dropped.
    [["short\nline two   ", "wraps"], 10, "short\nline two\nwraps\n"],
    // Wide characters take two columns.
    [["漢字 漢字 漢字"], 10, "漢字 漢字\n漢字\n"],
    // The view's colours take none and stay in place.
    [["\x1b[2mab cd\x1b[22m efghij"], 10, "\x1b[2mab cd\x1b[22m\nefghij\n"],
    // Narrower than MIN_WRAP_WIDTH is taken as it.
    [["aaaa bbbb cc"], 4, "aaaa bbbb\ncc\n"],
  ])("%j at %i columns", (pieces, width, out) => {
    expect(wrapped(pieces, width)).toBe(out);
  });

  it("gives the same lines whatever the pieces, every line within the width, no word cut", () => {
    const words = TEXT.split(" ");
    for (const width of [12, 20, 33, 79]) {
      const whole = wrapped([TEXT], width);
      for (const size of [1, 3, 7, 50]) {
        const pieces: string[] = [];
        for (let i = 0; i < TEXT.length; i += size) pieces.push(TEXT.slice(i, i + size));
        expect(wrapped(pieces, width)).toBe(whole);
      }
      const lines = whole.replace(/\n$/, "").split("\n");
      for (const l of lines) expect(textWidth(l)).toBeLessThanOrEqual(width);
      // Only the address is longer than a line; every other word stays whole.
      const address = words.at(-1)!;
      if (address.length <= width) expect(lines.join(" ")).toBe(TEXT);
      else expect(lines.join(" ").replace(/\s+/g, "")).toBe(TEXT.replace(/\s+/g, ""));
    }
  });

  it("tracks the column across pieces", () => {
    const w = new LineWrap();
    expect(w.feed("abc ", 20)).toBe("abc");
    expect(w.column).toBe(3);
    expect(w.open).toBe(true);
    expect(w.feed("de", 20)).toBe("");
    expect(w.feed("f\n", 20)).toBe(" def\n");
    expect(w.column).toBe(0);
    expect(w.open).toBe(false);
  });
});

describe("widths and cuts", () => {
  it.each([
    ["plain", 5],
    ["漢字", 4],
    ["e\u0301", 1],
    ["\x1b[36mcyan\x1b[39m", 4],
  ])("%j is %i columns", (text, width) => {
    expect(textWidth(text)).toBe(width);
  });

  it.each([
    ["abcdef", 4, "abc…"],
    ["abcd", 4, "abcd"],
    // A colour opened before the cut is still closed after it.
    ["\x1b[36mabcdef\x1b[39m", 4, "\x1b[36mabc…\x1b[39m"],
    ["漢字漢字", 5, "漢字…"],
  ])("%j cut to %i → %j", (text, width, cut) => {
    expect(cutToWidth(text, width)).toBe(cut);
    expect(textWidth(cutToWidth(text, width))).toBeLessThanOrEqual(width);
  });
});

describe("sizes", () => {
  it.each([
    [0, "0 B"],
    [999, "999 B"],
    [1000, "1 KB"],
    [2030, "2 KB"],
    [2048, "2 KB"],
    [9960, "10 KB"],
    [24_000, "24 KB"],
    [999_999, "1 MB"],
    [1_288_895, "1.3 MB"],
    [12_345_678, "12 MB"],
    [3_500_000_000, "3.5 GB"],
  ])("%i bytes → %s", (n, shown) => {
    expect(humanBytes(n)).toBe(shown);
  });

  it.each([
    [0, "0"],
    [999, "999"],
    [4997, "4,997"],
    [199_997, "199,997"],
    [12_345_678, "12,345,678"],
  ])("%i → %s", (n, shown) => {
    expect(thousands(n)).toBe(shown);
  });
});

describe("a command's preview", () => {
  const seq = { bytes: 1_288_895, lines: 200_000, kept: 1_288_895, tail: ["199998", "199999", "200000"] };

  it.each([
    [
      "the model saw a clip",
      seq,
      { bytes: 2030, all: false },
      "… 199,997 more lines (1.3 MB; the model saw 2 KB)",
    ],
    ["the model saw it all", { ...seq, lines: 12, bytes: 27 }, { bytes: 60, all: true }, "… 9 more lines"],
    ["one more line", { ...seq, lines: 4 }, { bytes: 60, all: true }, "… 1 more line"],
    [
      "few lines, most cut",
      { bytes: 3_000_000, lines: 2, kept: 2_097_152, tail: ["a…", "b…"] },
      { bytes: 2030, all: false },
      "… 3 MB in all; the model saw 2 KB",
    ],
    ["all shown", { bytes: 4, lines: 2, kept: 4, tail: ["a", "b"] }, { bytes: 30, all: true }, undefined],
  ])("%s", (_what, output, model, note) => {
    expect(outputTail(output, model).note).toBe(note);
  });

  it("shows the last lines, trailing blank ones left out", () => {
    expect(
      outputTail({ bytes: 9, lines: 5, kept: 9, tail: ["a", "b\tc", "d", "", ""] }, { bytes: 9, all: true }),
    ).toEqual({
      lines: ["a", "b  c", "d"],
      note: "… 2 more lines",
    });
  });
});
