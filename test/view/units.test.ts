/** The live view's and the REPL's pure parts: key arguments, previews, paste, history, commands. */
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { isCommandLine } from "../../src/cli/repl/commands.js";
import { historyFile, loadHistory, saveHistory } from "../../src/cli/repl/history.js";
import {
  PASTE_BEGIN,
  PASTE_END,
  PASTED_NEWLINE,
  pasteFilter,
  restoreNewlines,
} from "../../src/cli/repl/paste.js";
import { keyArgument, preview } from "../../src/cli/view/summary.js";
import { renderUnifiedDiff } from "../../src/core/unified-diff.js";
import { preparedCall } from "../helpers/calls.js";
import { removeDir, tempDir } from "../helpers/cli.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) removeDir(dir);
  dir = undefined;
});

async function filtered(chunks: string[]): Promise<string> {
  let out = "";
  for await (const piece of Readable.from(chunks).pipe(pasteFilter())) out += String(piece);
  return out;
}

describe("key argument and preview", () => {
  it.each([
    ["bash", "npm test", "npm test"],
    ["file_edit", '{"path":"src/calc.py","old":"a","new":"b"}', "src/calc.py"],
    ["http_request", '{"method":"get","url":"https://example.com/x"}', "GET https://example.com/x"],
    ["mcp_call", '{"server":"gh","tool":"issues","args":{}}', "gh/issues"],
    ["grep", '{"pattern":"TODO","path":"src"}', "TODO in src"],
    ["bash", "line one\nline two", "line one ⏎ line two"],
    // A call that does not validate has no presentation: it is shown as the model wrote it.
    ["grep", '{"pattern":"TODO"}', '{"pattern":"TODO"}'],
  ])("%s %s → %s", (action, raw, key) => {
    expect(keyArgument(preparedCall(action, raw, { mode: "unrestricted" }))).toBe(key);
  });
  it("previews the first lines and counts the rest", () => {
    expect(preview("a\nb\nc\nd\ne\n")).toEqual({ lines: ["a", "b", "c"], more: 2 });
    expect(preview("")).toEqual({ lines: [], more: 0 });
  });
});

describe("the diff", () => {
  it("marks removed and added lines, neutralises escapes and redacts", () => {
    const d = renderUnifiedDiff("f.txt", "keep\nold \x1b]52;c;x\x07\n", "keep\nnew sk-abcdefgh12345678\n", {
      color: false,
    });
    expect(d).toContain(
      "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n keep\n-old \\x1b]52;c;x\\x07\n+new [REDACTED]\n",
    );
    expect(renderUnifiedDiff("n.txt", null, "x\n", { color: false })).toContain("--- /dev/null\n+++ b/n.txt");
  });
});

describe("bracketed paste", () => {
  it("joins a pasted block into one line, also when a marker is split across reads", async () => {
    const text = await filtered(["typed\x1b[20", "0~one\ntwo\r\nthree\x1b[2", "01~\r"]);
    // The paste is marked for the key router (a paste never answers a question), which takes the marks out.
    expect(text).toBe(`typed${PASTE_BEGIN}one${PASTED_NEWLINE}two${PASTED_NEWLINE}three${PASTE_END}\r`);
    expect(restoreNewlines(`one${PASTED_NEWLINE}two`)).toBe("one\ntwo");
  });
  it("lets a lone Escape and arrow keys through at once", async () => {
    expect(await filtered(["\x1b"])).toBe("\x1b");
    expect(await filtered(["\x1b[A"])).toBe("\x1b[A");
  });
});

describe("history", () => {
  it("round-trips, redacts, writes 0600 and refuses a symlink", () => {
    dir = tempDir("scoot-history-");
    const file = historyFile(dir);
    expect(
      saveHistory(file, ["newest sk-abcdefgh12345678", `pasted${PASTED_NEWLINE}block`, "a\\nb"]),
    ).toBeUndefined();
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadHistory(file, () => {})).toEqual([
      "newest [REDACTED]",
      `pasted${PASTED_NEWLINE}block`,
      "a\\nb",
    ]);
    const link = path.join(dir, "link");
    fs.symlinkSync(file, link);
    const warnings: string[] = [];
    expect(loadHistory(link, (w) => warnings.push(w))).toEqual([]);
    expect(warnings.join()).toMatch(/REPL history not loaded/);
  });
});

describe("command lines", () => {
  it.each([
    ["/status", true],
    ["/nonsense with words", true],
    ["/tmp is what?", false],
    ["/etc/hosts has what?", false],
    ["what is /status?", false],
  ])("%s → %s", (line, command) => {
    expect(isCommandLine(line)).toBe(command);
  });
});
