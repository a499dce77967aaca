/**
 * The one word wrap for every line Scoot prints on a terminal (docs/keyboard.md "Lines on a
 * terminal"): a whole text wrapped at once, lines laid out in columns continued under their
 * column, a writer's text flushed whole at the end of each write, and the detector the screen
 * scans use for a word the terminal cut at its edge.
 */
import { describe, expect, it } from "vitest";
import { textWidth } from "../../src/cli/view/width.js";
import { LineWrap, wrapText } from "../../src/cli/view/wrap.js";
import { splitWords } from "../helpers/word-split.js";

describe("wrapText", () => {
  it.each([
    ["one two three four", 10, "one two\nthree four"],
    // A question's trailing space stays: the answer is typed after it.
    ["continue? [y/N] ", 40, "continue? [y/N] "],
    ["a very long question here? ", 12, "a very long\nquestion\nhere? "],
    // Nothing of the text is held back, even a last word without an end.
    ["scoot: no", 40, "scoot: no"],
    ["", 40, ""],
  ])("%j at %i columns", (text, width, out) => {
    expect(wrapText(text, width)).toBe(out);
  });

  it("keeps every word whole and every row within the width", () => {
    const text =
      "scoot: configuration error: /home/someone/.scoot/config.toml: backend.base_url must be an http or https URL, got ftp://example";
    for (const width of [40, 47, 79]) {
      const rows = wrapText(text, width).split("\n");
      for (const r of rows) expect(textWidth(r)).toBeLessThanOrEqual(width);
      expect(rows.join(" ")).toBe(text);
    }
  });

  it("with hang, a line in columns continues under its last column in the first half", () => {
    const line = `WARN  user             ${"a sandboxed command is root too ".repeat(3).trim()}`;
    const rows = wrapText(line, 60, { hang: true }).split("\n");
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows.slice(1)) expect(r).toMatch(/^ {23}\S/);
    // A column past the first half is not followed: the line's indentation is.
    const far = `  x${" ".repeat(40)}${"word ".repeat(12).trim()}`;
    for (const r of wrapText(far, 60, { hang: true }).split("\n").slice(1)) expect(r).toMatch(/^ {2}\S/);
    // Without hang, prose with a double space continues at its indentation.
    for (const r of wrapText(line, 60).split("\n").slice(1)) expect(r).toMatch(/^\S/);
  });

  it("a column found after the first break is not followed", () => {
    const line = `${"word ".repeat(14)}x  ${"more ".repeat(6).trim()}`;
    for (const r of wrapText(line, 40, { hang: true }).split("\n").slice(1)) expect(r).toMatch(/^\S/);
  });
});

describe("LineWrap.flush", () => {
  it("writes what is held and goes on from that column", () => {
    const w = new LineWrap();
    expect(w.feed("scoot: ", 20) + w.flush(20)).toBe("scoot: ");
    expect(w.column).toBe(7);
    // The next write continues the line, and breaks it where it would pass the width.
    expect(w.feed("a warning that wraps\n", 20) + w.flush(20)).toBe("a warning\nthat wraps\n");
    expect(w.column).toBe(0);
  });
});

describe("splitWords", () => {
  const full = (s: string) => s.padEnd(80, "x");
  it.each([
    // A full row ending in a letter before a row starting with one: a split.
    [[full("the quick brown fo") as string, "x jumps"], 1],
    [[`${"a".repeat(79)}é`, "tude"], 1],
    [[`${"1".repeat(80)}`, "2"], 1],
    // A row one column short of the edge is Scoot's own wrap, not the terminal's.
    [[`${"a".repeat(79)}`, "b"], 0],
    // A full row that ends in a space or punctuation, or a next row that starts with one.
    [[`${"a".repeat(79)}.`, "b"], 0],
    [[`${"a".repeat(80)}`, " b"], 0],
    [[`${"a".repeat(80)}`, "(b"], 0],
    [[`${"a".repeat(80)}`], 0],
    // Wide characters count two columns.
    [[`${"漢".repeat(40)}`, "字"], 1],
  ])("%j: %i", (rows, count) => {
    expect(splitWords(rows, 80)).toHaveLength(count);
  });

  it("names the rows around the split", () => {
    const rows = ["header", full("abc"), "def", "tail"];
    expect(splitWords(rows, 80)).toEqual([{ row: 1, rows: [rows[1], "def"] }]);
  });
});
