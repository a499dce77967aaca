/**
 * Shell rules for the `bash` action (SPEC 8).
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
 * - Writes onto `/dev/*` are denied except the harmless devices in SAFE_DEVICES.
 * - Text that merely *contains* a fork bomb (e.g. `printf ':(){ :|:& };:'`) is denied: the
 *   fork-bomb check reads the whole normalised command, quotes removed.
 * - A command the lexer cannot read (unterminated quote or substitution) is denied: a real
 *   shell would refuse it too.
 */
import path from "node:path";
import type { PolicyMode } from "../config/schema.js";
import type { Decision } from "../core/types.js";
import { gapRule, interpreterSpec } from "./shell-gaps.js";
import { lex, type SimpleCommand, scanSubstitutions, simpleCommands, type Word } from "./shell-lex.js";

/** Levels of `$(...)`, `sh -c`, `eval` ... we follow before refusing to guess. */
export const MAX_SHELL_NESTING = 8;
/** Longer commands are not checked in guarded mode (the lexer is linear, but be bounded). */
export const MAX_CHECKED_COMMAND_CHARS = 1024 * 1024;
/** Brace expansion (`/{usr,etc}`) is followed up to this many words per word. */
const MAX_BRACE_WORDS = 64;
/** Work allowed for untangling wrapper prefixes in one simple command; beyond it we deny. */
const MAX_RESOLVE_STEPS = 512;
/** Targets quoted in reasons are clipped to this many characters. */
const MAX_REASON_TARGET = 60;

/** Commands that read a script from stdin when piped into (SPEC: "pipe to sh/bash"). */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "csh",
  "tcsh",
]);

/** Downloaders whose output must not be executed (`sh -c "$(curl ...)"`, `eval "$(wget ...)"`). */
const FETCHERS: ReadonlySet<string> = new Set(["curl", "wget", "fetch"]);

/** Top-level directories whose recursive removal (or chmod/chown) breaks the machine. */
export const SYSTEM_DIRS: ReadonlySet<string> = new Set([
  "bin",
  "boot",
  "dev",
  "etc",
  "home",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "media",
  "mnt",
  "opt",
  "proc",
  "root",
  "run",
  "sbin",
  "srv",
  "sys",
  "usr",
  "var",
  // macOS
  "applications",
  "library",
  "private",
  "system",
  "users",
  "volumes",
]);

/** Devices a command may write to: sinks, terminals and descriptors, never disks or memory. */
export const SAFE_DEVICES: ReadonlySet<string> = new Set([
  "/dev/null",
  "/dev/zero",
  "/dev/full",
  "/dev/random",
  "/dev/urandom",
  "/dev/stdin",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/tty",
]);
/** Device trees that are descriptors, pseudo-terminals, shared memory or bash's network paths. */
const SAFE_DEVICE_PREFIXES = ["/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/tcp/", "/dev/udp/"];
/** Non-/dev files whose write is itself catastrophic. */
const DANGEROUS_FILES: ReadonlySet<string> = new Set(["/proc/sysrq-trigger"]);

const FILESYSTEM_MAKERS: ReadonlySet<string> = new Set(["mke2fs", "mkswap", "wipefs", "mkdosfs", "mkntfs"]);
const POWER_COMMANDS: ReadonlySet<string> = new Set(["shutdown", "reboot", "poweroff", "halt"]);
const POWER_VERBS: ReadonlySet<string> = new Set(["poweroff", "reboot", "halt", "kexec", "soft-reboot"]);
const POWER_TARGETS: ReadonlySet<string> = new Set([
  "poweroff.target",
  "reboot.target",
  "halt.target",
  "kexec.target",
  "rescue.target",
  "emergency.target",
]);
const NO_PRESERVE_ROOT = "--no-preserve-root";

/** Words that open a compound command; the real command follows them. */
const RESERVED: ReadonlySet<string> = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "do",
  "while",
  "until",
]);

