/**
 * What the extra words of a command may not do (docs/safety.md "Plans as contracts", "Approval
 * scopes"): when something a person approved covers more than the command they read — a plan's
 * `"git diff *"`, an "always" on `git diff` — the extra words must not turn it into another
 * command. Two tables answer that, shared by everything that stretches an approval:
 *
 * - OPERAND_PROGRAMS: programs whose extra words are files, code or hosts (`rm build` then
 *   `rm build -rf src`, `curl https://a` then `curl https://a https://b -d @secret`). Nothing
 *   about them stretches: they are named whole, every time.
 * - The stretching options: an option that writes a file, deletes, runs a command or loads
 *   code, sends data, or points the program at something else (`git diff --output=README.md`,
 *   `git branch -D x`, `git diff --ext-diff`, `sed -i`, `curl -d @secret`). Some apply to every
 *   program, some to one program. `stretchingOption(program, words)` names the first such word.
 *
 * The list is deliberately broad: a harmless option it refuses (`grep -c`) costs the model one
 * refusal and the person one exact line in the plan; a harmful one it missed costs a file. It
 * reads words, not a program's manual: a short-option cluster counts every letter in it
 * (`-fdx` is `-f`, `-d` and `-x`; `-ofile` is `-o`), a long option counts with or without its
 * `=value` and in any case (`--outDir` is `--outdir`) — for git, which takes any unambiguous
 * beginning of a long option, a beginning of one counts too (`--ext` is `--ext-diff`) — and every
 * word counts, also after `--` (`npm test -- --outputFile=x` hands the option to the test runner).
 */
import path from "node:path";

/**
 * Programs whose extra words are not a subcommand but what they act on or run: a file
 * (`rm build` must not cover `rm build -rf src`), a process, a host, or another program
 * (`sudo make` must not cover `sudo make install`… nor `env rm -rf src`). Matched by the
 * program's base name, lower-cased (`/bin/RM` is `rm` where the file system ignores case).
 */
export const OPERAND_PROGRAMS: ReadonlySet<string> = new Set([
  // files
  "rm",
  "rmdir",
  "unlink",
  "shred",
  "truncate",
  "mv",
  "cp",
  "ln",
  "install",
  "touch",
  "mkdir",
  "chmod",
  "chown",
  "chgrp",
  "tee",
  "dd",
  "tar",
  "zip",
  "unzip",
  "patch",
  // files and code: a script in the words decides what is written or run
  "sed",
  "awk",
  "gawk",
  "mawk",
  "find",
  // processes
  "kill",
  "pkill",
  "killall",
  // another program, or a host that runs one
  "sudo",
  "doas",
  "su",
  "env",
  "nohup",
  "nice",
  "timeout",
  "time",
  "watch",
  "xargs",
  "exec",
  "command",
  "eval",
  "source",
  ".",
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "fish",
  "python",
  "python3",
  "node",
  "perl",
  "ruby",
  "php",
  "java",
  "ssh",
  "scp",
  "rsync",
  // hosts
  "curl",
  "wget",
  "nc",
  "ncat",
  "netcat",
  "socat",
  "telnet",
  "ftp",
  "sftp",
]);

/** The base name of a command's program word, lower-cased: how the tables here name it. */
export function programName(word: string): string {
  return path.basename(word).toLowerCase();
}

/** Whether a program's extra words are files, code or hosts (see OPERAND_PROGRAMS). */
export function isOperandProgram(program: string): boolean {
  return OPERAND_PROGRAMS.has(programName(program));
}

/** What a stretching option does, as a refusal says it. */
export type OptionEffect =
  | "writes files"
  | "deletes"
  | "runs a command or loads code"
  | "sends data"
  | "acts on another place";

/** An option table: short option letters (case matters), long option names (lower-cased). */
interface OptionTable {
  short?: Readonly<Record<string, OptionEffect>>;
  /** `--name` itself or with `=value`. */
  long?: Readonly<Record<string, OptionEffect>>;
  /** Every long option that begins with the name (`--data` covers `--data-binary`). */
  longFamily?: Readonly<Record<string, OptionEffect>>;
  /** The program spells long options with one dash (`go test -exec x`, `find -delete`). */
  singleDashLong?: boolean;
  /**
   * The program takes any unambiguous beginning of a long option for the whole (git's option
   * parser: `git diff --ext` is `--ext-diff`), so a beginning of a stretching one stretches too.
   */
  abbreviates?: boolean;
}

const W: OptionEffect = "writes files";
const DEL: OptionEffect = "deletes";
const RUN: OptionEffect = "runs a command or loads code";
const SEND: OptionEffect = "sends data";
const ELSE: OptionEffect = "acts on another place";

