/**
 * The last goal of a resumed conversation and its answer, shown before the prompt of
 * `--resume` / `--continue` (docs/sessions.md "Resuming a session") so the person knows where they
 * are, and how many goals it holds.
 */

import { SUMMARY_MARKER } from "../../agent/compact.js";
import { isScootNote } from "../../agent/history.js";
import { OBSERVATION_OPEN } from "../../agent/prompt.js";
import { type Message, shownText } from "../../store/session.js";
import { FINAL_ACTION } from "../../tools/final.js";

const CORRECTION_START = "Your last reply was not a valid step";

function isGoal(m: Message): boolean {
  if (m.role !== "user") return false;
  const text = m.content;
  return (
    !text.startsWith("Observation from ") &&
    !text.includes(OBSERVATION_OPEN) &&
    !text.startsWith(CORRECTION_START) &&
    !text.startsWith(SUMMARY_MARKER) &&
    !isScootNote(text)
  );
}

function finalAnswer(m: Message): string | undefined {
  if (m.role !== "assistant") return undefined;
  try {
    const step = JSON.parse(m.content) as { action?: unknown; action_input?: unknown };
    return step.action === FINAL_ACTION && typeof step.action_input === "string"
      ? step.action_input
      : undefined;
  } catch {
    return undefined;
  }
}

/** How many goals the person gave in a conversation (observations, corrections and summaries are not goals). */
export function goalCount(messages: readonly Message[]): number {
  return messages.filter(isGoal).length;
}

export function lastExchange(messages: readonly Message[]): { goal: string; answer?: string } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (!isGoal(messages[i]!)) continue;
    let answer: string | undefined;
    for (let j = i + 1; j < messages.length; j++) answer = finalAnswer(messages[j]!) ?? answer;
    return { goal: shownText(messages[i]!), ...(answer !== undefined ? { answer } : {}) };
  }
  return undefined;
}
