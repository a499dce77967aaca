/**
 * A truthful screen (issue 33), in a real pseudo-terminal (tmux) against the scripted server, at
 * 120×40 and 80×24: a command's preview is its tail with the true size, a running command's
 * newest lines stream under the spinner, text wraps between words, invisible characters show
 * escaped, and no usage line stands before an error.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { builtFile, runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

const scene = useScene({ home: "scoot-screen-home-", project: "scoot-screen-proj-" });
let term: Terminal | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

/** The usage line after a goal. */
const USAGE = /^\d+ turns? · \d+ tool calls? · \d+ tokens/m;

async function open(
  script: ScriptItem[],
  size: { width: number; height: number },
  options: { streaming?: "sse"; ssePieces?: number } = {},
): Promise<Terminal> {
  scene.server = await startScriptedServer(script, options);
  term = await openTerminal(["-e", "goal"], {
    cwd: scene.project,
    home: scene.home,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    ...size,
  });
  return term;
}

/** An answer of many words of different lengths, single-spaced. */
const LONG_ANSWER = Array.from(
  { length: 70 },
  (_, i) =>
    ["alpha", "be", "charlie-delta", "echo", "foxtrot", "golf.", "hotel,", "india"][i % 8] + String(i),
).join(" ");

const SIZES = [
  { width: 120, height: 40 },
  { width: 80, height: 24 },
];

describe.skipIf(!hasTmux).each(SIZES)("the screen at $width×$height", (size) => {
  it("seq 1 200000 shows its last lines with the true count and size; a failed command keeps its exit code", async () => {
    const t = await open(
      [step("bash", "seq 1 200000"), step("bash", "seq 1 5000; exit 3"), step("final", "counted")],
      size,
    );
    const screen = await t.waitFor("[exit ");
    expect(screen).toContain("[exit 0]");
    // The tail, where the result is, under one line with the true size and what the model saw.
    expect(screen).toMatch(
      /^● bash {2}seq 1 200000\n {2}… 199,997 more lines \(1\.3 MB; the model saw 2(\.\d)? KB\)\n {2}199998\n {2}199999\n {2}200000$/m,
    );
    // Not the head of the output, nor the lines of the clip the model saw.
    expect(screen).not.toMatch(/^ {2}1$/m);
    expect(screen).not.toMatch(/more lines$/m);
    expect(screen).toMatch(
      /^● bash {2}seq 1 5000; exit 3\n {2}exit code: 3\n {2}… 4,997 more lines \(24 KB; the model saw 2(\.\d)? KB\)\n {2}4998\n {2}4999\n {2}5000$/m,
    );
  });

  it("a running command's newest lines stream under the spinner and are gone when it ends", async () => {
    const t = await open(
      [step("bash", "for i in 1 2 3 4 5; do echo line$i; sleep 0.4; done"), step("final", "printed")],
      size,
    );
    const running = await t.waitFor(/^ {2}line2$/m);
    // The same screen still shows the spinner, and the model has not been asked again: the call runs.
    expect(running).toMatch(/running bash · turn 1 · \d+\.\ds\n {2}line1\n {2}line2$/m);
    expect(scene.server!.completions().length).toBe(1);
    const done = await t.waitFor("[exit ");
    expect(done).toContain("[exit 0]");
    expect(done).toMatch(/^ {2}… 2 more lines\n {2}line3\n {2}line4\n {2}line5$/m);
    // The streamed lines and the spinner were erased with the call.
    expect(done).not.toContain("line2");
    expect(done).not.toContain("running bash");
  });

  it("a long streamed answer wraps between words at the width", async () => {
    const t = await open([step("final", LONG_ANSWER)], size, { streaming: "sse", ssePieces: 40 });
    const screen = await t.waitFor("[exit ");
    expect(screen).toContain("[exit 0]");
    const last = LONG_ANSWER.split(" ").at(-1)!;
    const start = screen.indexOf("alpha0 ");
    const end = screen.indexOf(last) + last.length;
    const lines = screen.slice(start, end).split("\n");
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines) expect(l.length).toBeLessThan(size.width);
    // Only spaces became line breaks: no word was cut in two.
    expect(lines.join(" ")).toBe(LONG_ANSWER);
  });

  it("invisible, reordering and control characters show escaped", async () => {
    const t = await open(
      [
        step("bash", "echo ok > 'evil\u202egnp.sh'"),
        step("bash", "rm -rf x\u2028echo ok"),
        step("file_write", { path: "zero\u200bwidth.txt", content: "x\n" }),
        step("bash", "printf 'nul:\\000:end\\n'"),
        step("final", "done"),
      ],
      size,
    );
    const screen = await t.waitFor("[exit ");
    expect(screen).toContain("[exit 0]");
    expect(screen).toContain("bash  echo ok > 'evil\\u202egnp.sh'");
    expect(screen).toContain("bash  rm -rf x\\u2028echo ok");
    expect(screen).toContain("file_write  zero\\u200bwidth.txt");
    expect(screen).toContain("+++ b/zero\\u200bwidth.txt");
    expect(screen).toMatch(/^ {2}nul:\\x00:end$/m);
    expect(screen).not.toMatch(/[\u0000\u200b\u2028\u202e]/);
    // The files are what the model named: only the screen escapes.
    expect(fs.existsSync(`${scene.project}/evil\u202egnp.sh`)).toBe(true);
    expect(fs.existsSync(`${scene.project}/zero\u200bwidth.txt`)).toBe(true);
  });
});

