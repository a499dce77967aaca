/** How path segments are compared by the secret-name and persistence-place rules. */

/** Segment as a case- and width-folding filesystem might see it. */
export function foldSegment(seg: string): string {
  const folded = seg.normalize("NFKC").toLowerCase();
  if (folded === "." || folded === "..") return folded;
  // Windows drops trailing dots and spaces; `.env.` and `.ssh ` are the same entries there.
  const trimmed = folded.replace(/[. ]+$/, "");
  return trimmed === "" ? folded : trimmed;
}
