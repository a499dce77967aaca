/**
 * Which user lines of a transcript are the person's goals (docs/sessions.md "What the model is
 * told", "Listing sessions"): every kind of line the agent writes on the user's side — an
 * observation, a correction, a compaction summary, each of Scoot's notes — is told apart from a
 * goal by the store's list, so `sessions list` (and the resumed conversation) show the first goal
 * the person gave, never a note, and an index written before that rule is not trusted.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SUMMARY_MARKER } from "../../src/agent/compact.js";
import { NOTE_PREFIX, stopNote, undoNote } from "../../src/agent/history.js";
import { revisionRequest } from "../../src/agent/plan-review.js";
import { correctionMessage, wrapObservation } from "../../src/agent/prompt.js";
import { goalText, isPersonGoal, listSessions, type Message } from "../../src/store/session.js";
import { INDEX_RACY_WINDOW_MS, indexPath } from "../../src/store/session-index.js";
import { removeDir, tempDir } from "../helpers/cli.js";

const user = (content: string, goal?: string): Message => ({
  role: "user",
  content,
  ...(goal !== undefined ? { goal } : {}),
});

describe("isPersonGoal", () => {
  it("tells every kind of line the agent writes from a goal", () => {
    const written = [
      wrapObservation("bash", "hello from the tool"),
      correctionMessage("no action"),
      `${SUMMARY_MARKER} 12 earlier messages were summarised; use the recall action to read any of them exactly.`,
      stopNote("the server went away").content,
      undoNote({ goal: "x", restored: ["a.txt"], removed: [] })!,
      `${NOTE_PREFIX}the plan above was not run: the user dropped it]`,
      `${NOTE_PREFIX}project instructions from "sub/AGENTS.md" (12 bytes) …]`,
    ];
    for (const content of written) expect(isPersonGoal(user(content)), content).toBe(false);
    expect(isPersonGoal(user("fix the failing test"))).toBe(true);
    expect(isPersonGoal({ role: "assistant", content: "fix it" })).toBe(false);
  });

  it("a goal's shown words leave out the note Scoot added after them", () => {
    const feedback = user(revisionRequest("add notes", "also add a README"));
    expect(isPersonGoal(feedback)).toBe(true);
    expect(goalText(feedback)).toBe("also add a README");
    const planRun = user("add notes\n\n[scoot: this run carries out an approved plan …]", "add notes");
    expect(goalText(planRun)).toBe("add notes");
    // An older plan run's line, from before the goal field.
    expect(goalText(user("add notes\n\n[scoot: this run carries out an approved plan …]"))).toBe("add notes");
    expect(goalText(user("line one\nline two"))).toBe("line one\nline two");
  });
});

describe("sessions list's first goal", () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => removeDir(dir));

  const transcript = (id: string, messages: Message[]) => {
    const file = path.join(dir, `${id}.jsonl`);
    fs.writeFileSync(file, messages.map((m) => `${JSON.stringify(m)}\n`).join(""));
    const old = Date.now() / 1000 - 60;
    fs.utimesSync(file, old, old);
  };
  const later = () => Date.now() + INDEX_RACY_WINDOW_MS + 1000;

  it("is the first line that is the person's, not a note or an observation before it", () => {
    transcript("noted", [
      { role: "system", content: "rules" },
      user(undoNote({ restored: ["a.txt"], removed: [] })!),
      { role: "assistant", content: stopNote("stopped").content },
      user(wrapObservation("bash", "tool output")),
      user("the real goal"),
      { role: "assistant", content: '{"action":"final","action_input":"done"}' },
    ]);
    const listed = listSessions(dir, later());
    expect(listed.sessions.map((s) => [s.id, s.firstUser, s.messages])).toEqual([
      ["noted", "the real goal", 6],
    ]);
    // The index remembers it; a listing from the index says the same.
    expect(fs.existsSync(indexPath(dir))).toBe(true);
    expect(listSessions(dir, later()).sessions[0]!.firstUser).toBe("the real goal");
  });

  it("an index written by the earlier format (a note as first message) is read again", () => {
    transcript("old", [
      { role: "system", content: "rules" },
      user(`${NOTE_PREFIX}a note]`),
      user("the goal"),
    ]);
    listSessions(dir, later());
    const text = fs.readFileSync(indexPath(dir), "utf8");
    const older = text
      .replace(/^scoot-sessions-list-index \d+\n/, "scoot-sessions-list-index 1\n")
      .replace('"the goal"', JSON.stringify(`${NOTE_PREFIX}a note]`));
    fs.writeFileSync(indexPath(dir), older);
    expect(listSessions(dir, later()).sessions[0]!.firstUser).toBe("the goal");
  });

  it("is empty for a session with no goal", () => {
    transcript("none", [{ role: "system", content: "rules" }, user(`${NOTE_PREFIX}a note]`)]);
    expect(listSessions(dir, later()).sessions[0]!.firstUser).toBe("");
  });
});
