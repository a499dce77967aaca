/**
 * Keeps stdout for the protocol. Libraries that print with `console.log` (web-tree-
 * sitter does when a grammar has no language function) would corrupt `scoot serve`'s NDJSON
 * stream or a `-e` answer; these helpers send such output to stderr instead.
 */

type ConsoleWriter = (...args: unknown[]) => void;

const STDOUT_METHODS = ["log", "info", "debug"] as const;

/** Sends console.log/info/debug to stderr for the rest of the process (`scoot serve`). */
export function consoleToStderr(): void {
  for (const m of STDOUT_METHODS) console[m] = console.error.bind(console) as ConsoleWriter;
}

/**
 * Runs `fn` with console.log/info/debug sent to stderr, restoring them afterwards. Other code
 * that logs while `fn` is pending goes to stderr too, which is always safe.
 */
export async function withConsoleOnStderr<T>(fn: () => Promise<T>): Promise<T> {
  const saved = STDOUT_METHODS.map((m) => console[m]);
  for (const m of STDOUT_METHODS) console[m] = console.error.bind(console) as ConsoleWriter;
  try {
    return await fn();
  } finally {
    STDOUT_METHODS.forEach((m, i) => {
      console[m] = saved[i]!;
    });
  }
}

/** Emscripten's print hooks (bound once, at module init): both to stderr. */
export const STDERR_PRINT = {
  print: (s: string) => process.stderr.write(`${s}\n`),
  printErr: (s: string) => process.stderr.write(`${s}\n`),
};
