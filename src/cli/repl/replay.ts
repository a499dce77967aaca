/**
 * What the REPL shows of a resumed conversation before its prompt (docs/sessions.md "Resuming a
 * session"): its newest goals, each as `› goal` with the answer under it, a few rows of each, and
 * how many older goals are folded away. Only the person's goals and the final answers: never
 * Scoot's notes or what the tools returned (last-exchange.ts). On a terminal the rows are wrapped
 * at its width and counted as shown (docs/keyboard.md "Lines on a terminal"); on a pipe each line
 * of the text is a row, cut to REPLAY_LINE_CHARS.
 */
import { redact } from "../../core/redact.js";
import { terminalText } from "../../core/terminal-text.js";
import type { Message } from "../../store/session.js";
import { cutToWidth } from "../view/width.js";
import { wrapText } from "../view/wrap.js";
import { type Exchange, exchanges } from "./last-exchange.js";

/** The newest goals shown; older ones are counted. */
export const REPLAY_GOALS = 3;
/** Rows of a goal shown; a longer one is cut, ending in `…`. */
export const REPLAY_GOAL_ROWS = 2;
/** Rows of an answer shown; the rest are counted. */
export const REPLAY_ANSWER_ROWS = 3;
/** Without a terminal, a line of a goal or an answer is cut to this many characters. */
export const REPLAY_LINE_CHARS = 400;

const GOAL_MARK = "› ";
const INDENT = "  ";

/** The text's lines that are not blank, as rows: wrapped at `width`, or cut when there is none. */
function rows(text: string, width: number | undefined): string[] {
  const lines = terminalText(redact(text))
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "");
  if (width === undefined)
    return lines.map((l) =>
      [...l].length > REPLAY_LINE_CHARS ? `${[...l].slice(0, REPLAY_LINE_CHARS - 1).join("")}…` : l,
    );
  return lines.flatMap((l) => wrapText(l, width).split("\n"));
}

/** The first `max` rows and a last row saying how many more there are, or all of them when only one is left. */
function capped(all: string[], max: number, more: (n: number) => string): string[] {
  if (all.length <= max + 1) return all;
  return [...all.slice(0, max), more(all.length - max)];
}

function exchangeRows(e: Exchange, width: number | undefined): string[] {
  const room = width === undefined ? undefined : width - INDENT.length;
  const goal = rows(e.goal, room);
  const shownGoal = goal.slice(0, REPLAY_GOAL_ROWS);
  if (goal.length > REPLAY_GOAL_ROWS) {
    const last = `${shownGoal.at(-1)} …`;
    shownGoal[shownGoal.length - 1] = room === undefined ? last : cutToWidth(last, room);
  }
  const out = shownGoal.map((r, i) => `${i === 0 ? GOAL_MARK : INDENT}${r}`);
  if (out.length === 0) out.push(GOAL_MARK.trimEnd());
  if (e.answer !== undefined) {
    const answer = capped(
      rows(e.answer, room),
      REPLAY_ANSWER_ROWS,
      (n) => `… ${n} more line${n === 1 ? "" : "s"}`,
    );
    out.push(...answer.map((r) => `${INDENT}${r}`));
  } else if (e.planSteps !== undefined)
    out.push(`${INDENT}(a plan of ${e.planSteps} step${e.planSteps === 1 ? "" : "s"}; no answer)`);
  else out.push(`${INDENT}(no answer)`);
  return out;
}

/**
 * The conversation's newest goals and answers as lines for stderr (each ending in a newline),
 * wrapped at `width` when there is one; empty when it holds no goal.
 */
export function replayConversation(messages: readonly Message[], width: number | undefined): string {
  const all = exchanges(messages);
  if (all.length === 0) return "";
  const folded = all.length - REPLAY_GOALS;
  const lines: string[] = [];
  if (folded > 0) lines.push(`┄ ${folded} earlier goal${folded === 1 ? "" : "s"} not shown ┄`);
  for (const e of all.slice(-REPLAY_GOALS)) lines.push(...exchangeRows(e, width));
  return `${lines.join("\n")}\n`;
}