interface WrapperSpec {
  /** Options (lower-cased) that take the next word as their argument. */
  argOpts?: readonly string[];
  /** Options whose argument-taking is unclear (lower-casing merges -h/-H, -i/-I ...): try both. */
  ambiguous?: readonly string[];
  /** Positional words before the wrapped command (`timeout 5 cmd`, `chroot DIR cmd`). */
  positional?: number;
  /** The wrapped command reads the wrapper's arguments, not the pipe (`xargs`). */
  consumesStdin?: boolean;
  /** Options after which nothing is executed (`command -v`). */
  noExec?: readonly string[];
  /** Options that start a shell when no command follows (`sudo -s`). */
  shellWhenBare?: readonly string[];
  /** The first operand may be a name rather than the command (`coproc NAME { ...; }`). */
  optionalName?: boolean;
}

/** Prefixes that run the command after them. Lower-cased spellings (so -C and -c merge). */
const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  sudo: {
    argOpts: [
      "-u",
      "-g",
      "-p",
      "-r",
      "-t",
      "-c",
      "-d",
      "-h",
      "-a",
      "--user",
      "--group",
      "--prompt",
      "--role",
    ],
    ambiguous: ["-h", "-a"],
    shellWhenBare: ["-s", "-i", "--shell", "--login"],
  },
  doas: { argOpts: ["-u", "-c"], shellWhenBare: ["-s"] },
  env: { argOpts: ["-u", "-c", "-s", "--unset", "--chdir", "--split-string"] },
  nohup: {},
  command: { noExec: ["-v"] },
  exec: { argOpts: ["-a"] },
  builtin: {},
  time: { argOpts: ["-f", "-o", "--format", "--output"] },
  nice: { argOpts: ["-n", "--adjustment"] },
  ionice: { argOpts: ["-c", "-n", "-p", "--class", "--classdata"] },
  timeout: { argOpts: ["-s", "-k", "--signal", "--kill-after"], positional: 1 },
  stdbuf: { argOpts: ["-i", "-o", "-e"] },
  setsid: {},
  chroot: { argOpts: ["--userspec", "--groups"], positional: 1 },
  taskset: { positional: 1 },
  busybox: {},
  toybox: {},
  coproc: { optionalName: true },
  xargs: {
    argOpts: ["-a", "-d", "-e", "-i", "-l", "-n", "-p", "-s", "--arg-file", "--delimiter", "--max-args"],
    ambiguous: ["-e", "-i", "-l", "-p"],
    consumesStdin: true,
  },
};

const DENY_SUFFIX = "is blocked in guarded mode";

/** A resolved command line: what runs, and whether it reads the pipe. */
interface Invocation {
  argv: string[];
  pipedIn: boolean;
}

