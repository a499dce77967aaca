/**
 * The approval scope of a shell command (docs/safety.md "Approval scopes"): what one "always"
 * on a `bash` call covers, and what a `[[tools.rules]]` match for bash names.
 *
 * - A plain command (one program, plain arguments: see PLAIN_COMMAND) whose second word is a
 *   subcommand word: the program and that word. `git status --short` has the scope
 *   `git status`; `git clean -fdx` has `git clean`, another scope.
 * - When that subcommand runs something it names (`npm run build`, `pnpm exec tsc`, `uv run
 *   pytest`): the program, the subcommand and that name, so `npm run lint` never covers
 *   `npm run deploy`; without a plain name there (`npm run`, `npm run --silent x`), the whole
 *   command.
 * - Unless its extra words (those after the scope's) hold an option that writes, deletes, runs
 *   something, sends data or acts elsewhere (policy/command-options.ts findStretch, the table a
 *   plan's ` *` prefix is checked against): then the whole command. `git diff --output=README.md`
 *   is not in `git diff`, `git branch -D x` not in `git branch`, for every program alike. The
 *   scope is read from the new call, so an "always" given to `git diff` never reaches it.
 * - A plain command of one word: that word, which covers that command alone (`ls`, never
 *   `ls -la`): a scope of a bare program would let an "always" on `git` cover `git clean -fdx`.
 * - A plain command whose second word is an option (`ls -la`, `git -C ../x clean`), a path or
 *   another operand (`cat notes.txt`), or whose program takes operands instead of subcommands
 *   (`rm build`, `sudo make`, `ssh host`: policy/command-options.ts OPERAND_PROGRAMS): the whole
 *   command, its words joined by one space.
 * - Anything else (separators, pipes, substitutions, redirections, quotes, escapes, a leading
 *   `VAR=value`): the exact command text, so `npm test; curl … | sh` never rides on an "always"
 *   given to `npm test` (test/tools/command-scope.test.ts has the attacks).
 *
 * A scope covers a later command exactly when that command's own scope is the same text: a
 * later command whose words begin with `git status` and that is itself plain.
 */
import path from "node:path";
import type { Result } from "../core/types.js";
import { findStretch, isOperandProgram } from "../policy/command-options.js";
import type { ApprovalScope } from "./types.js";

/**
 * A command that is one plain program with plain arguments: no separators, pipes,
 * substitutions, redirections, quotes, escapes, globs, braces, tabs or variable expansion.
 */
const PLAIN_COMMAND = /^[A-Za-z0-9 _\-./=:,@%+]+$/;
/** A program word: no `=` (a leading `VAR=value` changes how the program runs). */
const PLAIN_PROGRAM = /^[A-Za-z0-9_\-./+]+$/;
/** A subcommand word: a bare name (`status`, `test`, `run-script`), never an option or a path. */
const SUBCOMMAND_WORD = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** Subcommands that run what their next word names (a script, a package's program, a file). */
export const RUNNER_SUBCOMMANDS: ReadonlySet<string> = new Set(["run", "run-script", "exec", "x", "dlx"]);
/** What a runner subcommand names: a script or program name (`test:unit`, `main.go`), never an option or a path. */
export const RUN_NAME = /^[A-Za-z0-9][A-Za-z0-9_:.+-]*$/;

/** The words of a plain command, or undefined when it is not one (also a plan's commands', tools/plan-command.ts). */
export function plainWords(command: string): string[] | undefined {
  const trimmed = command.trim();
  if (!PLAIN_COMMAND.test(trimmed)) return undefined;
  const words = trimmed.split(/ +/);
  return PLAIN_PROGRAM.test(words[0]!) ? words : undefined;
}

/**
 * How many leading words of a plain command its scope keeps, covering every plain command that
 * begins with them (2: program and subcommand, 3: and what a runner names); 0: the whole
 * command, covering that command alone.
 */
function coveredWords(words: readonly string[]): number {
  if (words.length < 2 || !SUBCOMMAND_WORD.test(words[1]!) || isOperandProgram(words[0]!)) return 0;
  const kept = !RUNNER_SUBCOMMANDS.has(words[1]!) ? 2 : words.length >= 3 && RUN_NAME.test(words[2]!) ? 3 : 0;
  // A stretching option among the extra words: this command is not one of the scope's.
  return kept > 0 && findStretch(words[0]!, words.slice(kept)) ? 0 : kept;
}

/** The scope of one command (see the module comment). */
export function commandScope(command: string): string {
  const words = plainWords(command);
  if (!words) return command;
  const kept = coveredWords(words);
  return (kept > 0 ? words.slice(0, kept) : words).join(" ");
}

/**
 * The words of any command text as a narrowing rule compares them: quotes and backslashes
 * dropped (`g"it" cl\ean` is `git clean` to the shell), split at everything a word cannot hold,
 * lower-cased. A tripwire for deny and ask rules, not a shell parser: the gate and the sandbox
 * are the walls.
 */
function looseWords(text: string): string[] {
  return text
    .replace(/['"\\]/g, "")
    .split(/[^A-Za-z0-9_\-./=:,@%+]+/)
    .filter((w) => w !== "")
    .map((w) => w.toLowerCase());
}

/** A command word stands for a rule word itself or as a program's path (`/bin/rm` for `rm`). */
function sameWord(commandWord: string, ruleWord: string): boolean {
  return commandWord === ruleWord || (!ruleWord.includes("/") && path.basename(commandWord) === ruleWord);
}

/** Whether every word of `rule` appears in `command`, in that order. */
function wordsInOrder(command: string, rule: string): boolean {
  const want = looseWords(rule);
  let next = 0;
  for (const word of looseWords(command)) {
    if (next < want.length && sameWord(word, want[next]!)) next++;
  }
  return next === want.length;
}

function parseCommandMatch(match: string): Result<string> {
  if (looseWords(match).length === 0)
    return { ok: false, error: `"${match}" names no command; write a command such as "npm test"` };
  const words = plainWords(match);
  // Not plain: the exact command as written, matched only by that very text.
  if (!words) return { ok: true, value: match };
  const written = words.join(" ");
  const scope = commandScope(match);
  if (scope !== written) {
    return {
      ok: false,
      error: `"${match}" is not a scope: a plain command's scope is its program and first subcommand word; write "${scope}" (it covers "${written}" too)`,
    };
  }
  return { ok: true, value: scope };
}

export const COMMAND_SCOPE: ApprovalScope<string> = {
  of: (command) => commandScope(command),
  parseMatch: parseCommandMatch,
  example: "npm test",
  meaning(scope) {
    const words = plainWords(scope);
    return words && coveredWords(words) === words.length
      ? `every "${scope} …" command`
      : "only this exact command";
  },
  narrowedBy: (command, rule) => wordsInOrder(command, rule),
};
