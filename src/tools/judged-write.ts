/**
 * The last step of file_write and file_edit: the new text goes to the judged target, through
 * the editor when it writes files (ACP `fs/write_text_file`, editor-write.ts), else straight to
 * the disk, atomically, its landing checked on the descriptor (core/atomic-write.ts).
 */
import type fs from "node:fs";
import { atomicWriteFile } from "../core/atomic-write.js";
import type { Result } from "../core/types.js";
import { judgeWriteLanding } from "../policy/opened.js";
import { writeThroughEditor } from "./editor-write.js";
import { effectLockDirOf } from "./effect-place.js";
import type { ToolContext } from "./types.js";

export interface JudgedWrite {
  bytes: number;
  /** The editor wrote it (its buffer and the disk agree). */
  byEditor: boolean;
  /** The editor saved another text than the one asked for (formatted on save): the disk's. */
  savedOther?: string;
}

/** The words an observation adds when the editor saved another text than asked for. */
export function savedOtherNote(w: JudgedWrite): string {
  return w.savedOther === undefined
    ? ""
    : `; the editor saved a different text than the one asked for (formatted on save?), and the file holds that now; read it again before editing it`;
}

export async function writeJudgedFile(
  ctx: Pick<ToolContext, "services" | "signal" | "cwd" | "childEnv">,
  abs: string,
  content: string,
  existing: fs.Stats | undefined,
  /** The text the change was planned from; null: a new file. */
  expected: Buffer | null,
): Promise<Result<JudgedWrite, { error: string; byEditor: boolean }>> {
  const editor = ctx.services.editorBuffers;
  const write = editor?.writer?.(abs);
  if (editor && write) {
    const r = await writeThroughEditor({
      editor,
      write,
      abs,
      content,
      expected,
      signal: ctx.signal,
      lockDir: effectLockDirOf(ctx),
    });
    if (!r.ok) return { ok: false, error: { error: r.error, byEditor: true } };
    if (r.value)
      return {
        ok: true,
        value: { bytes: Buffer.byteLength(r.value.saved), byEditor: true, savedOther: r.value.saved },
      };
    return { ok: true, value: { bytes: Buffer.byteLength(content), byEditor: true } };
  }
  const written = atomicWriteFile(abs, content, {
    ...preservedAttributes(existing),
    landing: judgeWriteLanding(abs),
  });
  if (!written.ok) return { ok: false, error: { error: written.error, byEditor: false } };
  return { ok: true, value: { bytes: written.value, byEditor: false } };
}

/** Mode and owner to carry over when replacing `existing`. */
function preservedAttributes(existing: fs.Stats | undefined): {
  mode?: number;
  owner?: { uid: number; gid: number };
} {
  if (!existing) return {};
  const sameOwner = existing.uid === process.getuid?.() && existing.gid === process.getgid?.();
  return {
    mode: existing.mode & 0o7777,
    ...(sameOwner ? {} : { owner: { uid: existing.uid, gid: existing.gid } }),
  };
}

/** The observation of a write that did not happen (or not safely), in the tool's words. */
export function writeFailure(tool: string, shown: string, e: { error: string; byEditor: boolean }): string {
  return e.byEditor
    ? `${tool}: cannot write ${shown} through the editor: ${e.error}; Scoot did not write it itself`
    : `${tool}: cannot write ${shown}: ${e.error}; nothing was changed`;
}
