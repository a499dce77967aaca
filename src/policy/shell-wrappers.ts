/**
 * Untangles what actually runs from one simple command: leading assignments, reserved words
 * and wrapper prefixes (`sudo -u root env A=1 nohup rm ...`) are stripped; where a wrapper
 * option may or may not take an argument, every reading is kept. `su -c` and `env -S`
 * bodies come back as command lines to check on their own.
 */
import { ASSIGNMENT_RE } from "./shell-words.js";

/** Work allowed for untangling wrapper prefixes in one simple command; beyond it we deny. */
const MAX_RESOLVE_STEPS = 512;

/** A resolved command line: what runs, and whether it reads the pipe. */
export interface Invocation {
  argv: string[];
  pipedIn: boolean;
}

export interface Resolved {
  invocations: Invocation[];
  /** Command lines a wrapper runs through a shell (`su -c`, `env -S`). */
  nested: string[];
  /** The step budget ran out: the command is refused rather than guessed. */
  exhausted: boolean;
}

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

/** The program name of a command word: its last path segment (`/usr/bin/rm` → `rm`). */
export function baseName(word: string): string {
  const trimmed = word.replace(/\/+$/, "");
  const i = trimmed.lastIndexOf("/");
  return i < 0 ? trimmed : trimmed.slice(i + 1);
}

interface Walk {
  invocations: Invocation[];
  nested: string[];
  budget: { steps: number };
}

/** Every command these words may run once their prefixes are stripped. */
export function resolve(words: string[], pipedIn: boolean): Resolved {
  const walk: Walk = { invocations: [], nested: [], budget: { steps: MAX_RESOLVE_STEPS } };
  unwrap(words, pipedIn, walk);
  return { invocations: walk.invocations, nested: walk.nested, exhausted: walk.budget.steps < 0 };
}

/** Index of the command word after assignments, reserved words and `function NAME`. */
function commandStart(argv: string[]): number | undefined {
  let k = 0;
  for (;;) {
    const w = argv[k];
    if (w === undefined) return undefined;
    if (ASSIGNMENT_RE.test(w) || RESERVED.has(w)) k++;
    else if (w === "function") k += 2;
    else return k;
  }
}

function unwrap(argv: string[], piped: boolean, walk: Walk): void {
  if (walk.budget.steps-- <= 0) return;
  const k = commandStart(argv);
  if (k === undefined) return;
  const name = baseName(argv[k]!);
  const rest = argv.slice(k + 1);
  const runsShell = (): void => {
    walk.invocations.push({ argv: ["sh"], pipedIn: piped });
  };
  if (name === "su") {
    suBodies(rest, walk.nested, runsShell);
    return;
  }
  const spec = Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
  if (!spec) {
    walk.invocations.push({ argv: argv.slice(k), pipedIn: piped });
    return;
  }
  if (name === "env") collectSplitStrings(rest, walk.nested);
  for (const s of wrappedStarts(rest, spec, walk.budget)) {
    // Only the wrapper's own options count (`command -v x` runs nothing; `command ls -v` does).
    const opts = rest.slice(0, s).filter((a) => a.startsWith("-"));
    if (s >= rest.length) {
      if (hasWrapperOption(opts, spec.shellWhenBare)) runsShell();
      continue;
    }
    if (hasWrapperOption(opts, spec.noExec)) continue;
    unwrap(rest.slice(s), spec.consumesStdin ? false : piped, walk);
  }
}

/** Is one of `list` among the wrapper's options (short ones also inside a cluster)? */
function hasWrapperOption(opts: string[], list: readonly string[] | undefined): boolean {
  return (
    list?.some((o) =>
      opts.some((a) => a === o || (!a.startsWith("--") && !o.startsWith("--") && a.includes(o[1]!))),
    ) ?? false
  );
}

/** Does this option take the next word (and is that unsure)? */
function optionArgument(w: string, spec: WrapperSpec): { takes: boolean; unsure: boolean } {
  if (w.startsWith("--")) {
    return { takes: !w.includes("=") && (spec.argOpts?.includes(w) ?? false), unsure: false };
  }
  const last = `-${w[w.length - 1]}`;
  return { takes: spec.argOpts?.includes(last) ?? false, unsure: spec.ambiguous?.includes(last) ?? false };
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
      const { takes, unsure } = optionArgument(w, spec);
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
