/**
 * The goals of a resumed conversation and what each ended with, read from its transcript for
 * `--resume`, `--continue` and `/resume` (docs/sessions.md "Resuming a session"): the person's
 * own words and the final answers, never Scoot's notes, the loop's corrections, summaries or
 * what the tools returned.
 */

import { extractStep } from "../../agent/step.js";
import { goalText, isPersonGoal, type Message } from "../../store/session.js";
import { FINAL_ACTION } from "../../tools/final.js";
import { PLAN_ACTION, parsePlan } from "../../tools/plan.js";

/** One goal of a conversation and how it ended. */
export interface Exchange {
  goal: string;
  /** The last final answer given to it. */
  answer?: string;
  /** When no answer came after it: the steps of the plan its planning run ended with. */
  planSteps?: number;
}

/** The final answer or the plan an assistant line holds, if it is one. */
function ending(m: Message): { answer: string } | { planSteps: number } | undefined {
  if (m.role !== "assistant") return undefined;
  const step = extractStep(m.content);
  if (!step.ok) return undefined;
  const { action, action_input: input } = step.value;
  if (action === FINAL_ACTION && typeof input === "string") return { answer: input };
  if (action === PLAN_ACTION) {
    const plan = parsePlan(typeof input === "string" ? input : JSON.stringify(input));
    return plan.ok ? { planSteps: plan.value.steps.length } : undefined;
  }
  return undefined;
}

/** How many goals the person gave in a conversation (observations, corrections and summaries are not goals). */
export function goalCount(messages: readonly Message[]): number {
  return messages.filter(isPersonGoal).length;
}

/** Every goal of the conversation, oldest first, each with its answer. */
export function exchanges(messages: readonly Message[]): Exchange[] {
  const out: Exchange[] = [];
  for (const m of messages) {
    if (isPersonGoal(m)) {
      out.push({ goal: goalText(m) });
      continue;
    }
    const current = out.at(-1);
    const ended = current ? ending(m) : undefined;
    if (!current || !ended) continue;
    if ("answer" in ended) {
      current.answer = ended.answer;
      delete current.planSteps;
    } else if (current.answer === undefined) current.planSteps = ended.planSteps;
  }
  return out;
}
