/** A command's output counted as it streams: true totals and the last lines, whatever the chunks. */
import { describe, expect, it } from "vitest";
import { OutputTally, TAIL_LINE_BYTES, TAIL_LINES } from "../../src/tools/output-tally.js";

/** `text` fed to stdout in chunks of `size` bytes. */
function tally(text: string, size: number, kept = Buffer.byteLength(text)) {
  const t = new OutputTally();
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) t.feed("stdout", bytes.subarray(i, i + size));
  return t.summary(kept);
}

const seq = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("");

describe("the output tally", () => {
  it.each([1, 2, 7, 64, 100_000])(
    "counts seq 1 5000 in chunks of %i bytes and keeps the last lines",
    (size) => {
      const text = seq(5000);
      expect(tally(text, size)).toEqual({
        bytes: Buffer.byteLength(text),
        lines: 5000,
        kept: Buffer.byteLength(text),
        tail: Array.from({ length: TAIL_LINES }, (_, i) => String(5000 - TAIL_LINES + 1 + i)),
      });
    },
  );

  it.each([
    ["an unterminated last line counts", "a\nb", 2, ["a", "b"]],
    ["CRLF endings read as newlines", "a\r\nb\r\n", 2, ["a", "b"]],
    ["a progress bar keeps its last state", "10%\r50%\r100%\ndone\n", 2, ["100%", "done"]],
    ["blank lines count", "\n\n\n", 3, ["", "", ""]],
    ["nothing", "", 0, []],
  ])("%s", (_what, text, lines, tail) => {
    for (const size of [1, 3, 1000]) expect(tally(text, size)).toMatchObject({ lines, tail });
  });

  it("a CRLF split between chunks is one line ending", () => {
    const t = new OutputTally();
    t.feed("stdout", Buffer.from("a\r"));
    t.feed("stdout", Buffer.from("\nb\r"));
    t.feed("stdout", Buffer.from("c\n"));
    expect(t.summary(0)).toMatchObject({ lines: 2, tail: ["a", "c"] });
  });

  it("cuts a long line and says so", () => {
    const s = tally(`${"x".repeat(5 * TAIL_LINE_BYTES)}\nend\n`, 4096);
    expect(s.lines).toBe(2);
    expect(s.tail[0]).toBe(`${"x".repeat(TAIL_LINE_BYTES)}…`);
    expect(s.tail[1]).toBe("end");
  });

  it("keeps both streams in the order they arrived, and says what the capture kept", () => {
    const t = new OutputTally();
    t.feed("stdout", Buffer.from("out one\nout "));
    t.feed("stderr", Buffer.from("err one\n"));
    t.feed("stdout", Buffer.from("two\n"));
    t.feed("stderr", Buffer.from("err open"));
    expect(t.newest(2)).toEqual(["out two", "err open"]);
    expect(t.summary(10)).toEqual({
      bytes: 32,
      lines: 4,
      kept: 10,
      tail: ["out one", "err one", "out two", "err open"],
    });
  });
});
