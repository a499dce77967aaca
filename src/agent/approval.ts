/**
 * Approval (docs/safety.md "Approval"): the phase of the call pipeline after the gate allowed a call
 * and before its `tool_call` record, where a person may still say no. The gate decides
 * first; rules (approval-rules.ts) and the person answer only for what it allowed. Who answers
 * is an `Approver`: the keyboard in a REPL on a terminal, the editor over ACP. Where nobody can
 * answer (`-e`, `serve`, jobs, no terminal) there is no approver and nothing waits.
 */
import type { Ready } from "./call-record.js";

/** `always` on a refusal: "reject always", the same key is refused without asking again. */
export type ApprovalAnswer =
  | { kind: "once" }
  | { kind: "always" }
  | { kind: "refuse"; reason?: string; always?: boolean };

/**
 * Who answers. It is asked about the call's record (call-record.ts), as prepared and with the
 * change it will make, so the question shows exactly what will run and be written.
 */
export interface Approver {
  ask(call: Ready, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/** `tools.approval` and `--approval`. */
export type ApprovalMode = "ask" | "never";
export const APPROVAL_MODES: readonly ApprovalMode[] = ["ask", "never"];

/** How long the key argument of a summary may be; the approver shows the full call below it. */
export const SUMMARY_ARG_MAX = 120;

/** The tool and its key argument, one line: `bash  npm test`, `file_edit  src/calc.py`. */
export function callSummary(request: Pick<Ready, "action" | "presentation">): string {
  const arg = request.presentation.keyArgument.replace(/\s*\n\s*/g, " ⏎ ");
  const shown = arg.length > SUMMARY_ARG_MAX ? `${arg.slice(0, SUMMARY_ARG_MAX - 1)}…` : arg;
  return shown ? `${request.action}  ${shown}` : request.action;
}

/**
 * What an "always" answer to this call covers, in words (docs/safety.md "Approval scopes"):
 * `every "git status …" command`, `only this exact command`, `writes to notes.txt`,
 * `POST requests to https://example.com`, `calls of tool create_issue on MCP server github`.
 * The keyboard's question and the editor's options say it.
 */
export function alwaysCovers(call: Pick<Ready, "action" | "tool" | "scope">): string {
  const declared = call.tool.approvalScope;
  return declared && call.scope !== undefined ? declared.meaning(call.scope) : `every ${call.action} call`;
}

/** A remembered answer: "always" (allow) or "reject always" (refuse). */
export type RememberedAnswer = "allow" | "refuse";

/**
 * The remembered answers of one session, both kinds in one place: a key once allowed is not
 * asked again, a key once refused for good is refused without asking. Front ends that keep
 * answers across restarts (ACP) pass `onRemember` and the answers they restored.
 */
export interface ApprovalMemory {
  answer(key: string): RememberedAnswer | undefined;
  remember(key: string, answer: RememberedAnswer): void;
}

export function approvalMemory(
  restored: { allow?: readonly string[]; refuse?: readonly string[] } = {},
  onRemember?: (key: string, answer: RememberedAnswer) => void,
): ApprovalMemory {
  const answers = new Map<string, RememberedAnswer>();
  for (const k of restored.allow ?? []) answers.set(k, "allow");
  for (const k of restored.refuse ?? []) answers.set(k, "refuse");
  return {
    answer: (k) => answers.get(k),
    remember(k, a) {
      if (answers.get(k) === a) return;
      answers.set(k, a);
      onRemember?.(k, a);
    },
  };
}

/** What a refusal tells the model, as the call's observation. */
export function refusalObservation(action: string, reason: string | undefined): string {
  const why = reason?.trim() ? `: ${reason.trim()}` : " (no reason given)";
  return `not run: the user refused this ${action} call${why}. Do not retry the same call; adjust your plan or ask the user in your final answer.`;
}

/** What a refusal by a `[[tools.rules]]` entry tells the model, as the call's observation. */
export function ruleRefusalObservation(reason: string): string {
  return `not run: ${reason}. Do not retry the same call; adjust your plan or ask the user in your final answer.`;
}
