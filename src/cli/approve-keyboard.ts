/**
 * The keyboard approver (docs/safety.md "Approval"): in a REPL on a terminal, a call with an effect
 * is shown — the whole command, or the diff of a file change before it is made — and waits
 * for `y` (run once), `a` (always, for the call's scope, for the session) or
 * `n` (refuse, then an optional reason the model receives).
 *
 * The call is shown in full, never only its one-line summary: a command padded with spaces
 * or split over lines must not hide its second half behind an innocent first one. Model text
 * passes `terminalText` so it cannot rewrite the question with escape sequences.
 */
import { type ApprovalAnswer, type Approver, alwaysCovers, callSummary } from "../agent/approval.js";
import type { Ready } from "../agent/call-record.js";
import { redact } from "../core/redact.js";
import { terminalText } from "../core/terminal-text.js";

/** How much of a non-file, non-shell input is shown (JSON text). */
export const SHOWN_INPUT_MAX_CHARS = 4000;

export interface KeyboardIo {
  /** Asks one line; undefined when the input closed or the signal fired. */
  question(prompt: string, signal: AbortSignal): Promise<string | undefined>;
  /** Writes text to the terminal as it is (callers make it safe). */
  write(text: string): void;
  color: boolean;
}

const YES = new Set(["y", "yes"]);
const ALWAYS = new Set(["a", "always"]);
const NO = new Set(["n", "no"]);

function safe(text: string): string {
  return terminalText(redact(text));
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n");
}

/** The call as shown above the question. */
async function describe(request: Ready, color: boolean): Promise<string> {
  const bold = (t: string) => (color ? `\u001b[1m${t}\u001b[0m` : t);
  const lines = [`${bold("approve?")} ${safe(callSummary(request))}`];
  const change = request.change;
  if (change?.after.ok) {
    // The diff of the planned change: the very bytes the tool will write if this is allowed.
    const { renderUnifiedDiff } = await import("../core/unified-diff.js");
    const before = change.before === null ? null : change.before.toString("utf8");
    lines.push(renderUnifiedDiff(change.shown, before, change.after.value, { color, exact: true }).trimEnd());
  } else if (typeof request.input === "string") {
    lines.push(`  command:\n${indent(safe(request.input))}`);
  } else {
    const json = JSON.stringify(request.input, null, 2) ?? "";
    const shown =
      json.length > SHOWN_INPUT_MAX_CHARS
        ? `${json.slice(0, SHOWN_INPUT_MAX_CHARS)}\n… ${json.length - SHOWN_INPUT_MAX_CHARS} more characters`
        : json;
    lines.push(`  input:\n${indent(safe(shown))}`);
  }
  lines.push(`  y = run once · a = always (${safe(alwaysCovers(request))}, this session) · n = refuse`);
  return `${lines.join("\n")}\n`;
}

export function keyboardApprover(io: KeyboardIo): Approver {
  return {
    async ask(request, signal): Promise<ApprovalAnswer> {
      io.write(await describe(request, io.color));
      for (;;) {
        const line = await io.question("approve [y/a/n]: ", signal);
        if (line === undefined) return { kind: "refuse", reason: "no answer (input closed or interrupted)" };
        const word = line.trim().toLowerCase();
        if (YES.has(word)) return { kind: "once" };
        if (ALWAYS.has(word)) return { kind: "always" };
        if (NO.has(word)) {
          const reason = await io.question("reason for the model (optional, Enter to skip): ", signal);
          const text = reason?.trim();
          return text ? { kind: "refuse", reason: text } : { kind: "refuse" };
        }
        io.write("  please answer y (run once), a (always) or n (refuse)\n");
      }
    },
  };
}
