/**
 * Shell rules for the `bash` action (docs/safety.md "Policy modes").
 *
 * `readonly` denies every command, `unrestricted` allows every non-blank one, and `guarded`
 * runs a *tripwire*: a tight list of catastrophic commands, checked after the command is
 * lexed the way a shell would see it (lower-cased; quotes, escapes and `$'..'` removed; every
 * `;`, `&&`, `||`, `|`, newline, group and substitution looked into; `sudo`/`env`/`nohup`/...
 * prefixes stripped; `sh -c`, `eval`, `su -c`, `env -S`, `find -exec`, `xargs`, `trap` and
 * `alias` bodies checked as commands). It is a tripwire against accidents and obvious
 * model mischief, not a sandbox: code that builds a command at run time
 * (`python -c`, base64 into a variable) is out of its reach by design.
 *
 * Deliberate choices (ordinary work must stay allowed):
 * - Words are checked in command position only: `echo "shut down the service"`,
 *   `grep -r reboot docs/`, `man shutdown` and `git commit -m "rm -rf /"` are allowed.
 *   `shutdown --help` is denied: the tripwire does not read option semantics.
 * - Recursive deletes are denied only for targets that wipe a whole tree we care about:
 *   `/` and top-level system directories (and globs directly under them), a home directory
 *   (`~`, `~user`, `$HOME`, `/home/<name>`), and the project itself (`.`, `..`, `*`, `./*`,
 *   `$PWD`, `$(pwd)`). A target that becomes one of those when its variables or
 *   substitutions are empty (`$DIR/`, `"$(get)"/*`) is denied too: the classic
 *   empty-variable accident. `find -delete` counts from / or a home directory, and from the
 *   project only when nothing narrows it (`find . -delete`, not `find . -name '*.o' -delete`).
 * - Writes onto `/dev/*` are denied except the harmless devices in SAFE_DEVICES (shell-places.ts).
 * - Text that merely *contains* a fork bomb (e.g. `printf ':(){ :|:& };:'`) is denied: the
 *   fork-bomb check reads the whole normalised command, quotes removed.
 * - A command the lexer cannot read (unterminated quote or substitution) is denied: a real
 *   shell would refuse it too.
 *
 * This file walks the command (lexing, substitutions, pipelines, redirections); what runs is
 * untangled by shell-wrappers.ts and judged by the rule table in shell-rules.ts.
 */
import type { PolicyMode } from "../config/schema.js";
import type { Decision } from "../core/types.js";
import { runsFetcher } from "./shell-downloads.js";
import { MAX_SHELL_NESTING } from "./shell-inner.js";
import { lex, type Redirect, type SimpleCommand, scanSubstitutions, simpleCommands } from "./shell-lex.js";
import { dangerousDevice } from "./shell-places.js";
import { blocked, callOf, judgeCall } from "./shell-rules.js";
import { NO_PRESERVE_ROOT } from "./shell-targets.js";
import { expandVars, expandWords, recordAssignments } from "./shell-words.js";
import { resolve } from "./shell-wrappers.js";

/** Longer commands are not checked in guarded mode (the lexer is linear, but be bounded). */
export const MAX_CHECKED_COMMAND_CHARS = 1024 * 1024;
/** Shortest abbreviation of --no-preserve-root refused wherever it appears as a word. */
const MIN_NO_PRESERVE_ROOT_WORD = 6;

interface Ctx {
  depth: number;
  /** Plain assignments seen earlier in the same command (`a=rm; $a -rf /`). */
  vars: Map<string, string>;
  /** An earlier command of the current pipeline runs a downloader (`curl ... | python3`). */
  fetchedUpstream?: boolean;
}

/**
 * The shell rule: empty commands are denied everywhere, readonly denies all shell,
 * unrestricted allows the rest, guarded runs the catastrophic-command tripwire.
 */
export function checkShell(command: string, mode: PolicyMode): Decision {
  if (command.trim() === "") return { allow: false, reason: "shell: empty command" };
  if (mode === "readonly") {
    return { allow: false, reason: "readonly mode denies shell commands; run with --policy guarded" };
  }
  if (mode === "unrestricted") return { allow: true };
  if (command.length > MAX_CHECKED_COMMAND_CHARS) {
    return {
      allow: false,
      reason: `shell: command longer than ${MAX_CHECKED_COMMAND_CHARS} characters cannot be checked`,
    };
  }
  const reason = analyse(prepare(command), { depth: 0, vars: new Map() });
  return reason === undefined ? { allow: true } : { allow: false, reason };
}

/**
 * The normalised text the fork-bomb check reads (and traces may show): lower-cased,
 * quotes and backslashes removed, whitespace collapsed.
 */
