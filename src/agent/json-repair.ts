/**
 * Repairs of a step object that failed the strict parse — only those with exactly one
 * meaning (docs/context.md "Reasoning models"): a raw newline, carriage return or tab inside a string
 * is escaped, a trailing comma before `}` or `]` is dropped, and `\_` (a Markdown habit) is
 * read as `_`. Nothing is ever added to close a truncated object: a step the model did not
 * finish must not become one Scoot finished for it.
 */

export type RepairName =
  | "escaped raw control characters in a string"
  | "dropped a trailing comma"
  | "read \\_ as _";

export interface Repaired {
  value: unknown;
  repairs: RepairName[];
}

const RAW_ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The repaired text and the repairs made; the text is unchanged when none applied. */
export function repairText(text: string): { text: string; repairs: RepairName[] } {
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

/** The parsed value after the unambiguous repairs, or undefined when it still does not parse. */
export function parseRepaired(text: string): Repaired | undefined {
  const { text: fixed, repairs } = repairText(text);
  if (repairs.length === 0) return undefined;
  try {
    return { value: JSON.parse(fixed) as unknown, repairs };
  } catch {
    return undefined;
  }
}
