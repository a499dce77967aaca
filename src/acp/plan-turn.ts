/**
 * One prompt of an ACP session in mode `plan` (docs/editors.md "Plan mode in the editor"): a
 * planning run (readonly whatever the policy); when it ends with a plan, the editor is shown the
 * plan (`plan` update, from the translator) and asked to run it (`session/request_permission`,
 * after every update before it); allowed, a second run carries it out under the session's
 * policy mode, its approval audited by the loop. Refused, cancelled, or nobody to ask: nothing
 * runs, the model is told with the next goal, and the turn ends saying so. A planning run that
 * ends without a plan ends the turn as any prompt does.
 */
import type {
  PermissionOption,
  RequestPermissionOutcome,
  SessionUpdate,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import type { RunResult } from "../agent/loop.js";
import { type PlanReviewer, planThenRun } from "../agent/plan-review.js";
import type { RunHow } from "../agent/session-runner.js";
import type { Plan } from "../tools/plan-shape.js";
import { PLAN_OPTIONS } from "./plan-entries.js";
import type { UpdateTranslator } from "./updates.js";

export interface PlanTurn {
  signal: AbortSignal;
  translator: UpdateTranslator;
  send: (u: SessionUpdate) => void;
  /**
   * Asks the editor (every earlier update written first); undefined: nobody can answer
   * (`scoot acp --unattended`, `tools.approval = "never"`), and `nobody` says why.
   */
  ask?: (
    toolCall: ToolCallUpdate,
    options: PermissionOption[],
    signal: AbortSignal,
  ) => Promise<RequestPermissionOutcome>;
  nobody: string;
  /** `agent.plan_binding = "strict"`: the approved plan narrows the gate. */
  binds: boolean;
  /** One run of the goal in the session (its tokens counted, its teardown awaited on close). */
  run(how: RunHow): Promise<RunResult>;
  /** A plan that did not run: audited, and the model is told with the next goal. */
  notRun(plan: Plan, why: string): void;
}

/** How the turn ended: a run's result (mapped as any prompt's), or a plan that was not run. */
export type PlanTurnEnd = { result: RunResult } | { notRun: "refused" | "cancelled" };

const say = (send: PlanTurn["send"], text: string) =>
  send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

const AGAIN =
  "Say what to change and it is planned again (the session stays in Plan mode), or switch the mode to act without a plan.";

export async function planTurn(t: PlanTurn): Promise<PlanTurnEnd> {
  const ended = await planThenRun({
    goal: "",
    via: "acp",
    binds: t.binds,
    reviewer: editorReviewer(t),
    signal: t.signal,
    // The session's run knows its goal; an editor's turn is never planned again with feedback.
    run: (_request, how) => t.run(how),
    planReviewed: (plan, outcome) => {
      // Its own failure is logged by the session: the turn still ends as the answer says.
      if (outcome !== "revise") t.notRun(plan, outcome.notRun);
      return { ok: true, value: undefined };
    },
  });
  if (ended.kind === "result") return { result: ended.result };
  return { notRun: ended.kind === "not_run" && ended.cancelled ? "cancelled" : "refused" };
}

/** The editor as the plan's reviewer: the plan question, its answer, and what the turn says. */
function editorReviewer(t: PlanTurn): PlanReviewer {
  return {
    async review(plan, signal) {
      if (!t.ask) {
        // Never run without a person's yes: under --unattended the plan is only shown.
        const why = `nobody can approve it here (${t.nobody})`;
        say(t.send, `The plan was not run: ${why}. ${AGAIN}`);
        return { kind: "drop", why };
      }
      const call = t.translator.planQuestion(plan);
      let outcome: RequestPermissionOutcome | undefined;
      let failure: string | undefined;
      try {
        outcome = await t.ask(call, [...PLAN_OPTIONS], signal);
      } catch (e) {
        failure = (e as Error)?.message ?? String(e);
      }
      const allowed = outcome?.outcome === "selected" && outcome.optionId === "allow_once";
      if (allowed && !signal.aborted) {
        t.translator.planAnswered(call.toolCallId, "completed", "approved: the plan runs now");
        return { kind: "run" };
      }
      const refused = !signal.aborted && failure === undefined && outcome?.outcome === "selected";
      const why = signal.aborted
        ? "the prompt was cancelled"
        : failure !== undefined
          ? `the editor did not answer (${failure})`
          : refused
            ? "the user did not approve it"
            : "the editor cancelled the question";
      t.translator.planAnswered(call.toolCallId, "failed", `not run: ${why}`);
      if (!signal.aborted)
        say(t.send, `The plan was not run: ${refused ? "you did not approve it" : why}. ${AGAIN}`);
      return { kind: "drop", why, cancelled: signal.aborted };
    },
  };
}