export function normaliseShell(command: string): string {
  return prepare(command)
    .replace(/\\\n/g, "")
    .replace(/[\\'"]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** Lower-case, and turn `$IFS` / `${IFS}` into the blank it expands to (`rm${IFS}-rf${IFS}/`). */
function prepare(command: string): string {
  return command.toLowerCase().replace(/\$\{ifs\}|\$ifs(?![a-z0-9_])/g, " ");
}

const FORK_NAME = "([^\\s;&|(){}<>]{1,64})";
/** The second call must end there (`f | f2` is not `f | f`). */
const FORK_END = "(?=[\\s;&|}]|$)";
const FORK_BOMBS: readonly RegExp[] = [
  // name(){ name|name& }   — the classic `:(){ :|:& };:` and its spellings
  new RegExp(`${FORK_NAME}\\s*\\(\\s*\\)\\s*\\{\\s*\\1\\s*\\|\\s*\\1${FORK_END}`),
  // function name { name|name& }
  new RegExp(`function\\s+${FORK_NAME}\\s*(?:\\(\\s*\\))?\\s*\\{\\s*\\1\\s*\\|\\s*\\1${FORK_END}`),
  // name(){ name & name; }
  new RegExp(`${FORK_NAME}\\s*\\(\\s*\\)\\s*\\{\\s*\\1\\s*&\\s*;?\\s*\\1\\s*[;}]`),
  // perl -e 'fork while fork'
  /\bfork\s*while\s*fork\b/,
];

/** Checks one (already prepared) command text; returns a deny reason or undefined. */
function analyse(src: string, ctx: Ctx): string | undefined {
  if (ctx.depth > MAX_SHELL_NESTING) return "shell: command nests substitutions too deeply to check";
  const flat = src.replace(/\\\n/g, "").replace(/[\\'"]/g, "");
  if (FORK_BOMBS.some((re) => re.test(flat))) return blocked("fork bomb");
  const lexed = lex(src);
  if (!lexed.ok) return `shell: ${lexed.error}; the command cannot be checked`;
  let fetching = false;
  for (const s of simpleCommands(lexed.tokens)) {
    if (!s.pipedIn) fetching = false;
    ctx.fetchedUpstream = fetching;
    const r = analyseSimple(s, ctx);
    if (r !== undefined) return r;
    if (runsFetcher(s)) fetching = true;
  }
  return undefined;
}

function nested(src: string, ctx: Ctx): string | undefined {
  // Substitutions and `sh -c` bodies run in a child shell: its assignments stay there.
  return analyse(src, { depth: ctx.depth + 1, vars: new Map(ctx.vars) });
}

/** The first deny reason among these command lines, each checked as a child shell. */
function firstNested(bodies: readonly string[], ctx: Ctx): string | undefined {
  for (const body of bodies) {
    const r = nested(body, ctx);
    if (r !== undefined) return r;
  }
  return undefined;
}

function analyseSimple(s: SimpleCommand, ctx: Ctx): string | undefined {
  // Whatever a substitution runs is a command of its own, whatever the outer command is.
  for (const w of s.words) {
    const r = firstNested(w.subs, ctx);
    if (r !== undefined) return r;
  }
  for (const rd of s.redirs) {
    const r = redirectReason(rd, ctx);
    if (r !== undefined) return r;
  }
  const words = expandWords(
    s.words.map((w) => w.text),
    ctx.vars,
  );
  for (const w of words) {
    if (w.length >= MIN_NO_PRESERVE_ROOT_WORD && NO_PRESERVE_ROOT.startsWith(w))
      return blocked(NO_PRESERVE_ROOT);
  }
  recordAssignments(words, ctx.vars);
  return resolvedReason(words, s, ctx);
}

/** Substitutions in a redirection's target or here-document, and writes onto devices. */
function redirectReason(rd: Redirect, ctx: Ctx): string | undefined {
  const inTarget = firstNested(rd.target?.subs ?? [], ctx);
  if (inTarget !== undefined) return inTarget;
  if (rd.heredoc?.expands) {
    const found = scanSubstitutions(rd.heredoc.body);
    if (!found.ok) return `shell: ${found.error} in a here-document; the command cannot be checked`;
    const r = firstNested(found.subs, ctx);
    if (r !== undefined) return r;
  }
  if (rd.op.includes(">") && rd.target) {
    const dev = dangerousDevice(expandVars(rd.target.text, ctx.vars));
    if (dev) return blocked(`redirection onto ${dev}`);
  }
  return undefined;
}

/** Untangles the prefixes, then runs the rule table over every command that may run. */
function resolvedReason(words: string[], s: SimpleCommand, ctx: Ctx): string | undefined {
  const resolved = resolve(words, s.pipedIn);
  if (resolved.exhausted) return "shell: too many command prefixes and options to check";
  const r = firstNested(resolved.nested, ctx);
  if (r !== undefined) return r;
  const judgeLine = (line: string): string | undefined => nested(line, ctx);
  for (const inv of resolved.invocations) {
    const call = callOf(inv, s, ctx.fetchedUpstream === true);
    const reason = call === undefined ? undefined : judgeCall(call, judgeLine);
    if (reason !== undefined) return reason;
  }
  return undefined;
}
