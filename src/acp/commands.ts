/**
 * The slash commands an editor offers (docs/editors.md "Editors (ACP)"), sent as
 * `available_commands_update` when a session opens. A prompt that starts with one of them is
 * answered by Scoot itself and never reaches the model; any other text starting with `/` is
 * an ordinary goal (a path like `/etc/hosts` is a fine thing to ask about).
 */
import type { AvailableCommand } from "@agentclientprotocol/sdk";

export interface CommandFacts {
  sessionId: string;
  model: string;
  mode: string;
  approval: string;
  contextWindow: number | undefined;
  prompts: number;
  tokens: { prompt: number; completion: number; total: number };
  /** AGENTS.md read, its budget and what was left out (docs/context.md "Project instructions"). */
  instructions: string;
}

const COMMANDS: readonly AvailableCommand[] = [
  { name: "status", description: "Show the model, policy mode, approval, context window and tokens used" },
  {
    name: "undo",
    description: "Revert the file changes of the last prompt that made any (not bash's)",
    input: { hint: "--force to overwrite files changed since" },
  },
  { name: "diff", description: "Show the file changes this session made (not bash's)" },
  { name: "compact", description: "Summarise the conversation so far to free context" },
];

export function availableCommands(): AvailableCommand[] {
  return COMMANDS.map((c) => ({ ...c }));
}

/** The command a prompt names, when its text is `/<known command>` (and arguments). */
export function commandOf(goal: string): { name: string; args: string } | undefined {
  const m = /^\/([a-z][a-z-]*)(?:\s+([\s\S]*))?$/.exec(goal.trim());
  if (!m || !COMMANDS.some((c) => c.name === m[1])) return undefined;
  return { name: m[1]!, args: (m[2] ?? "").trim() };
}

export function statusText(f: CommandFacts): string {
  const window = f.contextWindow === undefined ? "not known yet" : `${f.contextWindow} tokens`;
  return [
    `session: ${f.sessionId}`,
    `model: ${f.model}`,
    `policy mode: ${f.mode}`,
    `approval: ${f.approval}`,
    `context window: ${window}`,
    `instructions: ${f.instructions}`,
    `prompts: ${f.prompts}; tokens: ${f.tokens.total} (${f.tokens.prompt} prompt, ${f.tokens.completion} completion)`,
  ].join("\n");
}
