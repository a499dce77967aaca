/**
 * `session/load` (docs/editors.md "Editors (ACP)"): a stored transcript replayed as the conversation an
 * editor shows — each goal as a `user_message_chunk`, each tool step as a `tool_call` (the
 * same title, kind, locations and rawInput as when it ran) followed by a `tool_call_update`
 * with the observation the model got and the call's real ending: `failed` for a denial, a
 * refusal, an interruption or a tool that failed (call-outcomes.ts), else `completed`. A call
 * with no observation stored (the agent stopped while it ran) is replayed failed, never left
 * pending. Each final answer is an `agent_message_chunk`, and so is each plan a planning run
 * ended with (numbered, as the question to run it showed it): a replay sends no `plan` update,
 * since which steps a later run carried out is not in the transcript.
 * The loop's corrections of invalid steps are its own working, not the conversation, and are
 * not replayed; nor are Scoot's notes to the model (src/agent/history.ts: after `/undo`, after a
 * goal that stopped). An answer the person cut off is replayed as it was kept, ending in
 * `[interrupted]`.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { presentRecorded } from "../agent/call-prepare.js";
import { isScootNote } from "../agent/history.js";
import { OBSERVATION_CLOSE, OBSERVATION_OPEN } from "../agent/prompt.js";
import { extractStep } from "../agent/step.js";
import { redact } from "../core/redact.js";
import { type Message, shownText } from "../store/session.js";
import { FINAL_ACTION } from "../tools/final.js";
import { formatPlan, PLAN_ACTION, parsePlan } from "../tools/plan.js";
import { endedFailed } from "./call-outcomes.js";
import { toolCallView } from "./tool-kind.js";

const OBSERVATION_PREFIX = "Observation from ";
/** The loop's correction of an invalid step (src/agent/prompt.ts): not a goal. */
const CORRECTION_PREFIX = "Your last reply was not a valid step";
/** What a call with no stored observation is replayed with. */
export const NO_RESULT_STORED = "no result was stored: the agent stopped while this call ran";

type Step = { action: string; input: string };

function stepOf(text: string): Step | undefined {
  const step = extractStep(text);
  if (!step.ok) return undefined;
  const { action, action_input: input } = step.value;
  if (typeof action !== "string") return undefined;
  return { action, input: typeof input === "string" ? input : JSON.stringify(input) };
}

/** The tool result between the untrusted-data markers (the whole text when they are missing). */
function observationBody(content: string): string {
  const open = content.indexOf(OBSERVATION_OPEN);
  const close = content.lastIndexOf(OBSERVATION_CLOSE);
  if (open < 0 || close < open) return content.slice(content.indexOf("\n") + 1);
  return content
    .slice(open + OBSERVATION_OPEN.length, close)
    .replace(/^\n/, "")
    .replace(/\n$/, "");
}

export function replayUpdates(
  messages: readonly Message[],
  cwd: string,
  /** Fingerprints of the session's failed tool calls (call-outcomes.ts). */
  failed: ReadonlySet<string> = new Set(),
): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  let seq = 0;
  let open: { id: string; action: string } | undefined;
  const ended = (status: "completed" | "failed", body: string) => {
    if (!open) return;
    out.push({
      sessionUpdate: "tool_call_update",
      toolCallId: open.id,
      status,
      content: [{ type: "content", content: { type: "text", text: body } }],
    });
    open = undefined;
  };
  for (const m of messages) {
    if (m.role === "user") {
      if (m.content.startsWith(CORRECTION_PREFIX) || isScootNote(m.content)) continue;
      if (m.content.startsWith(OBSERVATION_PREFIX)) {
        if (!open) continue;
        const body = observationBody(m.content);
        // The line's outcome field says how the call ended; a transcript from before it was
        // recorded falls back to reading the words (call-outcomes.ts).
        const failedCall = m.outcome ? m.outcome.outcome !== "ran" : endedFailed(open.action, body, failed);
        ended(failedCall ? "failed" : "completed", body);
        continue;
      }
      ended("failed", NO_RESULT_STORED);
      // The person's own words: a plan run's goal line also holds the plan the model was given.
      out.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: shownText(m) } });
    } else if (m.role === "assistant") {
      const step = stepOf(m.content);
      if (!step) continue;
      ended("failed", NO_RESULT_STORED);
      if (step.action === FINAL_ACTION) {
        out.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: step.input } });
        continue;
      }
      if (step.action === PLAN_ACTION) {
        // A plan the loop refused (its correction follows) was never shown: not replayed either.
        const plan = parsePlan(step.input);
        if (plan.ok)
          out.push({
            sessionUpdate: "agent_message_chunk",
            content: { type: "text", text: `Plan:\n${redact(formatPlan(plan.value))}` },
          });
        continue;
      }
      seq += 1;
      open = { id: `replay-${seq}`, action: step.action };
      const v = toolCallView(presentRecorded(step.action, step.input), cwd);
      out.push({
        sessionUpdate: "tool_call",
        toolCallId: open.id,
        title: v.title,
        kind: v.kind,
        status: "pending",
        locations: v.locations,
        rawInput: v.rawInput,
      });
    }
  }
  ended("failed", NO_RESULT_STORED);
  return out;
}
