/**
 * Help on a narrow terminal (docs/commands.md): the process's stdout wraps it with the one word
 * wrap (src/cli/view/wrap.ts, `hang`), so every line of the overview and of each command's help
 * fits 80 columns, no word is split or lost, and continuation rows stand under the description
 * column.
 */
import { describe, expect, it } from "vitest";
import { USAGE } from "../../src/cli/args.js";
import { COMMAND_HELP, commandHelpText } from "../../src/cli/help.js";
import { wrapText } from "../../src/cli/view/wrap.js";

const wrapHelp = (text: string, width: number) => wrapText(text, width, { hang: true });

const texts: [string, string][] = [
  ["--help", USAGE],
  ...Object.keys(COMMAND_HELP).map((c): [string, string] => [c, commandHelpText(c)!]),
];
const words = (t: string) => t.split(/\s+/).filter(Boolean);

describe("help wrapped to the terminal", () => {
  it.each(texts)("%s fits 80 columns with every word kept", (_name, text) => {
    const wrapped = wrapHelp(text, 80);
    const long = wrapped.split("\n").filter((l) => l.length > 80);
    expect(long).toEqual([]);
    expect(words(wrapped)).toEqual(words(text));
  });

  it("continues a long description under its column", () => {
    const line = `  --json                  ${"word ".repeat(20).trim()}`;
    const rows = wrapHelp(line, 60).split("\n");
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows.slice(1)) expect(r.startsWith(" ".repeat(26))).toBe(true);
  });
});
