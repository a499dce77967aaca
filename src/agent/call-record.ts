/**
 * One call, one record (docs/architecture.md "A step, file by file"): the value a tool call is
 * from the moment it is prepared until it is undone. `prepare` makes it (the tool, the
 * validated input, the declared effects, how it presents itself, the gate's verdict and the
 * target it resolved, the judged children); `approve` returns a new record with the planned
 * change of a file tool — computed once, from the bytes that will be replaced — and the person's
 * answer; `run` a new one with the checkpoint undo needs and the result. No record is changed
 * after it is made; every record of one call shares its `id`. The approver, the editor's permission request and
 * tool-call updates, the live view, the trace, the transcript, the audit record and undo all
 * read this one value, so none of them rebuilds the call its own way.
 */
import type { Effects, Target } from "../core/types.js";
import type { CheckpointEntry } from "../store/checkpoints.js";
import type { AnyTool, Presentation, ToolDetails } from "../tools/types.js";
import type { FileChange } from "./file-change.js";

interface CallBase {
  /**
   * Which call this is, the same on every record of it: `prepare`, `approve` and `run` each
   * return a new record (none is changed after it is made), so front ends follow a call by its id.
   */
  id: number;
  /** The tool name the model asked for (it may not exist: an invalid call). */
  action: string;
  /** The action_input text as the model wrote it. */
  raw: string;
  presentation: Presentation;
}

/** A call that does not validate: unknown tool, bad input, a bad child. Nothing is judged. */
export interface InvalidCall extends CallBase {
  kind: "invalid";
  error: string;
}

interface ValidCall extends CallBase {
  tool: AnyTool;
  /** The validated input (parsed once). */
  input: unknown;
  effects: Effects;
}

export interface DeniedCall extends ValidCall {
  kind: "denied";
  reason: string;
}

/** How the approval phase ended for a call the gate allowed. */
export interface CallApproval {
  /**
   * `not_needed`: a read, or nobody to ask; `rule`: an allow rule let it run; `remembered`: an
   * earlier "always" covered it; `known_safe`: a known-safe command, run without a question;
   * `once` / `always`: the person allowed it; `refuse`: the person, an earlier "reject always", a
   * deny rule, or an ask rule nobody could answer said no.
   */
  answer: "not_needed" | "rule" | "remembered" | "known_safe" | "once" | "always" | "refuse";
  reason?: string;
  /**
   * The `[[tools.rules]]` entry that decided without the person: `tools.rules[N]` when a rule
   * allowed the call (`rule`) or refused it (`refuse`: deny, or ask with nobody to answer).
   */
  rule?: string;
  /** A refusal the person gave earlier: their "reject always" for this call's key. */
  remembered?: true;
}

/** What a call that ran gave back. */
export interface CallResult {
  /** The tool's whole text. */
  raw: string;
  /** Clipped to the tool's size; the context fit may clip it further for the model (`shown`). */
  text: string;
  failed?: boolean;
  details?: ToolDetails;
}

export interface Ready extends ValidCall {
  kind: "ready";
  /** The resolved paths the gate allowed; the tool opens these, never its input's strings. */
  target: Target;
  /**
   * The call's approval scope (docs/safety.md "Approval scopes"): `git status`, `notes.txt`,
   * `POST https://example.com`; absent when the tool declares none (an "always" covers the tool).
   */
  scope?: string;
  /** What an "always" or "reject always" answer covers: `<tool>:<scope>`, or the tool. */
  rememberKey: string;
  /**
   * The tool judged the call a known-safe command (docs/safety.md "Known-safe commands"): in
   * guarded mode, with `tools.approval_safe_commands`, it runs without a question.
   */
  knownSafe?: true;
  /** Judged children of a fan-out call (`parallel`), in call order. */
  children?: readonly Prepared[];
  /** Set by `approve`: the change a file tool will make, read once before anyone is asked. */
  readonly change?: FileChange;
  readonly approval?: CallApproval;
  /** Set by `run` when a file's state was kept for undo. */
  readonly checkpoint?: CheckpointEntry;
  readonly result?: CallResult;
  /** The observation text the model was given (after every clip). */
  readonly shown?: string;
}

export type Prepared = InvalidCall | DeniedCall | Ready;

/** How a call that never validated is shown: its name and its text, as the model wrote them. */
export function rawPresentation(action: string, raw: string): Presentation {
  return { title: `${action} ${raw}`, keyArgument: raw, locations: [] };
}
