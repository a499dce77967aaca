/**
 * A command as a plan names it, and whether a `bash` call is that command (docs/safety.md
 * "Plans as contracts"). A named command is not a prefix for anything:
 *
 * - It matches a call exactly: the same words when both are plain commands (tools/command-scope.ts
 *   plainWords; runs of spaces and tabs between words do not count), else the same text.
 * - A final ` *` word marks a prefix (`"npm test *"`): the plain command before it, followed by
 *   any words — but none of them a stretching option (policy/command-options.ts: `git diff *`
 *   never covers `git diff --output=README.md`).
 * - A prefix is refused when the plan is read, not silently narrowed, where it could not be
 *   harmless: a program whose extra words are files, code or hosts (`rm -f *`, `curl URL *`), a
 *   program alone or followed by an option (`git *` and `git --no-pager *` would cover
 *   `git checkout .`), a runner without what it runs (`npm run *`), a command that is not plain
 *   (`make 'all' *`).
 *
 * A lone `*` at the end is always this mark: a plan that means the shell's glob names the files
 * another way (`ls ./*`), which is then an exact command.
 */
import type { Result } from "../core/types.js";
import { findStretch, isOperandProgram, programName, type Stretch } from "../policy/command-options.js";
import { plainWords, RUN_NAME, RUNNER_SUBCOMMANDS } from "./command-scope.js";

/** The word that marks a plan's command as a prefix. */
export const PREFIX_MARK = "*";

/** A command a plan names, in the form a call is compared with. */
export interface PlanCommand {
  /** As the plan wrote it, trimmed: what a refusal quotes. */
  text: string;
  /** Its words when it is plain (for a prefix: the words before ` *`). */
  words?: readonly string[];
  /** A final ` *`: the words may be followed by more. */
  prefix: boolean;
}

/** A call's words when it is plain: tabs separate words as spaces do. */
function callWords(command: string): string[] | undefined {
  return plainWords(command.replace(/\t/g, " "));
}

/** Why a prefix may not be made of these words, or undefined when it may. */
function prefixRefusal(words: readonly string[]): string | undefined {
  const program = programName(words[0]!);
  if (isOperandProgram(program))
    return `${program}'s extra words are files, code or hosts, so a prefix of it could do anything; name each ${program} command exactly`;
  if (words.length === 1)
    return `a program alone would cover every one of its commands (a prefix "git *" covers "git clean -fdx"); name its subcommand too, as in "${words[0]} test *", or the command exactly`;
  if (words[1]!.startsWith("-"))
    return `the word after ${words[0]} is an option, so the extra words would choose its subcommand; name the subcommand, as in "${words[0]} test *", or the command exactly`;
  const runner = words.findIndex((w, i) => i > 0 && RUNNER_SUBCOMMANDS.has(w));
  if (runner > 0 && !(words.length > runner + 1 && RUN_NAME.test(words[runner + 1]!)))
    return `"${words.slice(0, runner + 1).join(" ")}" runs whatever the next word names; name it too, as in "${words.slice(0, runner + 1).join(" ")} build *"`;
  return undefined;
}

/** Reads one command of a plan; an error says why it cannot be a command of a plan. */
export function parsePlanCommand(raw: string): Result<PlanCommand> {
  const text = raw.trim();
  const all = text.split(/[ \t]+/);
  if (all.length > 0 && all[all.length - 1] === PREFIX_MARK) {
    const base = text.slice(0, text.length - PREFIX_MARK.length).trim();
    if (base === "")
      return { ok: false, error: 'is only " *": a prefix names a command before it, as in "npm test *"' };
    const words = plainWords(base);
    if (!words)
      return {
        ok: false,
        error: `ends with " *", but "${base}" is not a plain command (quotes, pipes, separators, globs, variables): only a plain command can be a prefix; name the command exactly (to mean the shell's glob, write it another way, such as ./*)`,
      };
    const refused = prefixRefusal(words);
    if (refused) return { ok: false, error: `ends with " *", but ${refused}` };
    return { ok: true, value: { text, words, prefix: true } };
  }
  const words = plainWords(text);
  return { ok: true, value: words ? { text, words, prefix: false } : { text, prefix: false } };
}

/** How a call compares with one named command. */
export type CommandMatch = { match: true } | { match: false; stretch?: Stretch & { named: string } };

/** Whether `command` is the named command, or one of the words a prefix allows (see the module comment). */
export function matchPlanCommand(named: PlanCommand, command: string): CommandMatch {
  const text = command.trim();
  const words = callWords(text);
  if (!named.prefix) {
    if (named.words && words)
      return { match: words.length === named.words.length && named.words.every((w, i) => words[i] === w) };
    return { match: named.text === text };
  }
  const base = named.words!;
  if (!words || words.length < base.length || !base.every((w, i) => words[i] === w)) return { match: false };
  const stretch = findStretch(words[0]!, words.slice(base.length));
  return stretch ? { match: false, stretch: { ...stretch, named: named.text } } : { match: true };
}
