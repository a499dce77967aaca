/**
 * One prompt's agent events → ACP `session/update`s (docs/editors.md "Editors (ACP)"):
 * - the thought as `agent_thought_chunk` (streamed pieces when the backend streams);
 * - each tool step as `tool_call` (title, kind, locations, rawInput) then `tool_call_update`:
 *   `in_progress` once allowed (with the `diff` a write is about to make), `completed` with
 *   the observation, or `failed` naming the policy's reason or the tool's error;
 * - the answer as `agent_message_chunk`, streamed when the backend streams.
 * Calls a tool makes itself (parallel children, redirect hops) that the gate denies get their
 * own failed tool call, so every denial is visible.
 */
import type { Diff, SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import type { Prepared } from "../agent/call-record.js";
import type { AgentEvent } from "../agent/events.js";
import { redact } from "../core/redact.js";
import { changeDiff, toolCallView } from "./tool-kind.js";

interface OpenCall {
  id: string;
  /** The call's record: what the editor is shown is what was judged and will run. */
  call: Prepared;
  /** The change a write is about to make (its record's plan), shown once the call runs. */
  diff?: Diff;
}

const text = (t: string): ToolCallContent[] => [{ type: "content", content: { type: "text", text: t } }];

export class UpdateTranslator {
  private seq = 0;
  private open: OpenCall | undefined;
  /** Thought text streamed in the current turn (its step then sends nothing more). */
  private thoughtStreamed = false;
  /** Answer text handed on since the last withdrawal (sent or held). */
  private answerStreamed = "";
  /**
   * Answer text held until the step's thought is sent: without a streamed thought (a backend
   * that answers in one piece) the thought only arrives with the step, and it goes first.
   */
  private answerHeld = "";
  runId: string | undefined;

  constructor(
    private readonly cwd: string,
    private readonly send: (u: SessionUpdate) => void,
    /** Distinguishes tool call ids across prompts of one session. */
    private readonly prefix: string,
  ) {}

  private nextId(): string {
    this.seq += 1;
    return `${this.prefix}-${this.seq}`;
  }

  private startCall(call: Prepared, status: "pending" | "failed", reason?: string): string {
    const id = this.nextId();
    const v = toolCallView(call, this.cwd);
    this.send({
      sessionUpdate: "tool_call",
      toolCallId: id,
      title: v.title,
      kind: v.kind,
      status,
      locations: v.locations,
      rawInput: v.rawInput,
      ...(reason !== undefined ? { content: text(reason) } : {}),
    });
    return id;
  }

  private finish(status: "completed" | "failed", content: string): void {
    if (!this.open) return;
    const { id, call, diff } = this.open;
    const toolFailed = call.kind === "ready" && call.result?.failed === true;
    const shown = status === "completed" && diff && !toolFailed ? [{ type: "diff" as const, ...diff }] : [];
    this.send({
      sessionUpdate: "tool_call_update",
      toolCallId: id,
      status: toolFailed ? "failed" : status,
      content: [...shown, ...text(content)],
    });
    this.open = undefined;
  }

  /** The tool call the editor was shown for the current step (a permission request names it). */
  openCallId(): string | undefined {
    return this.open?.id;
  }

  handle(e: AgentEvent): void {
    switch (e.type) {
      case "run":
        this.runId = e.runId;
        break;
      case "thinking":
        this.thoughtStreamed = false;
        break;
      case "thought_delta":
        // The server's reasoning is thinking too, but the step's own thought still follows it.
        if (e.source !== "reasoning") this.thoughtStreamed = true;
        this.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: e.text } });
        break;
      case "step":
        if (!this.thoughtStreamed && e.thought !== "")
          this.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: e.thought } });
        if (this.answerHeld !== "") {
          this.send({
            sessionUpdate: "agent_message_chunk",
            content: { type: "text", text: this.answerHeld },
          });
          this.answerHeld = "";
        }
        if (e.call) {
          const id = this.startCall(e.call, "pending");
          this.open = { id, call: e.call };
        }
        break;
      case "running": {
        if (!this.open) break;
        const diff = changeDiff(e.call?.change);
        if (diff) this.open.diff = diff;
        this.send({
          sessionUpdate: "tool_call_update",
          toolCallId: this.open.id,
          status: "in_progress",
          ...(diff ? { content: [{ type: "diff", ...diff }] } : {}),
        });
        break;
      }
      case "deny": {
        const reason = `denied by policy: ${e.reason}`;
        if (this.open && (this.open.call === e.call || e.call === undefined)) this.finish("failed", reason);
        else if (e.call) this.startCall(e.call, "failed", reason);
        break;
      }
      case "refused":
        // A rule in Scoot's configuration refuses in its own words; the person's refusal says it is theirs.
        if (e.call?.approval?.rule !== undefined)
          this.finish("failed", `not run: ${e.reason ?? e.call.approval.rule}`);
        else this.finish("failed", `not run: refused by the user${e.reason ? ` (${e.reason})` : ""}`);
        break;
      case "observation":
        this.finish("completed", e.text ?? `(${e.bytes} bytes)`);
        break;
      case "answer_delta":
        this.answerStreamed += e.text;
        if (this.thoughtStreamed)
          this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.text } });
        else this.answerHeld += e.text;
        break;
      case "answer_withdrawn":
        if (this.answerStreamed.length > this.answerHeld.length) {
          this.send({
            sessionUpdate: "agent_message_chunk",
            content: { type: "text", text: `\n\n[the text above was withdrawn: ${e.reason}]\n\n` },
          });
        }
        this.answerStreamed = "";
        this.answerHeld = "";
        break;
      case "final": {
        // The streamed pieces were redacted on the way (src/core/stream-redact.ts).
        const answer = redact(e.answer);
        const rest = answer.startsWith(this.answerStreamed)
          ? answer.slice(this.answerStreamed.length)
          : answer;
        if (rest !== "")
          this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: rest } });
        this.answerStreamed = "";
        break;
      }
      default:
        break;
    }
  }

  /** The run ended with a call still open (interrupted, backend failure): it failed. */
  close(reason: string): void {
    this.finish("failed", reason);
  }
}
