/**
 * The file a file_write / file_edit call is about to change, read once by the pipeline
 * before the call runs (docs/sessions.md "Undo"): its content now is the undo checkpoint and the
 * "before" of the diff the approver and the live view show; the tool's `proposedContent`
 * gives the "after". Reads only the judged target and never follows a symlink there (the
 * tool would refuse one too).
 */
import fs from "node:fs";
import { CHANGE_READ_MAX_BYTES, readCurrent } from "../core/file-state.js";
import { shownPath } from "../core/inside.js";
import type { Result, Target } from "../core/types.js";
import { judgeOpened } from "../policy/opened.js";
import { readThroughEditor } from "../tools/editor-read.js";
import { OPEN_JUDGED_READ } from "../tools/fs-util.js";
import type { AnyTool, EditorBuffers } from "../tools/types.js";

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
  /**
   * The editor's text of the file, when the change was planned from it (planFromEditor): it
   * differs from `before` (unsaved changes). The diff shows it as the old text, undo keeps it,
   * and the editor must still hold it when it writes `after`.
   */
  base?: Buffer;
}

/** The text a change replaces as the person sees it: the editor's, else the disk's. */
export function changeBase(change: FileChange): Buffer | null {
  return change.base ?? change.before;
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

/**
 * When the editor writes files (ACP with `fs.writeTextFile`, docs/editors.md "Editors (ACP)"):
 * the same change planned from the editor's text of the judged file — read through it with the
 * care of a read (tools/editor-read.ts: the text is taken only when it describes that very
 * file) — so an edit the model built from the buffer it read applies, and the question shows
 * what the editor will hold. The change as planned from the disk when the editor does not
 * write, cannot say, or holds the same text.
 */
export async function planFromEditor(
  change: FileChange,
  tool: AnyTool,
  input: unknown,
  editor: EditorBuffers | undefined,
  signal: AbortSignal,
): Promise<FileChange> {
  if (
    !editor?.writer?.(change.abs) ||
    !tool.proposedContent ||
    change.before === null ||
    change.before.includes(0)
  )
    return change;
  let fd: number;
  try {
    fd = fs.openSync(change.abs, OPEN_JUDGED_READ);
  } catch {
    return change;
  }
  try {
    if (!judgeOpened(fd, change.abs).ok) return change;
    const { text } = await readThroughEditor(editor, change.abs, fd, signal);
    if (text === undefined || Buffer.byteLength(text) > CHANGE_READ_MAX_BYTES) return change;
    const base = Buffer.from(text, "utf8");
    if (base.equals(change.before)) return change;
    return { ...change, base, after: tool.proposedContent(input, base) };
  } finally {
    fs.closeSync(fd);
  }
}
