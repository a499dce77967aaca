/**
 * The files `backend.api_key_cmd` reads (docs/safety.md "What is protected"): the sandbox hides
 * them, the gate refuses them to the file tools, and the token resolver checks them as files
 * Scoot trusts (trusted-file.ts) before the command runs.
 */
import fs from "node:fs";
import path from "node:path";

/** Where the token command's words are read from, besides the user's home. */
export interface TokenCommandPlaces {
  /** Scoot's environment, for `$XDG_*_HOME` (their defaults when unset). */
  env?: NodeJS.ProcessEnv;
  /** Scoot's home: the token command's working directory, where relative words lead. */
  scootHome?: string;
  /** The project root: relative words are tried there too, in case a command runs from it. */
  projectRoot?: string;
}

/** The XDG base directories a token command may name, with the default each takes when unset. */
const XDG_DEFAULTS: Readonly<Record<string, string>> = {
  XDG_CONFIG_HOME: ".config",
  XDG_DATA_HOME: ".local/share",
  XDG_CACHE_HOME: ".cache",
  XDG_STATE_HOME: ".local/state",
};

/** `$NAME` or `${NAME}` at the start of a word. */
const LEADING_VARIABLE = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/;

/** The value the token command's shell would give a leading variable, for the ones worth knowing. */
function expandLeading(word: string, userHome: string, env: NodeJS.ProcessEnv): string | undefined {
  const m = LEADING_VARIABLE.exec(word);
  if (!m) return word;
  const name = (m[1] ?? m[2])!;
  let value: string | undefined;
  if (name === "HOME") value = userHome;
  else if (name in XDG_DEFAULTS) {
    const set = env[name];
    value = set && path.isAbsolute(set) ? set : path.join(userHome, XDG_DEFAULTS[name]!);
  }
  return value === undefined ? undefined : value + word.slice(m[0].length);
}

/**
 * The words of `backend.api_key_cmd` that name an existing file: what the command reads. A word
 * is taken as its shell would see it: quotes and a leading `NAME=` dropped, `~`, `$HOME`,
 * `${HOME}` and `$XDG_*_HOME` expanded, and a relative word resolved against Scoot's home (the
 * command's working directory) and the project root. Reading too much only hides a file more.
 */
export function tokenCommandFiles(
  cmd: string | undefined,
  userHome: string,
  places: TokenCommandPlaces = {},
): string[] {
  if (!cmd) return [];
  const env = places.env ?? process.env;
  const bases = [places.scootHome, places.projectRoot].filter((b): b is string => b !== undefined);
  const out: string[] = [];
  for (const raw of cmd.split(/[\s;|&<>()`]+/)) {
    const unquoted = raw.replace(/['"]/g, "").replace(/^[A-Za-z_][A-Za-z0-9_]*=/, "");
    const word = expandLeading(unquoted, userHome, env);
    if (word === undefined || word === "") continue;
    let candidates: string[];
    if (word === "~" || word.startsWith("~/")) candidates = [path.join(userHome, word.slice(2))];
    else if (word.startsWith("/")) candidates = [word];
    else if (word.startsWith("-") || word.includes("$")) candidates = [];
    else candidates = bases.map((b) => path.resolve(b, word));
    for (const p of candidates) {
      const abs = path.resolve(p);
      if (isFile(abs) && !out.includes(abs)) out.push(abs);
    }
  }
  return out;
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    // Not reachable (a word that runs through a file, a directory we may not search): not a file.
    return false;
  }
}
