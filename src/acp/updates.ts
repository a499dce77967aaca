/**
 * One prompt's agent events → ACP `session/update`s (docs/editors.md "Editors (ACP)"):
 * - the thought as `agent_thought_chunk` (streamed pieces when the backend streams);
 * - each tool step as one `tool_call` (title, kind, locations, rawInput, status `pending`) and
 *   then only `tool_call_update`s for its id: `in_progress` once allowed (with the `diff` a
 *   write is about to make), `completed` with the observation, or `failed` naming the policy's
 *   reason or the tool's error. A write's `tool_call` waits until its change is planned (the
 *   approval phase reads the file), so it carries the diff; it always goes before a permission
 *   request names it (`toolCallFor`), and a second `tool_call` for an id is never sent (an
 *   editor such as Zed takes one as a reset of the call);
 * - the answer as `agent_message_chunk`, streamed when the backend streams;
 * - after each model reply, `usage_update`: the tokens in context and the window's size.
 * Calls a tool makes itself (parallel children, redirect hops) that the gate denies get their
 * own failed tool call, so every denial is visible.
 *
 * - a plan (docs/editors.md "Plan mode in the editor") as a `plan` update, the whole list of
 *   entries each time, as ACP asks: all pending when a planning run ends with it and when a run
 *   that carries it out begins, then again at each step's `plan_step`/`plan_status`
 *   (plan-entries.ts maps the statuses; "skipped" has no ACP status).
 */
