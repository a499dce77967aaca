/**
 * `file_edit {path, old, new}`: replace one exact piece of text, atomically.
 *
 * `old` must occur exactly once. Occurrences are counted overlapping ("aa" occurs twice in
 * "aaa"), because an overlapping second place makes the edit just as ambiguous. When `old`
 * is written with "\n" but the file uses CRLF line ends, the CRLF form is tried too.
 */
import * as fs from "node:fs";
import { fsErrorText } from "../core/fs-errors.js";
import type { Result } from "../core/types.js";
import { judgeOpened } from "../policy/opened.js";
import { CLIP } from "./clip.js";
import { declareInput, type InputOf, str } from "./declare.js";
import { inspectWriteTarget } from "./file_write.js";
import { fileScope } from "./file-scope.js";
import {
  formatBytes,
  judgedPath,
  looksBinary,
  OPEN_JUDGED_READ,
  refuseProtected,
  SWAPPED_FOR_SYMLINK,
} from "./fs-util.js";
import { savedOtherNote, writeFailure, writeJudgedFile } from "./judged-write.js";
import { done, failed } from "./result.js";
import type { Tool } from "./types.js";

/** Largest file file_edit rewrites; bigger files are better changed by a command. */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;
/** How many line numbers an ambiguity error lists. */
const MAX_LISTED_PLACES = 10;

/** The input, declared once: type, validation, prompt shape and example. */
const INPUT = declareInput(
  "file_edit",
  {
    path: str('"..."', { example: '"README.md"' }),
    old: str('"exact unique text"', { nonEmpty: false }),
    new: str('"replacement text"', { nonEmpty: false, example: '"replacement"' }),
  },
  (input) => {
    // Blank text is legal to replace, but an empty `old` matches everywhere.
    if (input.old === "") return { ok: false, error: 'file_edit: "old" must be a non-empty string' };
    if (input.new === input.old) {
      return { ok: false, error: 'file_edit: "old" and "new" are identical, so there is nothing to change' };
    }
    return { ok: true, value: input };
  },
);
export type FileEditInput = InputOf<typeof INPUT.fields>;

