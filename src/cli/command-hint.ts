/**
 * What `scoot` answers to command words it does not know. A goal typed without `-e`
 * (`scoot "fix the tests"`) is the common slip, so the answer shows the line that runs it;
 * a near miss of a command name (`scoot sesions`) gets that command instead (docs/commands.md).
 */

/** Edits (insert, delete, replace) that still count as a typo of a command name. */
const MAX_TYPO_EDITS = 2;

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const replace = prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, replace));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** The command a single mistyped word most likely meant, if any is close enough. */
export function closestCommand(word: string, commands: readonly string[]): string | undefined {
  let best: { name: string; edits: number } | undefined;
  for (const name of commands) {
    const edits = editDistance(word.toLowerCase(), name);
    // A short word is "close" to every short command; require most of it to match.
    if (edits > MAX_TYPO_EDITS || edits * 2 >= Math.max(word.length, name.length)) continue;
    if (!best || edits < best.edits) best = { name, edits };
  }
  return best?.name;
}

/** The goal as a shell would need it: double quotes unless the text needs single ones. */
export function shellQuoted(text: string): string {
  if (!/["\\$`!]/.test(text)) return `"${text}"`;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The one line for command words that name no command. `words` are the words as given;
 * `commands` the top-level command names.
 */
export function unknownCommandMessage(words: string[], commands: readonly string[]): string {
  const given = words.join(" ");
  const first = words[0] ?? "";
  if (commands.includes(first)) {
    return `scoot: unknown command "${given}" (see scoot ${first} --help)\n`;
  }
  const near = words.length === 1 ? closestCommand(first, commands) : undefined;
  if (near) return `scoot: unknown command "${given}"; did you mean scoot ${near}? (see scoot --help)\n`;
  return `scoot: unknown command "${given}"; did you mean scoot -e ${shellQuoted(given)}?\n`;
}

/**
 * `scoot help <word>` (or `scoot <word> --help`) for a word that names no command: the command it
 * most likely meant, or the commands there are.
 */
export function unknownHelpTopicMessage(word: string, commands: readonly string[]): string {
  const near = closestCommand(word, commands);
  if (near) return `scoot help: no command "${word}"; did you mean scoot help ${near}?\n`;
  return `scoot help: no command "${word}"; the commands: ${commands.join(", ")} (see scoot --help)\n`;
}