import type {
  Diff,
  PlanEntry,
  SessionUpdate,
  ToolCallContent,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import type { Prepared, Ready } from "../agent/call-record.js";
import { type AgentEvent, denialReason } from "../agent/events.js";
import { redact } from "../core/redact.js";
import type { Plan } from "../tools/plan-shape.js";
import { planEntries, planQuestionCall, progressed } from "./plan-entries.js";
import { changeDiff, toolCallView } from "./tool-kind.js";

interface OpenCall {
  id: string;
  /** The call's record: what the editor is shown is what was judged and will run. */
  call: Prepared;
  /** The change a write is about to make (its record's plan), shown once the call runs. */
  diff?: Diff;
  /** Whether its `tool_call` was sent (a write's waits for its planned change). */
  announced: boolean;
}

/** What the translator reads from the session besides the events. */
export interface TranslatorOptions {
  /** The model's context window in tokens, once known (for `usage_update`). */
  contextWindow?: () => number | undefined;
}

const text = (t: string): ToolCallContent[] => [{ type: "content", content: { type: "text", text: t } }];

export class UpdateTranslator {
  private seq = 0;
  private open: OpenCall | undefined;
  /** Calls a permission request named without a step of their own (none today; kept apart). */
  private readonly aside = new Map<number, OpenCall>();
  /** Thought text streamed in the current turn (its step then sends nothing more). */
  private thoughtStreamed = false;
  /** Answer text handed on since the last withdrawal (sent or held). */
  private answerStreamed = "";
  /**
   * Answer text held until the step's thought is sent: without a streamed thought (a backend
   * that answers in one piece) the thought only arrives with the step, and it goes first.
   */
  private answerHeld = "";
  /** The plan shown, and its entries as last sent. */
  private plan: { plan: Plan; entries: PlanEntry[] } | undefined;
  runId: string | undefined;

  constructor(
    private readonly cwd: string,
    private readonly send: (u: SessionUpdate) => void,
    /** Distinguishes tool call ids across prompts of one session. */
    private readonly prefix: string,
    private readonly opts: TranslatorOptions = {},
  ) {}

  private nextId(): string {
    this.seq += 1;
    return `${this.prefix}-${this.seq}`;
  }

  /** Sends the one `tool_call` of a call: pending (with the diff of a planned write) or failed. */
  private announce(open: OpenCall, status: "pending" | "failed" = "pending", reason?: string): void {
    if (open.announced) return;
    open.announced = true;
    const v = toolCallView(open.call, this.cwd);
    const diff = open.call.kind === "ready" ? changeDiff(open.call.change) : undefined;
    if (diff) open.diff = diff;
    const content: ToolCallContent[] = [
      ...(diff && status === "pending" ? [{ type: "diff" as const, ...diff }] : []),
      ...(reason !== undefined ? text(reason) : []),
    ];
    this.send({
      sessionUpdate: "tool_call",
      toolCallId: open.id,
      title: v.title,
      kind: v.kind,
      status,
      locations: v.locations,
      rawInput: v.rawInput,
      ...(content.length > 0 ? { content } : {}),
    });
  }

  /** A write's change is planned when it is approved: its `tool_call` waits for it. */
  private static waitsForPlan(call: Prepared): boolean {
    return call.kind === "ready" && call.tool.proposedContent !== undefined;
  }

  private finish(open: OpenCall | undefined, status: "completed" | "failed", content: string): void {
    if (!open) return;
    this.announce(open);
    const { id, call, diff } = open;
    const toolFailed = call.kind === "ready" && call.result?.failed === true;
    const shown = status === "completed" && diff && !toolFailed ? [{ type: "diff" as const, ...diff }] : [];
    this.send({
      sessionUpdate: "tool_call_update",
      toolCallId: id,
      status: toolFailed ? "failed" : status,
      content: [...shown, ...text(content)],
    });
    if (this.open === open) this.open = undefined;
    this.aside.delete(call.id);
  }

  /**
   * The call an event is about: one asked about on its own, else the step's. Each phase of a
   * call makes a new record (same id): the newest one an event carries is kept.
   */
  private callOf(record: Prepared | undefined): OpenCall | undefined {
    const open = (record && this.aside.get(record.id)) ?? this.open;
    if (open && record && open.call.id === record.id) open.call = record;
    return open;
  }

  /**
   * The id of the tool call a permission request for `call` names, its `tool_call` (with the
   * planned diff) sent first. The caller flushes the updates before it asks.
   */
  toolCallFor(call: Ready): string {
    if (this.open?.call.id === call.id) {
      // The record asked about carries the planned change the question shows.
      this.open.call = call;
      this.announce(this.open);
      return this.open.id;
    }
    const known = this.aside.get(call.id);
    if (known) return known.id;
    const open: OpenCall = { id: this.nextId(), call, announced: false };
    this.aside.set(call.id, open);
    this.announce(open);
    return open.id;
  }

  private showPlan(plan: Plan, entries: PlanEntry[]): void {
    this.plan = { plan, entries };
    this.send({ sessionUpdate: "plan", entries });
  }

  /**
   * The question to run `plan`: its `tool_call` (the plan numbered, pending) sent now, the
   * permission request then names it. `planAnswered` ends it.
   */
  planQuestion(plan: Plan): ToolCallUpdate {
    const call = planQuestionCall(plan, this.nextId());
    this.send({ sessionUpdate: "tool_call", ...call });
    return call;
  }

  /** The plan's question answered: `completed` (it runs) or `failed` (it does not), with why. */
  planAnswered(toolCallId: string, status: "completed" | "failed", why: string): void {
    this.send({ sessionUpdate: "tool_call_update", toolCallId, status, content: text(why) });
  }

  handle(e: AgentEvent): void {
    switch (e.type) {
      case "run":
        this.runId = e.runId;
        break;
      case "thinking":
        this.thoughtStreamed = false;
        break;
      case "reply": {
        const size = this.opts.contextWindow?.();
        if (e.usage && size !== undefined && size > 0)
          this.send({ sessionUpdate: "usage_update", used: e.usage.total_tokens, size });
        break;
      }
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
          this.open = { id: this.nextId(), call: e.call, announced: false };
          if (!UpdateTranslator.waitsForPlan(e.call)) this.announce(this.open);
        }
        break;
      case "running": {
        const open = this.callOf(e.call);
        if (!open) break;
        const announced = open.announced;
        this.announce(open);
        const diff = changeDiff(e.call?.change);
        if (diff) open.diff = diff;
        this.send({
          sessionUpdate: "tool_call_update",
          toolCallId: open.id,
          status: "in_progress",
          // A `tool_call` sent just now already carries the diff.
          ...(diff && announced ? { content: [{ type: "diff", ...diff }] } : {}),
        });
        break;
      }
      case "deny": {
        const reason = `denied by policy: ${denialReason(e.call)}`;
        if (this.open && this.open.call.id === e.call.id) this.finish(this.open, "failed", reason);
        else {
          const open: OpenCall = { id: this.nextId(), call: e.call, announced: false };
          this.announce(open, "failed", reason);
        }
        break;
      }
      case "refused": {
        const open = this.callOf(e.call);
        // A rule in Scoot's configuration refuses in its own words; the person's refusal says it is theirs.
        const { rule, reason } = e.call.approval ?? {};
        if (rule !== undefined) this.finish(open, "failed", `not run: ${reason ?? rule}`);
        else this.finish(open, "failed", `not run: refused by the user${reason ? ` (${reason})` : ""}`);
        break;
      }
      case "file_changed": {
        // What the disk holds now is what the diff shows: an editor that formats on save saved
        // another text than the one planned (docs/editors.md "Writes through the editor").
        const open = this.callOf(e.call);
        const planned = e.call.change?.after;
        if (!open || !planned?.ok || e.after === null || e.after === planned.value) break;
        const diff = changeDiff({ ...e.call.change!, after: { ok: true, value: e.after } });
        if (diff) open.diff = diff;
        break;
      }
      case "observation": {
        const observed = e.call.shown ?? `(${e.bytes} bytes)`;
        this.finish(this.callOf(e.call), "completed", observed);
        break;
      }
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
      case "plan":
      case "plan_execute":
        this.showPlan(e.plan, planEntries(e.plan));
        break;
      case "plan_progress": {
        if (!this.plan) break;
        const entries = progressed(this.plan.entries, this.plan.plan, e.step, e.status);
        if (entries) this.showPlan(this.plan.plan, entries);
        break;
      }
      default:
        break;
    }
  }

  /** The run ended with a call still open (interrupted, backend failure): it failed. */
  close(reason: string): void {
    for (const open of [...this.aside.values()]) this.finish(open, "failed", reason);
    this.finish(this.open, "failed", reason);
  }
}