export const fileEditTool: Tool<FileEditInput> = {
  name: "file_edit",
  describe:
    "Replace one exact piece of text in a file. `old` must occur exactly once (copy it from file_read, with enough context to be unique); `new` may be empty to delete.",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.file_read,
  preferOverShell: true,

  parse: INPUT.parse,

  effects(input) {
    return { capability: "write", writePaths: [input.path] };
  },

  present: (input) => ({
    title: `Edit ${input.path}`,
    keyArgument: input.path,
    locations: [{ path: input.path }],
  }),

  approvalScope: fileScope("edits of"),

  proposedContent(input, before) {
    const shown = JSON.stringify(input.path);
    if (before === null) return { ok: false, error: missingText(shown) };
    const edited = editedText(before, input, shown);
    return edited.ok ? { ok: true, value: edited.value.updated } : edited;
  },

  async run(input, ctx, judged) {
    const shown = JSON.stringify(input.path);
    const p = judgedPath(judged.write, "file_edit");
    if (!p.ok) return failed(p.error);
    const target = inspectWriteTarget(p.value);
    if (!target.ok) return failed(`file_edit: cannot edit ${shown}: ${target.error}`);
    const { abs, existing } = target.value;
    if (!existing) return failed(missingText(shown));
    if (existing.isDirectory()) return failed(`file_edit: ${shown} is a directory`);
    if (!existing.isFile()) return failed(`file_edit: ${shown} is not a regular file`);
    if (existing.size > MAX_EDIT_BYTES) {
      return failed(
        `file_edit: ${shown} is ${formatBytes(existing.size)}, over the ${formatBytes(MAX_EDIT_BYTES)} edit limit`,
      );
    }
    let bytes: Buffer;
    try {
      // O_NOFOLLOW: the judged file, not a symlink put in its place since the decision.
      const fd = fs.openSync(abs, OPEN_JUDGED_READ);
      try {
        const opened = judgeOpened(fd, abs);
        if (!opened.ok) return failed(`file_edit: cannot read ${shown}: ${opened.error}`);
        const refused = refuseProtected(ctx, fs.fstatSync(fd), "file_edit", shown);
        if (refused) return failed(refused);
        bytes = fs.readFileSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === "ELOOP" ? SWAPPED_FOR_SYMLINK : fsErrorText(e);
      return failed(`file_edit: cannot read ${shown}: ${why}`);
    }
    // What was approved is what is written: the file must still hold what the plan was made from.
    if (ctx.change && (ctx.change.before === null || !bytes.equals(ctx.change.before)))
      return failed(`file_edit: ${shown} changed after this call was prepared; read it again and retry`);
    // The text the edit applies to: the editor's buffer when the plan was made from it.
    const base = ctx.change?.base ?? bytes;
    const edited = editedText(base, input, shown);
    if (!edited.ok) return failed(edited.error);
    const { text, updated, plan } = edited.value;
    const { at, old, replacement, crlf } = plan;
    const written = await writeJudgedFile(ctx, abs, ctx.change?.after ?? updated, existing, base);
    if (!written.ok) return failed(writeFailure("file_edit", shown, written.error));
    const line = lineOf(text, at);
    const before = old.split("\n").length;
    const after = replacement.split("\n").length;
    const note = crlf ? " (matched using the file's CRLF line ends)" : "";
    const how = written.value.byEditor ? `, through the editor${savedOtherNote(written.value)}` : "";
    return done(
      `edited ${shown}: replaced 1 occurrence at line ${line} (${before} line${before === 1 ? "" : "s"} -> ${after})${note}${how}`,
    );
  },
};

function missingText(shown: string): string {
  return `file_edit: ${shown} does not exist; use file_write to create it`;
}

/** The file's text after the edit, or the observation of an edit that cannot be made. */
function editedText(
  bytes: Buffer,
  input: FileEditInput,
  shown: string,
): Result<{ text: string; updated: string; plan: EditPlan }> {
  if (looksBinary(bytes))
    return { ok: false, error: `file_edit: ${shown} is a binary file, ${bytes.length} bytes; not edited` };
  const text = bytes.toString("utf8");
  const plan = planEdit(text, input.old, input.new);
  if (!plan.ok)
    return {
      ok: false,
      error: `file_edit: ${plan.error.replace("$FILE", () => shown)}; nothing was changed`,
    };
  const { at, old, replacement } = plan.value;
  return {
    ok: true,
    value: { text, updated: text.slice(0, at) + replacement + text.slice(at + old.length), plan: plan.value },
  };
}

interface EditPlan {
  at: number;
  old: string;
  replacement: string;
  crlf: boolean;
}

/** Where the single occurrence of `old` is, or why there is not exactly one. `$FILE` marks the file name. */
export function planEdit(text: string, old: string, replacement: string): Result<EditPlan> {
  let places = occurrences(text, old);
  let crlf = false;
  if (places.count === 0 && text.includes("\r\n") && old.includes("\n") && !old.includes("\r\n")) {
    const oldCrlf = old.replace(/\n/g, "\r\n");
    const crlfPlaces = occurrences(text, oldCrlf);
    if (crlfPlaces.count > 0) {
      places = crlfPlaces;
      old = oldCrlf;
      replacement = replacement.replace(/\r?\n/g, "\r\n");
      crlf = true;
    }
  }
  if (places.count === 0) {
    return {
      ok: false,
      error:
        '"old" was not found in $FILE (0 occurrences); file_read it and copy the exact text, whitespace included',
    };
  }
  if (places.count > 1) {
    const lines = places.first.map((p) => lineOf(text, p));
    const more = places.count > places.first.length ? ", ..." : "";
    return {
      ok: false,
      error: `"old" occurs ${places.count} times in $FILE (at lines ${lines.join(", ")}${more}); include more surrounding text so it matches exactly once`,
    };
  }
  return { ok: true, value: { at: places.first[0]!, old, replacement, crlf } };
}

/** How often `needle` occurs (overlapping ones included) and where the first few start. */
function occurrences(text: string, needle: string): { count: number; first: number[] } {
  const first: number[] = [];
  let count = 0;
  let i = text.indexOf(needle);
  while (i !== -1) {
    count++;
    if (first.length < MAX_LISTED_PLACES) first.push(i);
    i = text.indexOf(needle, i + 1);
  }
  return { count, first };
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  let i = text.indexOf("\n");
  while (i !== -1 && i < offset) {
    line++;
    i = text.indexOf("\n", i + 1);
  }
  return line;
}
