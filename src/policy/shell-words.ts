/**
 * Shell words after the lexer: what plain variable assignments earlier in the same command
 * make of `$name`, and brace expansion (`/{usr,etc}`). Only what a rule needs to see the
 * real target is expanded; anything else stays as written.
 */

/** Brace expansion (`/{usr,etc}`) is followed up to this many words per word. */
const MAX_BRACE_WORDS = 64;
/** Levels of nested braces expanded, one level at a time. */
const MAX_BRACE_ROUNDS = 4;

/** `name=`, `name+=`, `name[i]=` at the start of a word. */
export const ASSIGNMENT_RE = /^([a-z_][a-z0-9_]*)(\[[^\]]*\])?\+?=/;
const DECLARERS: ReadonlySet<string> = new Set(["export", "declare", "local", "readonly", "typeset"]);
const BRACE_RE = /^(.*?)(?<!\$)\{([^{}]*,[^{}]*)\}(.*)$/s;

/** `$name` / `${name}` replaced by values assigned earlier in the same command. */
export function expandVars(text: string, vars: Map<string, string>): string {
  if (vars.size === 0 || !text.includes("$")) return text;
  return text.replace(/\$\{([a-z_][a-z0-9_]*)\}|\$([a-z_][a-z0-9_]*)/g, (m, a?: string, b?: string) => {
    const v = vars.get((a ?? b)!);
    return v ?? m;
  });
}

/** Applies known variables (re-splitting what they expand to) and brace expansion. */
export function expandWords(texts: string[], vars: Map<string, string>): string[] {
  const out: string[] = [];
  for (const t of texts) {
    const e = expandVars(t, vars);
    const parts = e === t ? [e] : e.split(/\s+/).filter((p) => p !== "");
    for (const p of parts) out.push(...braceExpand(p));
  }
  return out;
}

/** `/{usr,etc}` → `/usr /etc` (one level at a time, bounded). */
function braceExpand(word: string): string[] {
  let work = [word];
  for (let round = 0; round < MAX_BRACE_ROUNDS; round++) {
    let changed = false;
    const next: string[] = [];
    for (const w of work) {
      const m = BRACE_RE.exec(w);
      if (!m || w.startsWith("<(") || w.startsWith(">(")) {
        next.push(w);
        continue;
      }
      changed = true;
      for (const part of m[2]!.split(",")) next.push(`${m[1]}${part}${m[3]}`);
    }
    if (!changed || next.length > MAX_BRACE_WORDS) break;
    work = next;
  }
  return work;
}

/** Remembers `a=b` when it is the whole command (or after export/declare/...). */
export function recordAssignments(words: string[], vars: Map<string, string>): void {
  const all = words.every((w) => ASSIGNMENT_RE.test(w));
  const declared = words.length > 1 && DECLARERS.has(words[0]!);
  if (!all && !declared) return;
  for (const w of declared ? words.slice(1) : words) {
    const m = ASSIGNMENT_RE.exec(w);
    if (m && !m[2]) vars.set(m[1]!, w.slice(m[0].length));
  }
}