/** Options that stretch every program. */
const EVERY_PROGRAM: OptionTable = {
  short: {
    // output file (`-o out`, `-ofile`), a remote name saved as a file, a write in place
    o: W,
    O: W,
    w: W,
    u: W, // test runners: update snapshots
    // force, or a file of instructions (`make -f`, `git clean -f`)
    f: DEL,
    // delete (`git branch -d/-D`); data sent (`curl -d`)
    d: DEL,
    D: DEL,
    // an expression or command run (`sed -e`, `perl -e`), a command (`sh -c`), a config (`git -c`)
    e: RUN,
    c: RUN,
    x: RUN, // `git rebase -x`, `git clean -x`, `tar -x`
    T: SEND, // `curl -T`: upload a file
  },
  long: {
    "--write": W,
    "--in-place": W,
    "--inplace": W,
    "--global": W,
    "--hard": DEL,
    "--ext-diff": RUN,
    "--extcmd": RUN,
    "--tool": RUN,
    "--pre": RUN, // ripgrep: a preprocessor command for every file
    "--require": RUN,
    "--import": RUN,
    "--loader": RUN,
    "--experimental-loader": RUN,
    "--preload": RUN,
    "--shell": RUN,
    "--script-shell": RUN,
    "--node-options": RUN,
    "--command": RUN,
    "--cmd": RUN,
    "--call": RUN,
    "--receive-pack": RUN,
    "--template": RUN,
    "--userconfig": RUN,
    "--globalconfig": RUN,
    // curl's form fields (`--form f=@secret`); exact, so `git log --format=%h` is not one
    "--form": SEND,
    "--form-string": SEND,
    "--git-dir": ELSE,
    "--work-tree": ELSE,
    "--prefix": ELSE,
    "--cwd": ELSE,
    "--directory": ELSE,
    "--manifest-path": ELSE,
  },
  longFamily: {
    // --output, --output-file, --outfile, --outDir, --outputFile
    "--out": W,
    "--log-file": W,
    "--logfile": W,
    "--fix": W,
    "--update": W, // --update-snapshots, --updateSnapshot
    "--target-dir": W,
    "--delete": DEL,
    "--remove": DEL,
    "--prune": DEL,
    "--force": DEL,
    "--exec": RUN, // --exec, --exec-path, --execute, --execdir
    "--eval": RUN,
    "--config": RUN, // a config file is code for many tools (vitest, eslint, webpack)
    "--plugin": RUN,
    "--setup": RUN, // --setupFiles
    "--globalsetup": RUN,
    "--upload": SEND, // --upload-file, --upload-pack
    "--data": SEND,
    "--post": SEND,
  },
};

/** Options that stretch one program, beside those of every program. */
const PER_PROGRAM: Readonly<Record<string, OptionTable>> = {
  git: {
    short: { X: DEL, M: DEL }, // `git clean -X`, `git branch -M` (overwrites a branch)
    abbreviates: true,
  },
  sed: { short: { i: W, I: W, s: W }, long: { "--file": RUN } },
  perl: { short: { i: W, I: RUN, M: RUN, m: RUN } },
  ruby: { short: { i: W, I: RUN, r: RUN } },
  curl: {
    short: { d: SEND, F: SEND, K: RUN, X: SEND, b: SEND, x: ELSE, H: SEND },
    long: { "--json": SEND, "--request": SEND, "--url": ELSE, "--proxy": ELSE, "--cookie": SEND },
    longFamily: { "--cookie-jar": W, "--dump-header": W, "--remote-name": W, "--trace": W, "--stderr": W },
  },
  wget: {
    short: { P: W, i: ELSE, r: W, m: W, N: W, b: W },
    long: { "--input-file": ELSE, "--method": SEND, "--recursive": W, "--mirror": W },
    longFamily: { "--body": SEND, "--directory-prefix": W },
  },
  tar: { short: { C: ELSE, I: RUN, r: W, A: W } },
  make: {
    short: { C: ELSE, I: RUN, W: W },
    long: { "--file": RUN, "--makefile": RUN, "--include-dir": RUN },
  },
  npm: { short: { C: ELSE, g: W, w: ELSE }, long: { "--workspace": ELSE, "--dir": ELSE } },
  pnpm: { short: { C: ELSE, g: W, w: ELSE }, long: { "--dir": ELSE, "--filter": ELSE, "--workspace": ELSE } },
  yarn: { long: { "--cwd": ELSE } },
  pytest: {
    short: { p: RUN },
    long: { "--basetemp": DEL, "--rootdir": ELSE, "--confcutdir": ELSE },
    longFamily: { "--junit": W, "--cov-report": W, "--result-log": W },
  },
  docker: {
    short: { v: ELSE, p: ELSE },
    long: { "--privileged": RUN, "--entrypoint": RUN, "--pid": ELSE, "--network": ELSE, "--net": ELSE },
    longFamily: { "--volume": ELSE, "--mount": ELSE, "--cap-add": RUN, "--device": ELSE, "--env-file": ELSE },
  },
  find: {
    singleDashLong: true,
    long: {
      "-exec": RUN,
      "-execdir": RUN,
      "-ok": RUN,
      "-okdir": RUN,
      "-delete": DEL,
      "-fls": W,
    },
    longFamily: { "-fprint": W },
  },
  go: {
    singleDashLong: true,
    long: {
      "-o": W,
      "-c": W,
      "-i": W,
      "-u": W,
      "-exec": RUN,
      "-toolexec": RUN,
      "-overlay": RUN,
      "-modfile": ELSE,
      "-fuzz": W,
      "-C": ELSE,
    },
    longFamily: {
      "-ldflags": RUN, // -ldflags=-extld=PROGRAM
      "-gccgoflags": RUN,
      "-coverprofile": W,
      "-cpuprofile": W,
      "-memprofile": W,
      "-blockprofile": W,
      "-mutexprofile": W,
      "-trace": W,
      "-outputdir": W,
      "-test.": W,
    },
  },
};
/** Other names of the same program. */
const SAME_AS: Readonly<Record<string, string>> = {
  podman: "docker",
  gsed: "sed",
  bsdtar: "tar",
  gmake: "make",
};

