/**
 * Resuming shows the conversation (docs/sessions.md "Resuming a session", "Listing sessions"):
 * a session of three goals — the second ran a command and wrote a file, which `scoot undo` then
 * put back, leaving Scoot's note in the transcript — is resumed in the REPL on a real terminal
 * (tmux, 120×40 and 80×24) with `--continue`, `--resume <id>` and `/resume 1`. The goals and
 * their answers show in order; no note, no observation, no tool output; no word is cut at the
 * edge; and `sessions list` names the first goal.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";
import { splitWords } from "../helpers/word-split.js";

const scene = useScene({ home: "scoot-replay-home-", project: "scoot-replay-project-", model: true });
let term: Terminal | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

const SIZES = [
  { width: 120, height: 40 },
  { width: 80, height: 24 },
];

const GOALS = [
  "count the files in this project",
  "write the release notes for version 2.1 to NOTES.md, then check with a command that the file holds them",
  "what is left to do before the release?",
];
const ANSWERS = [
  "There are two files here.",
  "The notes are written and the command found them.",
  "Nothing is left but tagging the release.",
];
/** What the command printed: it reaches the model as an observation, never the replay. */
const TOOL_OUTPUT = "OBSERVED-TOOL-OUTPUT-7731";

const env = () => ({ SCOOT_BACKEND_BASE_URL: scene.model.url, NO_COLOR: "1" });

async function scoot(args: string[]) {
  const r = await runCli(args, { home: scene.home, cwd: scene.project, env: env() });
  expect(r.code, r.stderr).toBe(0);
  return r;
}

/** Three goals in one session; `scoot undo` between the second and the third writes Scoot's note. */
async function threeGoals(): Promise<string> {
  scene.model.push(step("final", ANSWERS[0]));
  const first = await scoot(["--json", "-e", GOALS[0]!]);
  const id = JSON.parse(first.stdout).session_id as string;
  scene.model.push(
    step("file_write", { path: "NOTES.md", content: "release notes\n" }),
    step("bash", { command: `echo ${TOOL_OUTPUT}` }),
    step("final", ANSWERS[1]),
  );
  await scoot(["--continue", "--policy", "unrestricted", "-e", GOALS[1]!]);
  await scoot(["undo"]);
  scene.model.push(step("final", ANSWERS[2]));
  await scoot(["--continue", "-e", GOALS[2]!]);
  // The transcript holds what the replay must leave out.
  const transcript = fs.readFileSync(path.join(scene.home, "state", "sessions", `${id}.jsonl`), "utf8");
  expect(transcript).toContain("[scoot: the user ran /undo");
  expect(transcript).toContain(TOOL_OUTPUT);
  expect(transcript).toContain("Observation from bash");
  return id;
}

/** The replay on the screen: each goal, then its answer, in order, and nothing Scoot kept for itself. */
async function expectReplay(t: Terminal, width: number): Promise<void> {
  const screen = await t.waitFor(/scoot> $/m);
  // Wrapped lines joined back, so a goal is found whatever the width.
  const text = screen.replace(/\n {2}(?=\S)/g, " ");
  let at = 0;
  for (const [i, goal] of GOALS.entries()) {
    const g = text.indexOf(`› ${goal}`, at);
    expect(g, `goal ${i + 1} in\n${screen}`).toBeGreaterThan(at - 1);
    const a = text.indexOf(ANSWERS[i]!, g);
    expect(a, `answer ${i + 1} in\n${screen}`).toBeGreaterThan(g);
    at = a;
  }
  for (const hidden of ["[scoot:", "/undo", "Observation", TOOL_OUTPUT, "echo ", "reverted"])
    expect(screen, hidden).not.toContain(hidden);
  const rows = await t.rows();
  expect(splitWords(rows, width), rows.join("\n")).toEqual([]);
}

describe.skipIf(!hasTmux).each(SIZES)("a resumed conversation at $width x $height", (size) => {
  async function open(args: string[]): Promise<Terminal> {
    term = await openTerminal(args, { ...size, home: scene.home, cwd: scene.project, env: env() });
    return term;
  }

  it("--continue shows the goals and answers in order, no note, no tool output", async () => {
    const id = await threeGoals();
    const t = await open(["--continue"]);
    await t.waitFor(`continuing session ${id} (3 goals`);
    await expectReplay(t, size.width);
  });

  it("--resume <id> and /resume 1 show the same; sessions list names the first goal", async () => {
    const id = await threeGoals();
    const list = await scoot(["sessions", "list"]);
    expect(list.stdout).toMatch(new RegExp(`^1 +${id} +.+ ${GOALS[0]}$`, "m"));
    let t = await open(["--resume", id]);
    await expectReplay(t, size.width);
    await t.line("/exit");
    await t.waitFor("[exit 0]");
    await t.close();
    t = await open(["repl"]);
    await t.waitFor(/scoot> $/m);
    await t.line("/resume 1");
    await t.waitFor(`resumed session ${id}`);
    await expectReplay(t, size.width);
  });
});
