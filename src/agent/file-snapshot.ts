/**
 * The content of the file a file tool is about to change, read before and after the call so
 * the change can be shown as a diff (README "The live view"). Bounded: a file over
 * SNAPSHOT_MAX_BYTES, a binary file or one that cannot be read gets no diff.
 */
import fs from "node:fs";
import type { Ready } from "./calls.js";

/** Files larger than this are not diffed. */
export const SNAPSHOT_MAX_BYTES = 1024 * 1024;
/** The tools whose single judged write target is the file they change. */
const FILE_TOOLS = new Set(["file_write", "file_edit"]);

/** The judged path a file tool will change, or undefined for any other call. */
export function changedFile(ready: Ready): string | undefined {
  if (!FILE_TOOLS.has(ready.tool.name)) return undefined;
  return ready.target.write.length === 1 ? ready.target.write[0] : undefined;
}

/** The file's text; null when it does not exist; undefined when it cannot be diffed. */
export function snapshotForDiff(file: string): string | null | undefined {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  let fd: number;
  try {
    // Never follows a symlink or blocks on a FIFO planted at the path.
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > SNAPSHOT_MAX_BYTES) return undefined;
    const bytes = fs.readFileSync(fd);
    return bytes.includes(0) ? undefined : bytes.toString("utf8");
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}