describe.skipIf(!hasTmux).each(SIZES)("the Screen's block at $width×$height", (size) => {
  const fixture = fileURLToPath(new URL("../fixtures/view/screen-block.mjs", import.meta.url));
  /** The screen's lines, trailing blank rows left out. */
  const rows = (screen: string) => screen.replace(/\n+$/, "").split("\n");
  const cutLine = /^ {2}STATUS two x+…$/;

  it("draws the status lines and the footer at the bottom, cut to the width, below an open answer line, steps aside and erases them", async () => {
    builtFile("cli/view/screen.js");
    term = await openTerminal([], { cwd: scene.project, script: fixture, ...size });
    const t = term;
    let screen = rows(await t.waitFor("FOOTER typed ahead"));
    expect(screen.slice(0, 2)).toEqual(["above the block", "STATUS one"]);
    expect(screen[2]).toMatch(cutLine);
    expect(screen[2]!.length).toBeLessThan(size.width);
    expect(screen.slice(3)).toEqual(["FOOTER typed ahead"]);

    // An answer line opens: the block moves below it, the line stays whole above. (Each phase is
    // several writes: the screen is read until the last one landed.)
    await t.type("n");
    screen = rows(await t.waitFor(/^answer begins\nSTATUS one\n.+\nFOOTER typed ahead$/m));
    expect(screen.filter((l) => !cutLine.test(l))).toEqual([
      "above the block",
      "answer begins",
      "STATUS one",
      "FOOTER typed ahead",
    ]);

    // A stderr line waits for the answer line to end, then the block comes back under both.
    await t.type("n");
    screen = rows(await t.waitFor(/^waits for the answer line\nSTATUS one\n.+\nFOOTER typed ahead$/m));
    expect(screen.filter((l) => !cutLine.test(l))).toEqual([
      "above the block",
      "answer begins and ends",
      "waits for the answer line",
      "STATUS one",
      "FOOTER typed ahead",
    ]);
    expect(screen.filter((l) => cutLine.test(l))).toHaveLength(1);

    // The status lines go, the footer stays.
    await t.type("n");
    screen = rows(await t.waitFor(/line\nFOOTER typed ahead$/m));
    expect(screen).toEqual([
      "above the block",
      "answer begins and ends",
      "waits for the answer line",
      "FOOTER typed ahead",
    ]);

    // Suspended for a writer of its own, the block comes back below what it wrote.
    await t.type("n");
    screen = rows(await t.waitFor(/outside\nFOOTER typed ahead$/m));
    expect(screen).toEqual([
      "above the block",
      "answer begins and ends",
      "waits for the answer line",
      "written outside",
      "FOOTER typed ahead",
    ]);

    // The footer goes too.
    await t.type("n");
    screen = rows(await t.waitFor("[exit "));
    expect(screen).toEqual([
      "above the block",
      "answer begins and ends",
      "waits for the answer line",
      "written outside",
      "done",
      "[exit 0]",
    ]);
  });
});

describe.skipIf(!hasTmux)("no usage line before an error", () => {
  const size = { width: 80, height: 24 };
  const refused = { status: 401, body: { error: { message: "model_not_loaded" } } };

  it("a goal that failed before the model answered shows the error alone", async () => {
    const t = await open([refused], size);
    const screen = await t.waitFor("[exit ");
    expect(screen).toContain("[exit 1]");
    expect(screen).toContain("model_not_loaded");
    expect(screen).not.toMatch(USAGE);
    expect(screen).not.toContain("0 tokens");
  });

  it("a goal that used tokens shows its usage line after the error", async () => {
    const t = await open([step("bash", "echo hi"), refused], size);
    const screen = await t.waitFor("[exit ");
    expect(screen).toContain("[exit 1]");
    const error = screen.indexOf("model_not_loaded");
    const usage = screen.search(/^2 turns · 1 tool call · \d+ tokens/m);
    expect(error).toBeGreaterThan(-1);
    expect(usage).toBeGreaterThan(error);
  });
});

describe("on a pipe", () => {
  it("a long answer goes to stdout byte for byte, unwrapped", async () => {
    scene.server = await startScriptedServer([step("final", LONG_ANSWER)], {
      streaming: "sse",
      ssePieces: 40,
    });
    const r = await runCli(["-e", "goal"], {
      cwd: scene.project,
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, COLUMNS: "40" },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${LONG_ANSWER}\n`);
  });
});
