/**
 * Approval through the editor (docs/editors.md "Editors (ACP)"): the pipeline's approval phase asks
 * this Approver, which sends `session/request_permission` with the tool call as the editor
 * already shows it (same id, title, kind, locations, rawInput, and the diff of a write) and
 * four options. A write whose text holds a NUL byte, an escape sequence or a bidi override is
 * shown as the keyboard shows it: escaped in the diff, with a line counting what was escaped.
 * The `tool_call` for that id always reaches the editor first: the session's translator sends
 * it, and the link writes every pending update before it asks.
 *
 * Allow once runs the call; allow always runs it and remembers its scope (the file, the
 * command's program and subcommand, the origin, the server's tool) for the session; reject
 * once refuses it; reject always refuses it and every later call with the same key without
 * asking again. Both "always" answers are stored with the session
 * (src/store/session-settings.ts) and restored by `session/load`. A cancelled prompt cancels
 * the pending request (the SDK sends `$/cancel_request`); an editor that answers `cancelled`,
 * fails or is gone is a refusal, never a yes.
 */
import type { PermissionOption, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { type ApprovalAnswer, type Approver, alwaysCovers } from "../agent/approval.js";
import type { Ready } from "../agent/call-record.js";
import type { EditorLink } from "./editor-link.js";
import { shownChange, toolCallView } from "./tool-kind.js";

/** The four options; the "always" ones say what they cover (docs/safety.md "Approval scopes"). */
export function permissionOptions(request: Ready): PermissionOption[] {
  const covers = alwaysCovers(request);
  return [
    { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
    { optionId: "allow_always", name: `Allow always (${covers}, this session)`, kind: "allow_always" },
    { optionId: "reject_once", name: "Reject", kind: "reject_once" },
    { optionId: "reject_always", name: `Reject always (${covers}, this session)`, kind: "reject_always" },
  ];
}

/** What the approver needs from the session while a prompt runs. */
export interface ApprovalContext {
  /** The editor of the running prompt; undefined: nobody to ask (refused). */
  link(): EditorLink | undefined;
  /**
   * The id of the tool call the editor is shown for `request`, its `tool_call` sent first
   * (undefined: no prompt is running). The permission request names it, never another id.
   */
  toolCallFor(request: Ready): string | undefined;
  cwd: string;
}

const REFUSED_BY_USER = "refused by the user in the editor";

/** The permission request's tool call: the call's record as the editor already shows it, with its planned change. */
export function permissionToolCall(request: Ready, toolCallId: string, cwd: string): ToolCallUpdate {
  const v = toolCallView(request, cwd);
  const shown = shownChange(request.change);
  // The diff as the keyboard shows it (escaped), and its warning line when anything was escaped.
  const content: ToolCallContent[] = shown
    ? [
        { type: "diff" as const, ...shown.diff },
        ...(shown.warning
          ? [{ type: "content" as const, content: { type: "text" as const, text: shown.warning } }]
          : []),
      ]
    : [];
  return {
    toolCallId,
    title: v.title,
    kind: v.kind,
    status: "pending",
    locations: v.locations,
    rawInput: v.rawInput,
    ...(content.length > 0 ? { content } : {}),
  };
}

let requestCounter = 0;

export class AcpApprover implements Approver {
  constructor(private readonly ctx: ApprovalContext) {}

  async ask(request: Ready, signal: AbortSignal): Promise<ApprovalAnswer> {
    const link = this.ctx.link();
    if (!link) return { kind: "refuse", reason: "no editor is connected to ask" };
    requestCounter += 1;
    const id = this.ctx.toolCallFor(request) ?? `permission-${requestCounter}`;
    const outcome = await link.requestPermission(
      permissionToolCall(request, id, this.ctx.cwd),
      permissionOptions(request),
      signal,
    );
    if (outcome.outcome === "cancelled")
      return { kind: "refuse", reason: "the editor cancelled the question" };
    switch (outcome.optionId) {
      case "allow_once":
        return { kind: "once" };
      case "allow_always":
        return { kind: "always" };
      case "reject_always":
        return { kind: "refuse", reason: REFUSED_BY_USER, always: true };
      case "reject_once":
        return { kind: "refuse", reason: REFUSED_BY_USER };
      default:
        return { kind: "refuse", reason: `the editor answered an unknown option "${outcome.optionId}"` };
    }
  }
}
