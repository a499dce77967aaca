/**
 * `session/load` (docs/editors.md "Editors (ACP)"): a stored transcript replayed as the conversation an
 * editor shows — each goal as a `user_message_chunk`, each tool step as a `tool_call` (the
 * same title, kind, locations and rawInput as when it ran) followed by a `tool_call_update`
 * with the observation the model got, and each final answer as an `agent_message_chunk`.
 * The loop's corrections of invalid steps are its own working, not the conversation, and are
 * not replayed; nor are Scoot's notes to the model (src/agent/history.ts: after `/undo`, after a
 * goal that stopped). A call the person interrupted is replayed as failed; an answer they cut
 * off is replayed as it was kept, ending in `[interrupted]`.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { presentRecorded } from "../agent/calls.js";
import { isInterruptedObservation, isScootNote } from "../agent/history.js";
import { OBSERVATION_CLOSE, OBSERVATION_OPEN } from "../agent/prompt.js";
import { extractStep } from "../agent/step.js";
import type { Message } from "../store/session.js";
import { FINAL_ACTION } from "../tools/final.js";
import { toolCallView } from "./tool-kind.js";

const OBSERVATION_PREFIX = "Observation from ";
/** The loop's correction of an invalid step (src/agent/prompt.ts): not a goal. */
const CORRECTION_PREFIX = "Your last reply was not a valid step";
/** How a gate denial reads in the observation (src/agent/loop.ts). */
const DENIAL_PREFIX = "denied by policy";

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

export function replayUpdates(messages: readonly Message[], cwd: string): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  let seq = 0;
  let open: string | undefined;
  for (const m of messages) {
    if (m.role === "user") {
      if (m.content.startsWith(CORRECTION_PREFIX) || isScootNote(m.content)) continue;
      if (m.content.startsWith(OBSERVATION_PREFIX)) {
        if (!open) continue;
        const body = observationBody(m.content);
        out.push({
          sessionUpdate: "tool_call_update",
          toolCallId: open,
          status: body.startsWith(DENIAL_PREFIX) || isInterruptedObservation(body) ? "failed" : "completed",
          content: [{ type: "content", content: { type: "text", text: body } }],
        });
        open = undefined;
        continue;
      }
      open = undefined;
      out.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: m.content } });
    } else if (m.role === "assistant") {
      const step = stepOf(m.content);
      if (!step) continue;
      if (step.action === FINAL_ACTION) {
        out.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: step.input } });
        continue;
      }
      seq += 1;
      open = `replay-${seq}`;
      const v = toolCallView(presentRecorded(step.action, step.input), cwd);
      out.push({
        sessionUpdate: "tool_call",
        toolCallId: open,
        title: v.title,
        kind: v.kind,
        status: "pending",
        locations: v.locations,
        rawInput: v.rawInput,
      });
    }
  }
  return out;
}
