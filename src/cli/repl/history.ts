/**
 * The REPL's input history across launches (docs/keyboard.md "The REPL"): `<home>/state/repl_history`,
 * mode 0600, newest line first, at most REPL_HISTORY_MAX entries. Every entry is redacted
 * before it is written, so a token typed into a goal never lands on disk. A history file that
 * cannot be read (a FIFO, a symlink, too large) is ignored with a warning, never followed.
 */
import fs from "node:fs";
import path from "node:path";
import { atomicWriteFile } from "../../core/atomic-write.js";
import { redact } from "../../core/redact.js";
import { readHomeFile } from "../../core/safe-open.js";

/** Entries kept (readline's history size too). */
export const REPL_HISTORY_MAX = 500;
/** One entry is cut to this many characters. */
export const REPL_HISTORY_ENTRY_MAX = 4000;
/** A history file larger than this is not read. */
const HISTORY_FILE_MAX_BYTES = REPL_HISTORY_MAX * (REPL_HISTORY_ENTRY_MAX + 1) * 4;

export function historyFile(stateDir: string): string {
  return path.join(stateDir, "repl_history");
}

/** One line per entry: a pasted block's newlines are kept as `\n` escapes. */
function encode(entry: string): string {
  return redact(entry.slice(0, REPL_HISTORY_ENTRY_MAX)).replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function decode(line: string): string {
  return line.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\"));
}

/** Newest first, as readline wants it. */
export function loadHistory(file: string, warn: (message: string) => void): string[] {
  const read = readHomeFile(file, { maxBytes: HISTORY_FILE_MAX_BYTES, noFollow: true });
  if (!read.ok) {
    if (!read.missing) warn(`REPL history not loaded: ${read.error}`);
    return [];
  }
  return read.text
    .split("\n")
    .filter((l) => l !== "")
    .slice(0, REPL_HISTORY_MAX)
    .map(decode);
}

export function saveHistory(file: string, entries: readonly string[]): string | undefined {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  } catch (e) {
    return `REPL history not saved: ${(e as Error).message}`;
  }
  const text = `${entries.slice(0, REPL_HISTORY_MAX).map(encode).join("\n")}\n`;
  const written = atomicWriteFile(file, text, { mode: 0o600 });
  return written.ok ? undefined : `REPL history not saved: ${written.error}`;
}
