/**
 * The REPL's slash commands as one table (docs/keyboard.md "The REPL"): name, usage, one line of
 * help and the handler. A line whose first word looks like a command never reaches the
 * model: a known one runs, an unknown one prints this list. Commands added later append a
 * row here.
 */
import fs from "node:fs";

export interface ReplCommandContext {
  /** Text after the command word, trimmed. */
  arg: string;
  out(text: string): void;
  err(text: string): void;
}

export interface ReplCommand {
  name: string;
  usage: string;
  help: string;
  /** `argument`: whether the command takes text after its name. */
  argument: "none" | "required" | "optional";
  /** Returns (or resolves to) "exit" to leave the REPL; anything else stays. */
  run(ctx: ReplCommandContext): unknown;
}

/** The first word is a command word: a slash and a name, e.g. `/status`, `/nonsense`. */
const COMMAND_WORD = /^\/[A-Za-z][A-Za-z0-9_-]*$/;

/**
 * Whether `line` is a command line. A first word that names an existing path (`/tmp is
 * what?`) is a goal about that path, not a command.
 */
export function isCommandLine(line: string): boolean {
  const word = line.split(/\s+/, 1)[0]!;
  if (!COMMAND_WORD.test(word)) return false;
  return !fs.existsSync(word);
}

export function commandList(commands: readonly ReplCommand[]): string {
  const width = Math.max(...commands.map((c) => c.usage.length));
  return `${commands.map((c) => `  ${c.usage.padEnd(width)}  ${c.help}`).join("\n")}\n`;
}

/** Runs one command line; "exit" when the REPL should end. */
export async function runCommandLine(
  line: string,
  commands: readonly ReplCommand[],
  io: { out(text: string): void; err(text: string): void },
): Promise<"exit" | undefined> {
  const trimmed = line.trim();
  const word = trimmed.split(/\s+/, 1)[0]!;
  const arg = trimmed.slice(word.length).trim();
  const command = commands.find((c) => c.name === word || c.name === word.toLowerCase());
  if (!command) {
    io.err(
      `scoot: unknown command ${word}; nothing was sent to the model. Commands:\n${commandList(commands)}`,
    );
    return;
  }
  if (command.argument === "none" && arg !== "") {
    io.err(`scoot: ${command.name} takes no argument (usage: ${command.usage})\n`);
    return undefined;
  }
  if (command.argument === "required" && arg === "") {
    io.err(`usage: ${command.usage}\n`);
    return undefined;
  }
  const outcome = await command.run({ arg, out: io.out, err: io.err });
  return outcome === "exit" ? "exit" : undefined;
}
