/**
 * The `diff` content block an editor shows for `file_write` / `file_edit` (docs/editors.md "Editors
 * (ACP)"): the whole file before and after, which is what editors render as a reviewable
 * diff. Computed when the gate has allowed the call and before the tool runs, so "before" is
 * the file as it is on disk. A file too large or not text is shown as the edit alone (the
 * replaced piece and its replacement), never read whole into the protocol.
 */
import fs from "node:fs";
import path from "node:path";
import type { Diff } from "@agentclientprotocol/sdk";
import { TOOLS_BY_NAME } from "../tools/registry.js";

/** Files larger than this are not sent whole to the editor; the edited piece is. */
export const DIFF_MAX_FILE_BYTES = 512 * 1024;

interface WriteInput {
  path: string;
  content: string;
}
interface EditInput {
  path: string;
  old: string;
  new: string;
}

/** The file's text, null when it does not exist, undefined when it cannot be shown. */
function currentText(abs: string): string | null | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined;
  }
  if (!st.isFile() || st.size > DIFF_MAX_FILE_BYTES) return undefined;
  try {
    const bytes = fs.readFileSync(abs);
    if (bytes.includes(0)) return undefined;
    return bytes.toString("utf8");
  } catch {
    return undefined;
  }
}

/** Where `old` occurs, counted the way file_edit counts (exactly once, or no whole-file diff). */
function singlePlace(text: string, old: string): number | undefined {
  const first = text.indexOf(old);
  if (first < 0) return undefined;
  return text.indexOf(old, first + 1) < 0 ? first : undefined;
}

/** The diff a write tool call is about to make, or undefined for any other call. */
export function editDiff(action: string, input: string, cwd: string): Diff | undefined {
  if (action !== "file_write" && action !== "file_edit") return undefined;
  const parsed = TOOLS_BY_NAME.get(action)?.parse(input);
  if (!parsed?.ok) return undefined;
  if (action === "file_write") {
    const w = parsed.value as WriteInput;
    const abs = path.resolve(cwd, w.path);
    const before = currentText(abs);
    // A file that exists but cannot be shown is not presented as a new one.
    if (before === undefined) return undefined;
    return { path: abs, oldText: before, newText: w.content };
  }
  const e = parsed.value as EditInput;
  const abs = path.resolve(cwd, e.path);
  const before = currentText(abs);
  const at = typeof before === "string" ? singlePlace(before, e.old) : undefined;
  if (typeof before !== "string" || at === undefined) return { path: abs, oldText: e.old, newText: e.new };
  return {
    path: abs,
    oldText: before,
    newText: before.slice(0, at) + e.new + before.slice(at + e.old.length),
  };
}