interface Ctx {
  depth: number;
  /** Plain assignments seen earlier in the same command (`a=rm; $a -rf /`). */
  vars: Map<string, string>;
  /** An earlier command of the current pipeline runs a downloader (issue 11: `curl ... | python3`). */
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

function deny(what: string): string {
  return `shell: ${what} ${DENY_SUFFIX}`;
}

function clipTarget(t: string): string {
  return t.length > MAX_REASON_TARGET ? `${t.slice(0, MAX_REASON_TARGET)}...` : t;
}

/** Checks one (already prepared) command text; returns a deny reason or undefined. */
function analyse(src: string, ctx: Ctx): string | undefined {
  if (ctx.depth > MAX_SHELL_NESTING) return "shell: command nests substitutions too deeply to check";
  const flat = src.replace(/\\\n/g, "").replace(/[\\'"]/g, "");
  if (FORK_BOMBS.some((re) => re.test(flat))) return deny("fork bomb");
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

/** Does this simple command run a downloader (after its prefixes are stripped)? */
function runsFetcher(s: SimpleCommand): boolean {
  const { invocations } = resolve(
    s.words.map((w) => w.text),
    false,
  );
  return invocations.some((inv) => FETCHERS.has(baseName(inv.argv[0] ?? "")));
}

function nested(src: string, ctx: Ctx): string | undefined {
  // Substitutions and `sh -c` bodies run in a child shell: its assignments stay there.
  return analyse(src, { depth: ctx.depth + 1, vars: new Map(ctx.vars) });
}

function analyseSimple(s: SimpleCommand, ctx: Ctx): string | undefined {
  // Whatever a substitution runs is a command of its own, whatever the outer command is.
  for (const w of s.words) {
    for (const sub of w.subs) {
      const r = nested(sub, ctx);
      if (r !== undefined) return r;
    }
  }
  for (const rd of s.redirs) {
    for (const sub of rd.target?.subs ?? []) {
      const r = nested(sub, ctx);
      if (r !== undefined) return r;
    }
    if (rd.heredoc?.expands) {
      const found = scanSubstitutions(rd.heredoc.body);
      if (!found.ok) return `shell: ${found.error} in a here-document; the command cannot be checked`;
      for (const sub of found.subs) {
        const r = nested(sub, ctx);
        if (r !== undefined) return r;
      }
    }
    if (isOutputRedirect(rd.op) && rd.target) {
      const dev = dangerousDevice(expandVars(rd.target.text, ctx.vars));
      if (dev) return deny(`redirection onto ${dev}`);
    }
  }

  const words = expandWords(
    s.words.map((w) => w.text),
    ctx.vars,
  );
  for (const w of words) {
    if (w.length >= 6 && NO_PRESERVE_ROOT.startsWith(w)) return deny(NO_PRESERVE_ROOT);
  }
  recordAssignments(words, ctx.vars);

  const resolved = resolve(words, s.pipedIn);
  if (resolved.exhausted) return "shell: too many command prefixes and options to check";
  for (const body of resolved.nested) {
    const r = nested(body, ctx);
    if (r !== undefined) return r;
  }
  for (const inv of resolved.invocations) {
    const r = checkInvocation(inv, s, ctx);
    if (r !== undefined) return r;
  }
  return undefined;
}

function isOutputRedirect(op: string): boolean {
  return op.includes(">");
}

/** `$name` / `${name}` replaced by values assigned earlier in the same command. */
function expandVars(text: string, vars: Map<string, string>): string {
  if (vars.size === 0 || !text.includes("$")) return text;
  return text.replace(/\$\{([a-z_][a-z0-9_]*)\}|\$([a-z_][a-z0-9_]*)/g, (m, a?: string, b?: string) => {
    const v = vars.get((a ?? b)!);
    return v ?? m;
  });
}

/** Applies known variables (re-splitting what they expand to) and brace expansion. */
function expandWords(texts: string[], vars: Map<string, string>): string[] {
  const out: string[] = [];
  for (const t of texts) {
    const e = expandVars(t, vars);
    const parts = e === t ? [e] : e.split(/\s+/).filter((p) => p !== "");
    for (const p of parts) out.push(...braceExpand(p));
  }
  return out;
}

const BRACE_RE = /^(.*?)(?<!\$)\{([^{}]*,[^{}]*)\}(.*)$/s;

/** `/{usr,etc}` → `/usr /etc` (one level at a time, bounded). */
function braceExpand(word: string): string[] {
  let work = [word];
  for (let round = 0; round < 4; round++) {
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

const ASSIGNMENT_RE = /^([a-z_][a-z0-9_]*)(\[[^\]]*\])?\+?=/;
const DECLARERS: ReadonlySet<string> = new Set(["export", "declare", "local", "readonly", "typeset"]);

/** Remembers `a=b` when it is the whole command (or after export/declare/...). */
function recordAssignments(words: string[], vars: Map<string, string>): void {
  const all = words.every((w) => ASSIGNMENT_RE.test(w));
  const declared = words.length > 1 && DECLARERS.has(words[0]!);
  if (!all && !declared) return;
  for (const w of declared ? words.slice(1) : words) {
    const m = ASSIGNMENT_RE.exec(w);
    if (m && !m[2]) vars.set(m[1]!, w.slice(m[0].length));
  }
}

function baseName(word: string): string {
  const trimmed = word.replace(/\/+$/, "");
  const i = trimmed.lastIndexOf("/");
  return i < 0 ? trimmed : trimmed.slice(i + 1);
}

/**
 * Strips assignments, reserved words and wrappers (`sudo -u root env A=1 nohup rm ...`).
 * Where an option may or may not take an argument, every reading is kept.
 */
function resolve(
  words: string[],
  pipedIn: boolean,
): { invocations: Invocation[]; nested: string[]; exhausted: boolean } {
  const invocations: Invocation[] = [];
  const nestedBodies: string[] = [];
  const budget = { steps: MAX_RESOLVE_STEPS };

  const walk = (argv: string[], piped: boolean): void => {
    if (budget.steps-- <= 0) return;
    let k = 0;
    for (;;) {
      const w = argv[k];
      if (w === undefined) return;
      if (ASSIGNMENT_RE.test(w) || RESERVED.has(w)) k++;
      else if (w === "function") k += 2;
      else break;
    }
    const name = baseName(argv[k]!);
    const spec = Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
    if (name === "su") {
      suBodies(argv.slice(k + 1), nestedBodies, () => invocations.push({ argv: ["sh"], pipedIn: piped }));
      return;
    }
    if (!spec) {
      invocations.push({ argv: argv.slice(k), pipedIn: piped });
      return;
    }
    const rest = argv.slice(k + 1);
    if (name === "env") collectSplitStrings(rest, nestedBodies);
    for (const s of wrappedStarts(rest, spec, budget)) {
      // Only the wrapper's own options count (`command -v x` runs nothing; `command ls -v` does).
      const opts = rest.slice(0, s).filter((a) => a.startsWith("-"));
      const hasOpt = (list: readonly string[] | undefined): boolean =>
        list?.some((o) =>
          opts.some((a) => a === o || (!a.startsWith("--") && !o.startsWith("--") && a.includes(o[1]!))),
        ) ?? false;
      if (s >= rest.length) {
        if (hasOpt(spec.shellWhenBare)) invocations.push({ argv: ["sh"], pipedIn: piped });
        continue;
      }
      if (hasOpt(spec.noExec)) continue;
      walk(rest.slice(s), spec.consumesStdin ? false : piped);
    }
  };
  walk(words, pipedIn);
  return { invocations, nested: nestedBodies, exhausted: budget.steps < 0 };
}

/** Candidate indices in `rest` where the wrapped command starts. */
function wrappedStarts(rest: string[], spec: WrapperSpec, budget: { steps: number }): number[] {
  const out = new Set<number>();
  const step = (k: number, positional: number): void => {
    if (budget.steps-- <= 0) return;
    const w = rest[k];
    if (w === undefined) {
      out.add(k);
      return;
    }
    if (w === "--") {
      step(k + 1 + positional, 0);
      return;
    }
    if (w.startsWith("-") && w.length > 1) {
      let takes: boolean;
      let unsure = false;
      if (w.startsWith("--")) {
        takes = !w.includes("=") && (spec.argOpts?.includes(w) ?? false);
      } else {
        const last = `-${w[w.length - 1]}`;
        takes = spec.argOpts?.includes(last) ?? false;
        unsure = spec.ambiguous?.includes(last) ?? false;
      }
      if (unsure) {
        step(k + 1, positional);
        step(k + 2, positional);
      } else step(k + (takes ? 2 : 1), positional);
      return;
    }
    if (positional > 0) step(k + 1, positional - 1);
    else out.add(k);
  };
  step(0, spec.positional ?? 0);
  if (spec.optionalName) step(1, 0);
  return [...out];
}

/** `env -S "cmd args"` / `--split-string=...`: the string is a command line. */
function collectSplitStrings(rest: string[], out: string[]): void {
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === "-s" || a === "--split-string") {
      if (rest[i + 1] !== undefined) out.push(rest[i + 1]!);
    } else if (a.startsWith("--split-string=")) out.push(a.slice("--split-string=".length));
    else if (/^-[a-z]*s./.test(a) && !a.startsWith("--")) out.push(a.slice(a.indexOf("s") + 1));
    // No early stop: `env -u NAME -S '...'` has an operand before -S. A later `-s` that belongs
    // to the wrapped command only makes us check one more harmless string.
  }
}

/** `su [user] -c CMD` runs CMD through a shell; bare `su` is a shell. */
function suBodies(rest: string[], out: string[], bareShell: () => void): void {
  let found = false;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === "-c" || a === "--command") {
      if (rest[i + 1] !== undefined) out.push(rest[i + 1]!);
      found = true;
    } else if (a.startsWith("--command=")) {
      out.push(a.slice("--command=".length));
      found = true;
    }
  }
  if (!found) bareShell();
}

function checkInvocation(inv: Invocation, s: SimpleCommand, ctx: Ctx): string | undefined {
  const argv = inv.argv;
  const first = argv[0];
  if (first === undefined) return undefined;
  const cmd = baseName(first);
  const args = argv.slice(1);
  // A command name we cannot know (`$x`, `$(...)`) might be rm: judge its arguments as rm's.
  const computed = first.includes("$") || first.includes("`");

  if (SHELLS.has(cmd)) {
    const r = shellRule(cmd, args, inv.pipedIn, s, ctx);
    if (r !== undefined) return r;
  }
  if (cmd === "source" || cmd === ".") {
    if (args.some(isProcSub) || s.redirs.some((r) => r.op === "<" && r.target && isProcSub(r.target.text))) {
      return deny(`running a process substitution with ${cmd}`);
    }
    if (inv.pipedIn && args.some((a) => a === "/dev/stdin" || a === "-" || a === "/proc/self/fd/0")) {
      return deny(`piping into ${cmd}`);
    }
  }
  if (cmd === "eval" || cmd === "watch") {
    if (fetchedCode(s.words)) return deny(`running downloaded code with ${cmd}`);
    // eval joins its arguments; watch joins what follows its options (whose arguments we do
    // not know), so every suffix that starts with a non-option is checked.
    const bodies =
      cmd === "eval"
        ? [args.join(" ")]
        : args
            .flatMap((a, i) => (a.startsWith("-") ? [] : [args.slice(i).join(" ")]))
            .slice(0, MAX_SHELL_NESTING);
    for (const body of bodies) {
      const r = nested(body, ctx);
      if (r !== undefined) return r;
    }
  }
  if (cmd === "trap" && args[0] !== undefined && !args[0].startsWith("-")) {
    const r = nested(args[0], ctx);
    if (r !== undefined) return r;
  }
  if (cmd === "alias") {
    for (const a of args) {
      const eq = a.indexOf("=");
      if (eq > 0) {
        const r = nested(a.slice(eq + 1), ctx);
        if (r !== undefined) return r;
      }
    }
  }
  if (cmd === "rm" || computed) {
    const r = rmRule(args, cmd === "rm");
    if (r !== undefined) return r;
  }
  if (cmd === "find") {
    const r = findRule(args, s, ctx);
    if (r !== undefined) return r;
  }
  if (/^mkfs(\..*)?$/.test(cmd) || FILESYSTEM_MAKERS.has(cmd)) return deny(`${cmd} (filesystem formatting)`);
  if (cmd === "dd") {
    for (const a of args) {
      if (a.startsWith("of=")) {
        const dev = dangerousDevice(a.slice(3));
        if (dev) return deny(`dd onto ${dev}`);
      }
    }
  }
  if (cmd === "tee" || cmd === "shred" || cmd === "cp") {
    const operands = args.filter((a) => !a.startsWith("-"));
    const targets = cmd === "cp" ? operands.slice(-1) : operands;
    for (const t of targets) {
      const dev = dangerousDevice(t);
      if (dev) return deny(`writing onto ${dev}`);
    }
  }
  const power = powerRule(cmd, args);
  if (power !== undefined) return power;
  const gap = gapRule({
    cmd,
    args,
    fetchedUpstream: inv.pipedIn && ctx.fetchedUpstream === true,
    fetchedInWords: () => interpreterSpec(cmd) !== undefined && fetchedCode(s.words),
  });
  if (gap !== undefined) return deny(gap);
  if (cmd === "chmod" || cmd === "chown" || cmd === "chgrp") {
    const r = ownershipRule(cmd, args);
    if (r !== undefined) return r;
  }
  return undefined;
}

function isProcSub(text: string): boolean {
  return text.startsWith("<(") || text.startsWith(">(");
}

/** Does any substitution in these words run a downloader (`"$(curl -fsSL ...)"`)? */
function fetchedCode(words: Word[]): boolean {
  for (const w of words) {
    for (const sub of w.subs) {
      const lexed = lex(sub);
      if (!lexed.ok) return true;
      for (const sc of simpleCommands(lexed.tokens)) {
        const { invocations } = resolve(
          sc.words.map((x) => x.text),
          false,
        );
        if (invocations.some((inv) => FETCHERS.has(baseName(inv.argv[0] ?? "")))) return true;
      }
    }
  }
  return false;
}

function shellRule(
  cmd: string,
  args: string[],
  pipedIn: boolean,
  s: SimpleCommand,
  ctx: Ctx,
): string | undefined {
  if (pipedIn) return deny(`piping into ${cmd}`);
  if (args.some(isProcSub) || s.redirs.some((r) => r.op === "<" && r.target && isProcSub(r.target.text))) {
    return deny(`running a process substitution with ${cmd} (same as piping into a shell)`);
  }
  if (fetchedCode(s.words)) return deny(`running downloaded code with ${cmd}`);
  const dashC = args.some((a) => /^-[a-z]*c[a-z]*$/.test(a));
  if (dashC) {
    // `bash -o pipefail -c 'body' name`: every operand is checked as a command; only one is.
    for (const a of args) {
      if (a.startsWith("-") || a.startsWith("+")) continue;
      const r = nested(a, ctx);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  // Without -c the shell runs its stdin: here-documents and here-strings are scripts.
  for (const rd of s.redirs) {
    const body = rd.heredoc ? rd.heredoc.body : rd.op === "<<<" ? rd.target?.text : undefined;
    if (body !== undefined) {
      const r = nested(body, ctx);
      if (r !== undefined) return r;
    }
  }
  return undefined;
}

/**
 * rm: recursive and a whole-tree target, or `--no-preserve-root` in any abbreviation. For a
 * command name we cannot know, project targets (`$X -r .`) are left alone: too many tools
 * take `-r` and `.`.
 */
function rmRule(args: string[], isRm: boolean): string | undefined {
  let recursive = false;
  let endOfOptions = false;
  const targets: string[] = [];
  for (const a of args) {
    if (!endOfOptions && a === "--") {
      endOfOptions = true;
      continue;
    }
    if (!endOfOptions && a.startsWith("--")) {
      // GNU rm accepts unambiguous abbreviations: --r, --rec ... mean --recursive; --n... --no-preserve-root.
      if (isRm && a.length >= 3 && "--recursive".startsWith(a)) recursive = true;
      if (isRm && a.length >= 3 && NO_PRESERVE_ROOT.startsWith(a)) return deny(NO_PRESERVE_ROOT);
      continue;
    }
    if (!endOfOptions && a.startsWith("-") && a.length > 1) {
      if (a.includes("r")) recursive = true; // -r, -R (lower-cased), -rf, -fR, -vr ...
      continue;
    }
    targets.push(a);
  }
  if (!recursive) return undefined;
  for (const t of targets) {
    const label = wholeTreeTarget(t, isRm ? "wide" : "home");
    if (label) return deny(`recursive delete of ${label}`);
  }
  return undefined;
}

/** find expression words that do not narrow what is matched. */
const FIND_NON_FILTERS: ReadonlySet<string> = new Set([
  "-delete",
  "-depth",
  "-mindepth",
  "-maxdepth",
  "-xdev",
  "-mount",
  "-noleaf",
  "-follow",
  "-ignore_readdir_race",
  "-daystart",
  "-print",
  "-print0",
  "-true",
]);

/**
 * find with -delete or `-exec rm` from / or a home directory, or from the project itself when
 * nothing filters what is deleted (`find . -delete`; `find . -name '*.o' -delete` is ordinary).
 * -exec bodies are checked as commands of their own.
 */
function findRule(args: string[], s: SimpleCommand, ctx: Ctx): string | undefined {
  let k = 0;
  while (args[k] === "-h" || args[k] === "-l" || args[k] === "-p" || /^-o\d$/.test(args[k] ?? "")) k++;
  if (args[k] === "-d") k += 2;
  const starts: string[] = [];
  while (k < args.length && !/^[-(!,]/.test(args[k]!)) starts.push(args[k++]!);
  let deletes = args.includes("-delete") ? "-delete" : undefined;
  let filtered = false;
  for (let i = k; i < args.length; i++) {
    const a = args[i]!;
    if (["-exec", "-execdir", "-ok", "-okdir"].includes(a)) {
      const body: string[] = [];
      let j = i + 1;
      while (j < args.length && args[j] !== ";" && args[j] !== "+") body.push(args[j++]!);
      const execCmd = baseName(body[0] ?? "");
      if (execCmd === "rm" || execCmd === "shred") deletes = `${a} ${execCmd}`;
      const r = checkInvocation({ argv: body, pipedIn: false }, { ...s, pipedIn: false }, ctx);
      if (r !== undefined) return r;
      i = j;
      continue;
    }
    if (a.startsWith("-") && !FIND_NON_FILTERS.has(a)) filtered = true;
    if (a === "-mindepth" || a === "-maxdepth") i++;
  }
  if (!deletes) return undefined;
  const scope: Scope = filtered ? "home" : "wide";
  for (const st of starts.length > 0 ? starts : ["."]) {
    const label = wholeTreeTarget(st, scope);
    if (label) return deny(`recursive delete of ${label} (find ${deletes})`);
  }
  return undefined;
}

function powerRule(cmd: string, args: string[]): string | undefined {
  if (POWER_COMMANDS.has(cmd)) return deny(cmd);
  if (cmd === "init" || cmd === "telinit") {
    const level = args.find((a) => !a.startsWith("-"));
    if (level === "0" || level === "6") return deny(`${cmd} ${level}`);
  }
  if (cmd === "systemctl") {
    const verbs = args.filter((a) => !a.startsWith("-"));
    const verb = verbs.find((v) => POWER_VERBS.has(v));
    if (verb) return deny(`systemctl ${verb}`);
    if (verbs.some((v) => v === "isolate" || v === "start")) {
      const target = verbs.find((v) => POWER_TARGETS.has(v));
      if (target) return deny(`systemctl ${target}`);
    }
  }
  return undefined;
}

/** chmod/chown/chgrp: recursive on / or a system directory. */
function ownershipRule(cmd: string, args: string[]): string | undefined {
  let recursive = false;
  const operands: string[] = [];
  for (const a of args) {
    if (a.startsWith("--")) {
      if (a.length >= 5 && "--recursive".startsWith(a)) recursive = true;
    } else if (a.startsWith("-") && a.length > 1) {
      // `-R` lower-cases to `-r`, which chmod would read as "remove read": assume recursive.
      if (a.includes("r")) recursive = true;
    } else operands.push(a);
  }
  if (!recursive) return undefined;
  for (const t of operands) {
    const label = wholeTreeTarget(t, "system");
    if (label) return deny(`recursive ${cmd} of ${label}`);
  }
  return undefined;
}

/**
 * Writes onto this path are catastrophic: a /dev entry that is not a harmless sink, or
 * /proc/sysrq-trigger. Returns the normalised path, or undefined.
 */
export function dangerousDevice(target: string): string | undefined {
  if (!target.startsWith("/")) return undefined;
  const norm = path.posix.normalize(target).replace(/\/+$/, "") || "/";
  if (DANGEROUS_FILES.has(norm)) return norm;
  if (!norm.startsWith("/dev/")) return undefined;
  if (SAFE_DEVICES.has(norm) || SAFE_DEVICE_PREFIXES.some((p) => norm.startsWith(p))) return undefined;
  return clipTarget(norm);
}

type Scope = "system" | "home" | "wide";

/** Only glob characters (and dots): matches every entry of its directory. */
function isGlobAll(seg: string): boolean {
  const s = seg.replace(/\[[^\]]*\]/g, "?");
  return /^[*?.]+$/.test(s) && /[*?]/.test(s);
}

function hasGlob(seg: string): boolean {
  return /[*?[]/.test(seg);
}

/** `/`, `/*`, `/usr`, `/usr/*`, `/home/alice`, `/u*`: absolute targets that wipe a tree we need. */
function systemTree(abs: string): boolean {
  const norm = path.posix.normalize(abs);
  const segs = norm.split("/").filter((x) => x !== "");
  if (segs.length === 0) return true;
  const [a, b] = segs;
  if (segs.length === 1) return hasGlob(a!) || SYSTEM_DIRS.has(a!);
  if (segs.length === 2) {
    if (SYSTEM_DIRS.has(a!) && isGlobAll(b!)) return true;
    if (a === "home" || a === "users") return true;
  }
  return false;
}

/** Relative targets that are the project (or above it): `.`, `..`, `*`, `./*`, `../..`. */
function projectTree(rel: string): boolean {
  const norm = path.posix.normalize(rel).replace(/\/+$/, "");
  const segs = norm.split("/");
  const last = segs[segs.length - 1]!;
  const parents = isGlobAll(last) && last !== "." && last !== ".." ? segs.slice(0, -1) : segs;
  return parents.every((x) => x === "." || x === ".." || x === "");
}

const HOME_RE = /^(~[^/]*|\$home|\$\{home\})(\/.*)?$/;
const PWD_RE = /^(\$pwd|\$\{pwd\}|\$\(\s*pwd(?:\s+-[lp])?\s*\)|`\s*pwd(?:\s+-[lp])?\s*`)(\/.*)?$/;
/** Expansions that may come out empty: variables, and command substitutions (one nesting level). */
const VAR_RE = /\$\{[^}]*\}|\$[a-z_][a-z0-9_]*|\$[0-9@*#?$!-]|\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`/g;

/**
 * Label of a target whose recursive removal is catastrophic, or undefined.
 * system: / and system directories; home: also home directories; wide: also the project.
 */
export function wholeTreeTarget(target: string, scope: Scope): string | undefined {
  if (target === "" || isProcSub(target)) return undefined;
  const label = clipTarget(target);
  if (scope !== "system") {
    const home = HOME_RE.exec(target);
    if (home) {
      const rest = `.${home[2] ?? ""}`;
      const norm = path.posix.normalize(rest).replace(/\/+$/, "");
      const segs = norm.split("/");
      if (norm === "." || norm.startsWith("..") || (segs.length === 1 && isGlobAll(segs[0]!))) return label;
      return undefined;
    }
  }
  if (scope === "wide") {
    const pwd = PWD_RE.exec(target);
    if (pwd && projectTree(`.${pwd[2] ?? ""}`)) return label;
  }
  if (target.startsWith("/") && systemTree(target)) return label;
  if (target.includes("$")) {
    // The empty-variable accident: `rm -rf "$BUILD"/` with BUILD unset removes /.
    const vanished = target.replace(VAR_RE, "");
    if (vanished.startsWith("/") && systemTree(vanished)) return `${label} (when its variables are empty)`;
    return undefined;
  }
  if (target.startsWith("/")) return undefined;
  if (scope === "wide" && projectTree(target)) return label;
  return undefined;
}
