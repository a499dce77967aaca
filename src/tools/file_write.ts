/**
 * `file_write {path, content}`: create or fully overwrite a file, atomically.
 *
 * Missing parent directories are created. An existing file keeps its permission bits (and,
 * when Scoot runs privileged, its owner). The tool writes the gate's target: the path with
 * every symlink already followed (so a link stays a link and its target is what was judged
 * and written). A symlink found at the final component now appeared after the decision and
 * is refused; the rename that replaces the file never follows one (docs/safety.md "One call pipeline").
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fsErrorText } from "../core/fs-errors.js";
import type { Result } from "../core/types.js";
import { CLIP } from "./clip.js";
import { declareInput, type InputOf, str } from "./declare.js";
import { fileScope } from "./file-scope.js";
import { judgedPath, refuseProtected, SWAPPED_FOR_SYMLINK } from "./fs-util.js";
import { savedOtherNote, writeFailure, writeJudgedFile } from "./judged-write.js";
import { done, failed } from "./result.js";
import type { Tool } from "./types.js";

/** The input, declared once: type, validation, prompt shape and example. */
const INPUT = declareInput("file_write", {
  path: str('"..."', { example: '"notes.txt"' }),
  content: str('"..."', { nonEmpty: false, example: '"full new contents"' }),
});
export type FileWriteInput = InputOf<typeof INPUT.fields>;

export const fileWriteTool: Tool<FileWriteInput> = {
  name: "file_write",
  describe:
    "Create a file or replace its whole content (parent directories are created). To change part of a file, use file_edit.",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.file_read,

  parse: INPUT.parse,

  effects(input) {
    return { capability: "write", writePaths: [input.path] };
  },

  present: (input) => ({
    title: `Write ${input.path}`,
    keyArgument: input.path,
    locations: [{ path: input.path }],
  }),

  approvalScope: fileScope("writes to"),

  proposedContent: (input) => ({ ok: true, value: input.content }),

  async run(input, ctx, judged) {
    const shown = JSON.stringify(input.path);
    const p = judgedPath(judged.write, "file_write");
    if (!p.ok) return failed(p.error);
    const target = inspectWriteTarget(p.value);
    if (!target.ok) return failed(`file_write: cannot write ${shown}: ${target.error}`);
    const { abs, existing } = target.value;
    const refused = existing ? refuseProtected(ctx, existing, "file_write", shown) : undefined;
    if (refused) return failed(refused);
    if (existing?.isDirectory()) return failed(`file_write: ${shown} is a directory`);
    if (existing && !existing.isFile()) return failed(`file_write: ${shown} is not a regular file`);
    try {
      fs.mkdirSync(path.dirname(abs), { recursive: true });
    } catch (e) {
      return failed(`file_write: cannot create the parent directory of ${shown}: ${fsErrorText(e)}`);
    }
    const planned = ctx.change;
    const written = await writeJudgedFile(
      ctx,
      abs,
      planned?.after ?? input.content,
      existing,
      planned ? (planned.base ?? planned.before) : null,
    );
    if (!written.ok) return failed(writeFailure("file_write", shown, written.error));
    const how = `${existing ? "replaced" : "created"}${written.value.byEditor ? ", through the editor" : ""}`;
    return done(`wrote ${written.value.bytes} bytes to ${shown} (${how}${savedOtherNote(written.value)})`);
  },
};

/**
 * The judged write target and its current stats, if it exists. It was resolved by the gate,
 * so a symlink here was swapped in after the decision: refused, never followed.
 */
export function inspectWriteTarget(abs: string): Result<{ abs: string; existing?: fs.Stats }> {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, value: { abs } };
    return { ok: false, error: fsErrorText(e) };
  }
  if (st.isSymbolicLink()) return { ok: false, error: SWAPPED_FOR_SYMLINK };
  return { ok: true, value: { abs, existing: st } };
}
