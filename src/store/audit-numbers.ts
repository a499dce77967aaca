/**
 * Range checks for every number the audit writer and `audit verify` read back from the logs
 * (generation numbers in file names and the `.gen` sidecar, gap bounds). Anyone who can
 * write to logs/ can put any number there; a number outside these bounds was not written by
 * Scoot, so it is reported (verify) or ignored (the writer), never looped over or obeyed.
 * See docs/sessions.md "Sessions and audit" and test/store/audit-tamper.test.ts.
 */

/** One rotation per max_file_bytes of records: a billion is far beyond any real log. */
export const MAX_GENERATION = 1_000_000_000;
/** The writer records one evicted generation per gap record; a few more is still plausible. */
export const MAX_GAP_SPAN = 10_000;
/** How many taken names a rotation steps over before it stops looking (link() EEXIST). */
export const MAX_LINK_ATTEMPTS = 1_000;

export function isGenerationNumber(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 1 && n <= MAX_GENERATION;
}

/** Why a gap record's bounds cannot be Scoot's, or undefined when they can. */
export function gapBoundsProblem(from: unknown, to: unknown): string | undefined {
  if (!isGenerationNumber(from) || !isGenerationNumber(to))
    return `gap_from=${String(from)} gap_to=${String(to)} is outside 1..${MAX_GENERATION}`;
  if (to < from) return `gap_to=${to} is below gap_from=${from}`;
  if (to - from + 1 > MAX_GAP_SPAN) return `gap ${from}..${to} spans more than ${MAX_GAP_SPAN} generations`;
  return undefined;
}
