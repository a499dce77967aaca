/**
 * The file a file_write / file_edit call is about to change, read once by the pipeline
 * before the call runs (docs/sessions.md "Undo"): its content now is the undo checkpoint and the
 * "before" of the diff the approver and the live view show; the tool's `proposedContent`
 * gives the "after". Reads only the judged target and never follows a symlink there (the
 * tool would refuse one too).
 */
import { readCurrent } from "../core/file-state.js";
import { shownPath } from "../core/inside.js";
import type { Result, Target } from "../core/types.js";
import type { AnyTool } from "../tools/types.js";

export interface FileChange {
  /** The judged absolute path. */
  abs: string;
  /** The path as people read it: relative to the project root when inside it. */
  shown: string;
  /** The bytes the file holds now; null: it does not exist. */
  before: Buffer | null;
  mode?: number;
  /** What the call will write, or the observation of a call that will fail (then it writes nothing). */
  after: Result<string>;
}

/** The change a content-replacing call is about to make, or undefined for other calls. */
export function planFileChange(
  tool: AnyTool,
  input: unknown,
  target: Target,
  cwd: string,
): FileChange | undefined {
  const abs = target.write[0];
  if (!tool.proposedContent || abs === undefined) return undefined;
  const now = readCurrent(abs);
  if (!now.ok) return undefined;
  return {
    abs,
    shown: shownPath(abs, cwd),
    before: now.bytes,
    ...(now.mode !== undefined ? { mode: now.mode } : {}),
    after: tool.proposedContent(input, now.bytes),
  };
}
