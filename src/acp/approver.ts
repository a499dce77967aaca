/**
 * Approval through the editor (docs/editors.md "Editors (ACP)"): the pipeline's approval phase asks
 * this Approver, which sends `session/request_permission` with the tool call as the editor
 * already shows it (same id, title, kind, locations, rawInput, and the diff of a write) and
 * four options. Allow once runs the call; allow always runs it and remembers its key (the
 * tool, or the bash program) for the session; reject once refuses it; reject always refuses
 * it and every later call with the same key without asking again. Both "always" answers are
 * stored with the session (src/store/session-settings.ts) and restored by `session/load`.
 * A cancelled prompt cancels the pending request (the SDK sends `$/cancel_request`); an
 * editor that answers `cancelled`, fails or is gone is a refusal, never a yes.
 */
import path from "node:path";
import type { PermissionOption, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { ApprovalAnswer, ApprovalRequest, Approver } from "../agent/approval.js";
import { DIFF_MAX_FILE_BYTES } from "./edit-diff.js";
import type { EditorLink } from "./editor-link.js";
import { toolCallView } from "./tool-kind.js";

export const PERMISSION_OPTIONS: readonly PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Allow always (this tool, this session)", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Reject always (this tool, this session)", kind: "reject_always" },
];

/** What the approver needs from the session while a prompt runs. */
export interface ApprovalContext {
  /** The editor of the running prompt; undefined: nobody to ask (refused). */
  link(): EditorLink | undefined;
  /** The id of the tool call the editor was shown for this step, when there is one. */
  openToolCallId(): string | undefined;
  cwd: string;
  /** Keys answered "reject always" in this session. */
  refusedAlways(key: string): boolean;
  rememberRefusal(key: string): void;
}

const REFUSED_BY_USER = "refused by the user in the editor";

/** The raw step text a request was made from (the pipeline hands the parsed input). */
function rawOf(action: string, input: unknown): string {
  if (action === "bash" && typeof input === "string") return input;
  return typeof input === "string" ? input : JSON.stringify(input);
}

export function permissionToolCall(
  request: ApprovalRequest,
  toolCallId: string,
  cwd: string,
): ToolCallUpdate {
  const v = toolCallView(request.action, rawOf(request.action, request.input), cwd);
  const content: ToolCallContent[] = [];
  const small = (t: string | null) => t === null || t.length <= DIFF_MAX_FILE_BYTES;
  if (request.diff && small(request.diff.before) && small(request.diff.after))
    content.push({
      type: "diff",
      path: path.resolve(cwd, request.diff.path),
      oldText: request.diff.before,
      newText: request.diff.after ?? "",
    });
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

  async ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (this.ctx.refusedAlways(request.rememberKey))
      return {
        kind: "refuse",
        reason: `${REFUSED_BY_USER} earlier ("reject always" for ${request.rememberKey})`,
      };
    const link = this.ctx.link();
    if (!link) return { kind: "refuse", reason: "no editor is connected to ask" };
    requestCounter += 1;
    const id = this.ctx.openToolCallId() ?? `permission-${requestCounter}`;
    const outcome = await link.requestPermission(
      permissionToolCall(request, id, this.ctx.cwd),
      [...PERMISSION_OPTIONS],
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
        this.ctx.rememberRefusal(request.rememberKey);
        return { kind: "refuse", reason: REFUSED_BY_USER };
      case "reject_once":
        return { kind: "refuse", reason: REFUSED_BY_USER };
      default:
        return { kind: "refuse", reason: `the editor answered an unknown option "${outcome.optionId}"` };
    }
  }
}
