/**
 * What the REPL shows of a resumed conversation (docs/sessions.md "Resuming a session"): the
 * newest goals in order, each with its answer, a few rows each, older goals counted; never a
 * note of Scoot's, a correction or what a tool returned.
 */
import { describe, expect, it } from "vitest";
import { stopNote, undoNote } from "../../src/agent/history.js";
import { revisionRequest } from "../../src/agent/plan-review.js";
import { correctionMessage, wrapObservation } from "../../src/agent/prompt.js";
import { exchanges, goalCount } from "../../src/cli/repl/last-exchange.js";
import {
  REPLAY_ANSWER_ROWS,
  REPLAY_GOAL_ROWS,
  REPLAY_GOALS,
  replayConversation,
} from "../../src/cli/repl/replay.js";
import { textWidth } from "../../src/cli/view/width.js";
import type { Message } from "../../src/store/session.js";

const step = (action: string, input: unknown): Message => ({
  role: "assistant",
  content: JSON.stringify({ thought: `do ${action}`, action, action_input: input }),
});
const user = (content: string, goal?: string): Message => ({
  role: "user",
  content,
  ...(goal !== undefined ? { goal } : {}),
});

const CONVERSATION: Message[] = [
  { role: "system", content: "rules" },
  user("count the files"),
  step("final", "There are 12 files."),
  user("run the tests"),
  step("bash", { command: "echo TOOL-OUTPUT-MARK" }),
  user(wrapObservation("bash", "TOOL-OUTPUT-MARK")),
  user(correctionMessage("no action given")),
  step("final", "All tests pass."),
  user(undoNote({ goal: "run the tests", restored: ["a.txt"], removed: [] })!),
  user("what changed?"),
  stopNote("the server went away"),
];

describe("the resumed conversation", () => {
  it("holds the goals and their answers, in order, nothing else", () => {
    expect(goalCount(CONVERSATION)).toBe(3);
    expect(exchanges(CONVERSATION)).toEqual([
      { goal: "count the files", answer: "There are 12 files." },
      { goal: "run the tests", answer: "All tests pass." },
      { goal: "what changed?" },
    ]);
    const shown = replayConversation(CONVERSATION, 79);
    expect(shown).toBe(
      [
        "› count the files",
        "  There are 12 files.",
        "› run the tests",
        "  All tests pass.",
        "› what changed?",
        "  (no answer)",
        "",
      ].join("\n"),
    );
    for (const hidden of ["TOOL-OUTPUT-MARK", "[scoot:", "not a valid step", "server went away", "rules"])
      expect(shown).not.toContain(hidden);
  });

  it("folds older goals into a count and keeps a few rows of each", () => {
    const long = Array.from({ length: 10 }, (_, i) => `answer line ${i + 1}`).join("\n");
    const messages: Message[] = [{ role: "system", content: "rules" }];
    for (let i = 1; i <= REPLAY_GOALS + 2; i++) messages.push(user(`goal ${i}`), step("final", long));
    const shown = replayConversation(messages, 79).split("\n");
    expect(shown[0]).toBe("┄ 2 earlier goals not shown ┄");
    expect(shown.filter((l) => l.startsWith("› "))).toEqual(["› goal 3", "› goal 4", "› goal 5"]);
    const answer = shown.slice(2, 2 + REPLAY_ANSWER_ROWS + 1);
    expect(answer).toEqual(["  answer line 1", "  answer line 2", "  answer line 3", "  … 7 more lines"]);
  });

  it("wraps at the width and cuts a long goal; without a width each line is one row", () => {
    const goal = `${"please look at the calculator module ".repeat(6)}and fix it`;
    const messages: Message[] = [user(goal), step("final", "word ".repeat(40).trim())];
    const rows = replayConversation(messages, 40).trimEnd().split("\n");
    for (const r of rows) expect(textWidth(r)).toBeLessThanOrEqual(40);
    // The goal: its first rows, the last ending in `…`; then the answer's rows and a count.
    expect(rows[0]).toMatch(/^› please look at/);
    expect(rows[REPLAY_GOAL_ROWS - 1]).toMatch(/…$/);
    expect(rows[REPLAY_GOAL_ROWS]).toMatch(/^ {2}word word/);
    expect(rows.at(-1)).toMatch(/^ {2}… \d+ more lines?$/);
    const piped = replayConversation(messages, undefined).trimEnd().split("\n");
    expect(piped).toEqual([`› ${goal}`, `  ${"word ".repeat(40).trim()}`]);
  });

  it("shows the person's words of a plan run and of feedback, and a plan that got no answer", () => {
    const plan = { steps: [{ title: "Write the notes" }, { title: "Add a README" }] };
    const messages: Message[] = [
      user("add notes\n\n[scoot: plan this goal …]", "add notes"),
      step("plan", plan),
      user(revisionRequest("add notes", "also add a README")),
      step("plan", plan),
    ];
    expect(replayConversation(messages, 79)).toBe(
      [
        "› add notes",
        "  (a plan of 2 steps; no answer)",
        "› also add a README",
        "  (a plan of 2 steps; no answer)",
        "",
      ].join("\n"),
    );
  });

  it("says nothing for a conversation without goals", () => {
    expect(replayConversation([{ role: "system", content: "rules" }], 79)).toBe("");
  });
});
