/**
 * A Scoot plan as the editor sees it (docs/editors.md "Plan mode in the editor"): ACP `plan`
 * entries (one per step, the whole list each time), and the question that asks to run it.
 * ACP's entries are `pending`, `in_progress` or `completed`; it has no "skipped", so a step the
 * model skipped is `completed` with " (skipped)" after its title: the checklist then reads as
 * done, and says which steps were passed over rather than carried out.
 */
import type { PermissionOption, PlanEntry, ToolCall } from "@agentclientprotocol/sdk";
import type { PlanStepState } from "../agent/plan-evidence.js";
import { redact } from "../core/redact.js";
import { terminalText } from "../core/terminal-text.js";
import { formatPlan } from "../tools/plan.js";
import type { Plan } from "../tools/plan-shape.js";

/** What a skipped step's title gets: ACP has no skipped status. */
export const SKIPPED_SUFFIX = " (skipped)";
/** A step the model said was done, which no call it attributed to the step showed. */
export const CLAIMED_SUFFIX = " (claimed done, no evidence)";

/**
 * A step's title as an entry shows it: model text, so redacted as an answer is and with control
 * and invisible characters escaped, as a tool call's title is (tool-kind.ts).
 */
function entryTitle(title: string): string {
  return terminalText(redact(title));
}

/** Every step pending: the checklist as a plan is proposed, and as a run that carries it out begins. */
export function planEntries(plan: Plan): PlanEntry[] {
  return plan.steps.map((s) => ({ content: entryTitle(s.title), priority: "medium", status: "pending" }));
}

/**
 * The entries after the model said step `step` (1-based) stands at `status`; the others keep
 * theirs. Undefined when the plan has no such step (the loop checks it; nothing is sent then).
 */
export function progressed(
  entries: readonly PlanEntry[],
  plan: Plan,
  step: number,
  status: PlanStepState,
): PlanEntry[] | undefined {
  const raw = plan.steps[step - 1]?.title;
  if (raw === undefined) return undefined;
  const title = entryTitle(raw);
  return entries.map((e, i) =>
    i !== step - 1
      ? e
      : status === "skipped"
        ? { ...e, content: `${title}${SKIPPED_SUFFIX}`, status: "completed" }
        : status === "claimed"
          ? // Said done, not shown done by any call: still in progress, and the entry says why.
            { ...e, content: `${title}${CLAIMED_SUFFIX}`, status: "in_progress" }
          : { ...e, content: title, status: status === "done" ? "completed" : "in_progress" },
  );
}

/** The two answers to the plan's question: run it once, or not. */
export const PLAN_OPTIONS: readonly PermissionOption[] = [
  { optionId: "allow_once", name: "Run the plan", kind: "allow_once" },
  { optionId: "reject_once", name: "Don't run it", kind: "reject_once" },
];

/** The tool call the plan's question names: the plan itself, numbered, as the person reviews it. */
export function planQuestionCall(plan: Plan, toolCallId: string): ToolCall {
  const n = plan.steps.length;
  return {
    toolCallId,
    title: `Run the plan (${n} step${n === 1 ? "" : "s"})`,
    kind: "think",
    status: "pending",
    rawInput: plan,
    content: [{ type: "content", content: { type: "text", text: terminalText(redact(formatPlan(plan))) } }],
  };
}
