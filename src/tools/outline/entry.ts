/** One line of an outline and the text rules every outliner shares. */

/** Longest signature shown; a longer one ends in an ellipsis. */
export const MAX_SIGNATURE_CHARS = 200;

export interface OutlineEntry {
  /** 1-based line of the definition or heading. */
  line: number;
  /** Nesting level: 0 at top, 1 for members of a class/impl, and so on. */
  depth: number;
  text: string;
}

/** What an outliner found: the first `limit` entries and how many there were in all. */
export interface Collected {
  entries: OutlineEntry[];
  total: number;
}

export interface Collector extends Collected {
  /** Counts one entry; builds it only while under the limit. */
  add(entry: () => OutlineEntry): void;
}

/** Keeps the first `limit` entries while counting all of them. */
export function collector(limit: number): Collector {
  const out: Collector = {
    entries: [],
    total: 0,
    add(entry) {
      out.total += 1;
      // Past the cap only the count matters, so the entry (and its signature) is never built.
      if (out.entries.length < limit) out.entries.push(entry());
    },
  };
  return out;
}

/**
 * One-line form of a signature: whitespace collapsed, padding inside brackets and a
 * trailing comma before a closing bracket dropped (formatters spread parameters over
 * lines), then the body opener (`{`, `:`, ` =`, `;`, a where-clause `,`) and an optional language tail
 * (Ruby/Lua `end`) removed, and the result clipped.
 */
export function tidySignature(raw: string, tail?: RegExp): string {
  let s = raw
    .replace(/\s+/g, " ")
    .trim()
    .replace(/([([]) /g, "$1")
    .replace(/ ([)\]])/g, "$1")
    .replace(/,([)\]])/g, "$1");
  if (tail) s = s.replace(tail, "");
  for (;;) {
    const next = s.replace(/(?:\s*[{:;,]|\s+=)\s*$/, "");
    if (next === s) break;
    s = next;
  }
  return clipSignature(s.trim());
}

export function clipSignature(s: string): string {
  if (s.length <= MAX_SIGNATURE_CHARS) return s;
  let cut = MAX_SIGNATURE_CHARS - 1;
  // Never split a surrogate pair.
  const code = s.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return s.slice(0, cut) + "…";
}
