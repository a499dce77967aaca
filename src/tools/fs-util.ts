/**
 * Small filesystem helpers shared by the file tools: where a path points, how an fs error
 * reads to the model, and whether bytes look like text.
 */
import * as fs from "node:fs";
import { fsErrorText } from "../core/fs-errors.js";
import type { Result } from "../core/types.js";
import { isProtectedIdentity, protectedIdentityText } from "../policy/identity.js";
import { judgeOpened } from "../policy/opened.js";
import type { ToolContext } from "./types.js";

/** How many leading bytes decide "binary" (the same window git and grep use, roughly). */
export const BINARY_SNIFF_BYTES = 8 * 1024;

/**
 * The path the gate judged for a call, which is the only one a file tool may open
 * (docs/safety.md "One call pipeline"). Missing only when a tool is run outside the pipeline.
 */
export function judgedPath(paths: readonly string[], tool: string): Result<string> {
  const p = paths[0];
  if (p === undefined) {
    return { ok: false, error: `${tool}: no path was judged by the policy gate; the call did not run` };
  }
  return { ok: true, value: p };
}

/**
 * Open flags for a judged path: the gate already followed every symlink, so one found at
 * the final component now was put there after the decision; refuse it instead of following.
 * O_NONBLOCK keeps a FIFO from blocking the open (it is refused by type afterwards).
 */
export const OPEN_JUDGED_READ = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/** The message for ELOOP on a judged path: the file changed under us. */
export const SWAPPED_FOR_SYMLINK =
  "it was replaced by a symlink after the policy check; not followed (try again)";

/** Why opening a judged path failed, for "cannot read …: <why>". */
export function openFailure(e: unknown): string {
  return (e as NodeJS.ErrnoException).code === "ELOOP" ? SWAPPED_FOR_SYMLINK : fsErrorText(e);
}

/** How a reading tool words the refusals of `checkOpenedFile` (the tool's name leads each). */
export interface OpenedWords {
  /** What follows "<shown> is a directory; ". */
  directory: string;
  /** What follows "<shown> is not a regular file" (a FIFO or device would block or never end). */
  special?: string;
  /** How the path is shown in the protected-file denial, when not as `shown`. */
  protectedShown?: string;
}

/**
 * The checks a reading tool makes on the descriptor it opened for its judged path, in order:
 * the gate judges what was opened (a swap after the decision is caught here, unread), a
 * protected file under another name is refused, and only a regular file goes on. The stats are
 * the descriptor's, so nothing can change between the check and the read. A refusal is the
 * tool's message, its name first.
 */
export function checkOpenedFile(
  fd: number,
  judged: string,
  ctx: Pick<ToolContext, "services">,
  tool: string,
  shown: string,
  words: OpenedWords,
): Result<fs.Stats> {
  const opened = judgeOpened(fd, judged);
  if (!opened.ok) return { ok: false, error: `${tool}: cannot read ${shown}: ${opened.error}` };
  const st = fs.fstatSync(fd);
  const refused = refuseProtected(ctx, st, tool, words.protectedShown ?? shown);
  if (refused) return { ok: false, error: refused };
  if (st.isDirectory()) return { ok: false, error: `${tool}: ${shown} is a directory; ${words.directory}` };
  if (!st.isFile())
    return { ok: false, error: `${tool}: ${shown} is not a regular file${words.special ?? ""}` };
  return { ok: true, value: st };
}

/**
 * True when the bytes look binary: a NUL byte, or a sequence that is not valid UTF-8. A multi-byte
 * character cut off at the end of the sample is fine (the sample is usually a prefix).
 */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.includes(0)) return true;
  try {
    // `stream: true` tolerates an incomplete final sequence; fatal throws on an invalid one.
    new TextDecoder("utf-8", { fatal: true }).decode(sample, { stream: true });
    return false;
  } catch {
    return true;
  }
}

/** Reads up to `n` bytes from the start of an open file. */
export function readPrefix(fd: number, n: number): Buffer {
  const buf = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    const r = fs.readSync(fd, buf, got, n - got, got);
    if (r === 0) break;
    got += r;
  }
  return buf.subarray(0, got);
}

/** `stat` without throwing: the stats, or the error phrase. */
export function statPath(
  abs: string,
): { ok: true; value: fs.Stats } | { ok: false; error: string; code?: string } {
  try {
    return { ok: true, value: fs.statSync(abs) };
  } catch (e) {
    return { ok: false, error: fsErrorText(e), code: (e as NodeJS.ErrnoException).code };
  }
}

/** "1.5 MiB"-style size for messages. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * The refusal when what a file tool opened (its fstat/lstat) is a protected file under
 * another name (renamed, moved, hard-linked); undefined when it may go on.
 */
export function refuseProtected(
  ctx: Pick<ToolContext, "services">,
  st: { dev: number | bigint; ino: number | bigint },
  tool: string,
  shown: string,
): string | undefined {
  const ids = ctx.services.identities;
  if (!ids || !isProtectedIdentity(ids, st)) return undefined;
  return protectedIdentityText(tool, shown);
}
