/**
 * Brace matching over model text that respects JSON strings: the one walk behind finding a
 * step's objects in a reply, telling when a streamed reply has closed its object, and finding a
 * thinking block's closing tag. A quote opens a string only inside braces, so the quotes of
 * prose around a step do not hide its braces.
 */

/** What a character outside any JSON string is to the walk. */
export type BraceEvent = "open" | "close" | "other";

/**
 * Calls `visit` for each character from `from` on that is outside a JSON string, with the
 * brace depth after it; `visit` returns true to stop there. Returns the depth where the walk
 * ended.
 */
export function walkBraces(
  text: string,
  from: number,
  visit: (index: number, event: BraceEvent, depth: number) => boolean | undefined,
): number {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    let event: BraceEvent = "other";
    if (ch === '"' && depth > 0) inString = true;
    else if (ch === "{") {
      depth++;
      event = "open";
    } else if (ch === "}" && depth > 0) {
      depth--;
      event = "close";
    }
    if (!inString && visit(i, event, depth)) break;
  }
  return depth;
}
