/**
 * The gate judges what was opened (docs/safety.md "Safety model", "What was opened"): a file tool opens the
 * judged path first (no-follow at the last component, non-blocking), then this checks the
 * descriptor's real path — `/proc/self/fd/N`, what the kernel actually reached — against the
 * path the gate judged, and only then is anything read. A directory swapped for a symlink
 * after the decision therefore changes nothing: the descriptor names the outside file, which
 * is not the judged one, and the call is refused without a byte read.
 *
 * Writes: the temporary file's real directory is checked on its descriptor against the judged
 * parent before writing and again after the rename (src/core/atomic-write.ts).
 *
 * Without Linux /proc the real path of a descriptor cannot be asked for: the check is skipped
 * and today's order (judge, then open without following the last component) is all there is.
 */
import path from "node:path";
import { realPathOf } from "../core/fd-path.js";
import type { Result } from "../core/types.js";

export const OPENED_ELSEWHERE =
  "what was opened is not the path the policy gate judged (a directory on the way was swapped for a symlink after the decision); refused, nothing was read";

/**
 * The one judgement of an opened descriptor: its real path must be the judged path. (An
 * identity check of the opened file against protected files belongs here too, so every
 * opened descriptor passes it.)
 */
export function judgeOpened(fd: number, judged: string): Result<void> {
  const real = realPathOf(fd);
  if (real === undefined) return { ok: true, value: undefined };
  if (real !== judged) return { ok: false, error: OPENED_ELSEWHERE };
  return { ok: true, value: undefined };
}

/**
 * For a write to the judged `target`: the temporary file's descriptor must be in the judged
 * parent once created, and be the target itself after the rename. The writer removes the
 * file wherever it landed when this fails (src/core/atomic-write.ts).
 */
export function judgeWriteLanding(
  target: string,
): (fd: number, stage: "created" | "renamed") => Result<void> {
  const parent = path.dirname(target);
  return (fd, stage) => {
    const real = realPathOf(fd);
    if (real === undefined) return { ok: true, value: undefined };
    const ok = stage === "created" ? path.dirname(real) === parent : real === target;
    if (ok) return { ok: true, value: undefined };
    return {
      ok: false,
      error: `the file being written landed at ${real}, not in the judged directory ${parent} (a directory on the way was swapped for a symlink after the decision); it was removed`,
    };
  };
}
