/**
 * `session/load` (README "Editors (ACP)"): a stored transcript replayed as the conversation an
 * editor shows — each goal as a `user_message_chunk`, each final answer as an
 * `agent_message_chunk`. Observations, corrections and intermediate steps are the agent's
 * working, not the conversation, and are not replayed.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { extractStep } from "../agent/step.js";
import type { Message } from "../store/session.js";

/** The loop's own user-role messages (see src/agent/prompt.ts): not goals. */
const WORKING_PREFIXES = ["Observation from ", "Your last reply was not a valid step"];

function finalAnswer(text: string): string | undefined {
  const step = extractStep(text);
  if (!step.ok || step.value.action !== "final") return undefined;
  const input = step.value.action_input;
  return typeof input === "string" ? input : JSON.stringify(input);
}

export function replayUpdates(messages: readonly Message[]): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  for (const m of messages) {
    if (m.role === "user") {
      if (WORKING_PREFIXES.some((p) => m.content.startsWith(p))) continue;
      out.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: m.content } });
    } else if (m.role === "assistant") {
      const answer = finalAnswer(m.content);
      if (answer !== undefined)
        out.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: answer } });
    }
  }
  return out;
}
