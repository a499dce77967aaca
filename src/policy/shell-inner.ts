/**
 * Command lines a program runs as commands of their own: `sh -c` bodies and scripts fed to a
 * shell's stdin, `eval` and `watch` arguments, `trap` handlers and `alias` values. The shell
 * rules check each one as if it had been typed (shell-rules.ts).
 */
import type { SimpleCommand } from "./shell-lex.js";

/** Levels of `$(...)`, `sh -c`, `eval` ... we follow before refusing to guess. */
export const MAX_SHELL_NESTING = 8;

/** A shell given `-c` runs its operands; without it, here-documents and here-strings are its script. */
export function shellScripts(args: string[], s: SimpleCommand): string[] {
  const dashC = args.some((a) => /^-[a-z]*c[a-z]*$/.test(a));
  // `bash -o pipefail -c 'body' name`: every operand is checked as a command; only one is.
  if (dashC) return args.filter((a) => !a.startsWith("-") && !a.startsWith("+"));
  const scripts: string[] = [];
  for (const rd of s.redirs) {
    const body = rd.heredoc ? rd.heredoc.body : rd.op === "<<<" ? rd.target?.text : undefined;
    if (body !== undefined) scripts.push(body);
  }
  return scripts;
}

/**
 * eval joins its arguments; watch joins what follows its options (whose arguments we do not
 * know), so every suffix that starts with a non-option is checked.
 */
export function evaluatedLines(cmd: string, args: string[]): string[] {
  if (cmd === "eval") return [args.join(" ")];
  return args
    .flatMap((a, i) => (a.startsWith("-") ? [] : [args.slice(i).join(" ")]))
    .slice(0, MAX_SHELL_NESTING);
}

/** `trap HANDLER SIGNAL...`: the handler runs later in this shell. */
export function trapHandlers(args: string[]): string[] {
  const first = args[0];
  return first !== undefined && !first.startsWith("-") ? [first] : [];
}

/** `alias name=value`: the value runs wherever the name is typed. */
export function aliasValues(args: string[]): string[] {
  const values: string[] = [];
  for (const a of args) {
    const eq = a.indexOf("=");
    if (eq > 0) values.push(a.slice(eq + 1));
  }
  return values;
}
