/**
 * Repairs of a step object that failed the strict parse — only those with exactly one
 * meaning (docs/context.md "Reasoning models"): a raw newline, carriage return or tab inside a string
 * is escaped, a trailing comma before `}` or `]` is dropped, `\_` (a Markdown habit) is read as
 * `_`, a comment (`// …`, `/* … *\/`) between tokens is dropped, a literal `\n` (or `\t`, `\r`)
 * between tokens is white space, and a single-quoted string is a string. Nothing is ever added
 * to close a truncated object: a step the model did not finish must not become one Scoot
 * finished for it.
 */

export type RepairName =
  | "escaped raw control characters in a string"
  | "dropped a trailing comma"
  | "read \\_ as _"
  | "dropped a comment"
  | "read a literal \\n between tokens as white space"
  | "read single-quoted strings as strings";

/**
 * `singleQuotes: false`: a call's arguments (which run) are not read from Python's quoting —
 * its escapes are not JSON's, so a dict in arguments is corrected rather than guessed at.
 */
export interface RepairOptions {
  singleQuotes?: boolean;
}

export interface Repaired {
  value: unknown;
  repairs: RepairName[];
}

const RAW_ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The repaired text and the repairs made; the text is unchanged when none applied. */
export function repairText(text: string, opts: RepairOptions = {}): { text: string; repairs: RepairName[] } {
  const made = new Set<RepairName>();
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === "\\") {
        const next = text[i + 1];
        if (next === "_") {
          out += "_";
          made.add("read \\_ as _");
        } else {
          out += ch + (next ?? "");
        }
        i++;
        continue;
      }
      if (ch === '"') inString = false;
      const escaped = RAW_ESCAPES[ch];
      if (escaped) {
        out += escaped;
        made.add("escaped raw control characters in a string");
        continue;
      }
      out += ch;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
      continue;
    }
    if (ch === "'" && opts.singleQuotes !== false) {
      // A single-quoted string: the same text in double quotes (its own quotes escaped).
      const end = singleQuotedEnd(text, i);
      if (end === undefined) {
        out += ch;
        continue;
      }
      const inner = text
        .slice(i + 1, end)
        .replace(/\\'/g, "'")
        .replace(/(^|[^\\])"/g, '$1\\"');
      out += `"${inner}"`;
      made.add("read single-quoted strings as strings");
      i = end;
      continue;
    }
    if (ch === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) {
      const close = text[i + 1] === "/" ? text.indexOf("\n", i) : text.indexOf("*/", i + 2);
      if (close !== -1 || text[i + 1] === "/") {
        made.add("dropped a comment");
        i = close === -1 ? text.length : text[i + 1] === "/" ? close - 1 : close + 1;
        continue;
      }
    }
    if (ch === "\\" && (text[i + 1] === "n" || text[i + 1] === "t" || text[i + 1] === "r")) {
      made.add("read a literal \\n between tokens as white space");
      out += " ";
      i++;
      continue;
    }
    if (ch === ",") {
      // A comma followed (after white space) by a closing bracket has nothing to separate.
      const after = /^\s*([}\]])/.exec(text.slice(i + 1));
      if (after) {
        made.add("dropped a trailing comma");
        continue;
      }
    }
    out += ch;
  }
  return { text: out, repairs: [...made] };
}

/** Where a single-quoted string opened at `open` closes (an escaped quote does not close it). */
function singleQuotedEnd(text: string, open: number): number | undefined {
  for (let j = open + 1; j < text.length; j++) {
    const c = text[j];
    if (c === "\\") j++;
    else if (c === "\n") return undefined;
    else if (c === "'") return j;
  }
  return undefined;
}

/** The parsed value after the unambiguous repairs, or undefined when it still does not parse. */
export function parseRepaired(text: string, opts: RepairOptions = {}): Repaired | undefined {
  const { text: fixed, repairs } = repairText(text, opts);
  if (repairs.length === 0) return undefined;
  try {
    return { value: JSON.parse(fixed) as unknown, repairs };
  } catch {
    return undefined;
  }
}
