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

/** Line and column (1-based) of an offset in the text. */
export function lineColumn(text: string, at: number): string {
  const before = text.slice(0, at);
  const line = before.split("\n").length;
  return `line ${line}, column ${at - before.lastIndexOf("\n")}`;
}

/**
 * The first key that appears twice in one object of a JSON text that parses, with its offset;
 * undefined when every object's keys are distinct. One linear pass over the text.
 */
export function firstDuplicateKey(text: string): { key: string; at: number } | undefined {
  // One entry per open container: the keys seen so far (objects) or null (arrays).
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      const top = stack.at(-1);
      if (top && expectKey) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        if (top.has(key)) return { key, at: start };
        top.add(key);
        expectKey = false;
      }
    } else if (ch === "{") {
      stack.push(new Set());
      expectKey = true;
    } else if (ch === "[") {
      stack.push(null);
      expectKey = false;
    } else if (ch === "}" || ch === "]") {
      stack.pop();
      expectKey = false;
    } else if (ch === ",") {
      expectKey = stack.at(-1) instanceof Set;
    }
  }
  return undefined;
}

/** The correction for a duplicated key, naming it and where. */
export function duplicateKeyError(text: string, dup: { key: string; at: number }, what: string): string {
  return `${what} has the key ${JSON.stringify(dup.key.slice(0, 40))} twice (the second at ${lineColumn(text, dup.at)}); nothing was run: send each key once`;
}
