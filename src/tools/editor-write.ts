/**
 * A write through the editor (ACP `fs/write_text_file`, docs/editors.md "Editors (ACP)") of a file
 * the gate judged and a person approved: the editor writes the new text, so its buffer and the
 * disk agree. The editor writes by *path*, like it reads, so the same care as a read through it
 * (editor-read.ts) applies, from the other side:
 *
 * - before: the editor must still hold the text the change was planned from (a person typing
 *   in the buffer while the question waited would otherwise lose their words), and the path
 *   must still lead to the judged file: its directory is its own real path, and the file is
 *   absent or a regular file, no link;
 * - during: no directory the path goes through is renamed, created or removed (watches on
 *   every ancestor). The file's own name is not watched: an editor that saves replaces the
 *   file, which its directory reports exactly like a swap;
 * - after: the same path checks again.
 *
 * What the editor answers is what happened: its error fails the call, and Scoot never writes
 * the file itself behind the editor's back. What the disk holds afterwards is what is reported
 * (docs/editors.md "Writes through the editor"): an editor that formats on save saved another
 * text than the one asked for, and says so; an editor that keeps the text in its buffer
 * without saving it left the disk as it was, and the call fails saying that plainly.
 */
import fs from "node:fs";
import path from "node:path";
import type { Result } from "../core/types.js";
import { judgeOpened, OPENED_ELSEWHERE } from "../policy/opened.js";
import { holdForEditorWrite } from "../store/effect-lock.js";
import { drainWatchEvents, readThroughEditor, watchPath } from "./editor-read.js";
import { OPEN_JUDGED_READ } from "./fs-util.js";
import type { EditorBuffers, EditorWrite } from "./types.js";

export const EDITOR_TEXT_CHANGED =
  "the editor's text of it changed after this call was prepared (edited while the question waited); read it again and retry";
const REDIRECTED =
  "the editor's write did not reach the file Scoot judged: its path changed during the write (swapped for a link?), so the text may have gone elsewhere; check the file and its directory";
/** The disk did not change: most likely the editor holds the text in its buffer, unsaved. */
const NOT_SAVED =
  "the editor took the new text but did not save it: it is only in the editor's buffer, not on disk, so commands (bash, grep), /diff and /undo still see the old text; save the file in the editor, or check it (a link swapped in during the write could also have sent the text elsewhere)";
const PATH_CHANGED =
  "a directory on its path changed while the editor wrote it (swapped for a symlink?); check the file and its directory";

/** Whether `abs` still leads to the judged place: a real directory, and no file or a regular one (no link). */
function plainTarget(abs: string): boolean {
  const dir = path.dirname(abs);
  try {
    if (fs.realpathSync(dir) !== dir) return false;
  } catch {
    return false;
  }
  try {
    const st = fs.lstatSync(abs);
    return st.isFile();
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** The editor's text of `abs` is still `expected` (or the editor cannot say): undefined, else why not. */
async function stillExpected(
  editor: EditorBuffers,
  abs: string,
  expected: Buffer,
  signal: AbortSignal,
): Promise<string | undefined> {
  let fd: number;
  try {
    fd = fs.openSync(abs, OPEN_JUDGED_READ);
  } catch {
    return OPENED_ELSEWHERE;
  }
  try {
    const opened = judgeOpened(fd, abs);
    if (!opened.ok) return opened.error;
    const read = await readThroughEditor(editor, abs, fd, signal);
    if (read.refused === "moved" || read.refused === "renamed-nearby") return PATH_CHANGED;
    if (read.text !== undefined && read.text !== expected.toString("utf8")) return EDITOR_TEXT_CHANGED;
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

export interface EditorWriteRequest {
  editor: EditorBuffers;
  write: EditorWrite;
  /** The judged target. */
  abs: string;
  content: string;
  /** The text the change was planned from (the editor must still hold it); null: a new file. */
  expected: Buffer | null;
  signal: AbortSignal;
  /** The project's effect lock (store/effect-lock.ts). */
  lockDir: string;
}

/**
 * Has the editor write the file; an error says why it was not (or not safely) written. The
 * value is undefined when the disk holds the text asked for, else what the editor saved.
 */
export async function writeThroughEditor(
  req: EditorWriteRequest,
): Promise<Result<EditorSavedOther | undefined>> {
  // Checks, write and verification with the project to itself: no command of any Scoot
  // session runs there meanwhile (store/effect-lock.ts).
  const hold = await holdForEditorWrite(req.lockDir, req.signal);
  if (!hold.ok) return hold;
  try {
    return await writeHeld(req);
  } finally {
    hold.value.release();
  }
}

/** The file's identity before the write, to tell afterwards whether the write reached it. */
function identity(abs: string): fs.BigIntStats | undefined {
  try {
    return fs.lstatSync(abs, { bigint: true });
  } catch {
    return undefined;
  }
}

/** Why the file at `abs` is not the one the editor was asked to write, or undefined. */
function notWhatWasWritten(
  abs: string,
  before: fs.BigIntStats | undefined,
  content: string,
): string | undefined {
  const after = identity(abs);
  if (!after) return `${REDIRECTED} (no file is at its path now): ${NOT_SAVED}`;
  if (!after.isFile()) return `${REDIRECTED} (its path now holds something else than a regular file)`;
  if (after.nlink !== 1n) return `${REDIRECTED} (the file now has ${after.nlink} names)`;
  const untouched =
    before !== undefined &&
    after.dev === before.dev &&
    after.ino === before.ino &&
    after.ctimeNs === before.ctimeNs &&
    after.mtimeNs === before.mtimeNs;
  if (!untouched) return undefined;
  // An editor may skip a save that changes nothing; only a change that is missing is a redirect.
  return savedText(abs)?.equals(Buffer.from(content, "utf8"))
    ? undefined
    : `${REDIRECTED} (the file at its path was not changed): ${NOT_SAVED}`;
}

/** What the file at `abs` holds (opened without following a link), or undefined. */
function savedText(abs: string): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(abs, OPEN_JUDGED_READ);
  } catch {
    return undefined;
  }
  try {
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A write the editor saved otherwise than asked (formatted on save): the text on disk now. */
export interface EditorSavedOther {
  saved: string;
}

async function writeHeld(req: EditorWriteRequest): Promise<Result<EditorSavedOther | undefined>> {
  const { abs } = req;
  if (req.expected !== null) {
    const why = await stillExpected(req.editor, abs, req.expected, req.signal);
    if (why !== undefined) return { ok: false, error: why };
  }
  if (!plainTarget(abs)) return { ok: false, error: OPENED_ELSEWHERE };
  const before = identity(abs);
  const watch = watchPath(abs, { withFile: false });
  if (!watch)
    return {
      ok: false,
      error:
        "its directories cannot be watched while the editor writes it (inotify watches used up? raise fs.inotify.max_user_watches)",
    };
  try {
    try {
      await req.write(abs, req.content, req.signal);
    } catch (e) {
      return { ok: false, error: `the editor answered: ${(e as Error)?.message ?? String(e)}` };
    }
    await drainWatchEvents();
    if (watch.changed() || !plainTarget(abs)) return { ok: false, error: PATH_CHANGED };
    const redirected = notWhatWasWritten(abs, before, req.content);
    if (redirected) return { ok: false, error: redirected };
    const saved = savedText(abs);
    if (saved === undefined || saved.equals(Buffer.from(req.content, "utf8")))
      return { ok: true, value: undefined };
    return { ok: true, value: { saved: saved.toString("utf8") } };
  } finally {
    watch.close();
  }
}