/** A table's own entry (never one inherited from Object: a program named `constructor`). */
function entry<T>(table: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return table && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** One word that stretches a command, and what it does. */
export interface Stretch {
  word: string;
  does: OptionEffect;
}

function longEffect(name: string, table: OptionTable | undefined): OptionEffect | undefined {
  if (!table) return undefined;
  const exact = entry(table.long, name);
  if (exact) return exact;
  for (const [family, does] of Object.entries(table.longFamily ?? {}))
    if (name.startsWith(family)) return does;
  return undefined;
}

/** What a long option does when `name` is only the beginning of a stretching one (`--ext` of `--ext-diff`). */
function abbreviatedEffect(
  name: string,
  tables: readonly (OptionTable | undefined)[],
): OptionEffect | undefined {
  // `--` alone ends the options; one letter more is the shortest beginning a parser takes.
  if (name.length < 3) return undefined;
  for (const table of tables)
    for (const names of [table?.long, table?.longFamily])
      for (const [full, does] of Object.entries(names ?? {})) if (full.startsWith(name)) return does;
  return undefined;
}

/** What one word does as an option of `program`, or undefined when it is not a stretching option. */
function optionEffect(program: string, word: string): OptionEffect | undefined {
  if (!word.startsWith("-") || word === "-" || word === "--") return undefined;
  const own = entry(PER_PROGRAM, entry(SAME_AS, program) ?? program);
  if (own?.singleDashLong) {
    // `-exec`, `--exec`, `-o=x` and `-C` alike; the name as written, then lower-cased.
    const name = `-${word.replace(/^--?/, "").split("=")[0]!}`;
    return (
      longEffect(name, own) ??
      longEffect(name.toLowerCase(), own) ??
      longEffect(`-${name}`.toLowerCase(), EVERY_PROGRAM)
    );
  }
  if (word.startsWith("--")) {
    const name = word.split("=")[0]!.toLowerCase();
    const does = longEffect(name, own) ?? longEffect(name, EVERY_PROGRAM);
    return does ?? (own?.abbreviates ? abbreviatedEffect(name, [own, EVERY_PROGRAM]) : undefined);
  }
  // A cluster of short options, or one with its value attached: every letter counts.
  for (const ch of word.slice(1)) {
    const does = entry(own?.short, ch) ?? entry(EVERY_PROGRAM.short, ch);
    if (does) return does;
  }
  return undefined;
}

/**
 * The first of `words` — the words a command has beyond what was approved — that is an option
 * which writes, deletes, runs something, sends data or acts elsewhere for `program` (its first
 * word; a path is read by its base name), with what it does; undefined when none is.
 * A program in OPERAND_PROGRAMS is not judged here: its extra words are never harmless.
 */
export function findStretch(program: string, words: readonly string[]): Stretch | undefined {
  const name = programName(program);
  for (const word of words) {
    const does = optionEffect(name, word);
    if (does) return { word, does };
  }
  return undefined;
}

/** The first stretching word among `words` for `program` (see findStretch), or undefined. */
export function stretchingOption(program: string, words: readonly string[]): string | undefined {
  return findStretch(program, words)?.word;
}
