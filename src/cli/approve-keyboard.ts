/**
 * The keyboard approver (docs/safety.md "Approval"): in a REPL on a terminal, a call with an effect
 * is shown — the whole command, or the diff of a file change before it is made — and one key
 * answers: `y` (run once), `a` (always, for what the question says "always" covers), `n` or
 * Esc (refuse; `n` then takes an optional reason for the model). No Enter is needed.
 *
 * The question cannot be misread: its last line names the call (`approve file_write BIG.md
 * (+60 lines)? [y/a/n]`), so a diff taller than the screen never scrolls the subject away —
 * it is folded (its first and last lines shown, the fold saying how many lie between) and
 * `d` pages through all of it. Model text passes `terminalText`, so control bytes, bidi and
 * invisible characters show escaped and cannot rewrite the question; their presence is
 * warned about. After the answer one line says what was decided; the diff is not shown again.
 */
import { type ApprovalAnswer, type Approver, alwaysCovers, callSummary } from "../agent/approval.js";
import type { Ready } from "../agent/call-record.js";
import { redact } from "../core/redact.js";
import { terminalText } from "../core/terminal-text.js";
import { type DiffLine, paintDiffLine } from "../core/unified-diff.js";
import { foldLines, pageLines, readKeyedLine, screenRows } from "./question-parts.js";
import { wrapText } from "./view/wrap.js";

/** How much of a non-file, non-shell input is shown (JSON text). */
export const SHOWN_INPUT_MAX_CHARS = 4000;
/** Screen rows the question keeps for itself: the title, the key line, the prompt and a margin. */
const QUESTION_ROWS = 5;
/** The subject on the prompt line leaves this many columns for the rest of the question. */
const PROMPT_ROOM = 24;
/** The shortest subject the prompt line cuts to, however narrow the terminal. */
const MIN_SUBJECT_CHARS = 20;
/** A refusal reason typed at the keyboard is cut to this many characters. */
const REASON_MAX_CHARS = 500;

/** Characters that change what a person sees without showing themselves (escaped on screen). */
const HIDDEN =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

export interface KeyboardIo {
  /**
   * The next single key (after the question is shown); undefined when input closed or the signal
   * fired. `text`: a key of a line typed for the question (the reason for a refusal).
   */
  key(signal: AbortSignal, kind?: "answer" | "text"): Promise<string | undefined>;
  /** The question's prompt line is now `text` (the REPL shows a typed-ahead line after it). */
  promptShown?(text: string): void;
  /** Writes text to the terminal as it is (callers make it safe). */
  write(text: string): void;
  color: boolean;
  /** The terminal's size now. */
  size(): { rows: number; columns: number };
  /**
   * After an "always": offers to keep it as a rule for this project. Returns the line to show
   * once saved, or undefined when there is nowhere to save it.
   */
  offerRule?(call: Ready): { question: string; save(): string } | undefined;
}

function safe(text: string): string {
  return terminalText(redact(text));
}

/** Counts what `terminalText` escapes in model text: NUL, other controls, invisible and bidi characters. */
export function hiddenCharacters(text: string): { nul: number; other: number } {
  let nul = 0;
  let other = 0;
  for (const m of text.matchAll(HIDDEN)) {
    if (m[0] === "\u0000") nul += 1;
    else other += 1;
  }
  return { nul, other };
}

function hiddenWarning(text: string): string | undefined {
  const { nul, other } = hiddenCharacters(text);
  if (nul + other === 0) return undefined;
  const parts = [
    ...(nul > 0 ? [`${nul} NUL byte${nul === 1 ? "" : "s"}`] : []),
    ...(other > 0 ? [`${other} control or invisible character${other === 1 ? "" : "s"}`] : []),
  ];
  return `⚠ this holds ${parts.join(" and ")}, shown escaped (\\x00, \\u202e): read it with care`;
}

/** The size of the change, for the prompt line: `+60 lines`, `+3 -1 lines`. */
function sizeNote(added: number, removed: number, created: boolean): string {
  if (created) return `+${added} line${added === 1 ? "" : "s"}, new file`;
  return `+${added} -${removed} line${added + removed === 1 ? "" : "s"}`;
}

interface Shown {
  /** The call's subject, one line: `file_write BIG.md`. */
  subject: string;
  /** The first line's, when the lines below already show the subject's argument whole: `bash`. */
  title?: string;
  /** `(+60 lines)` and the like, or empty. */
  size: string;
  lines: DiffLine[];
  warning?: string;
}

/** The call as lines to show, whole (folding is the caller's). */
async function describe(request: Ready): Promise<Shown> {
  const subject = safe(callSummary(request).replace(/ {2}/, " "));
  const change = request.change;
  if (change?.after.ok) {
    // The diff of the planned change: the very bytes the tool will write if this is allowed.
    const { diffLines } = await import("../core/unified-diff.js");
    const before = change.before === null ? null : change.before.toString("utf8");
    const d = diffLines(change.shown, before, change.after.value, { exact: true });
    const warning = hiddenWarning(change.after.value);
    return {
      subject,
      size: `(${sizeNote(d.added, d.removed, before === null)})`,
      lines: [...d.header, ...d.body],
      ...(warning ? { warning } : {}),
    };
  }
  if (typeof request.input === "string") {
    const body = safe(request.input).split("\n");
    const warning = hiddenWarning(request.input);
    return {
      subject,
      // The lines below are the whole command: the first line names only the tool.
      title: safe(request.action),
      size: body.length > 1 ? `(${body.length} lines)` : "",
      lines: body.map((text) => ({ text: `  ${text}` })),
      ...(warning ? { warning } : {}),
    };
  }
  const json = JSON.stringify(request.input, null, 2) ?? "";
  const cut = json.length > SHOWN_INPUT_MAX_CHARS;
  const text = cut ? json.slice(0, SHOWN_INPUT_MAX_CHARS) : json;
  const lines: DiffLine[] = safe(text)
    .split("\n")
    .map((t) => ({ text: `  ${t}` }));
  if (cut)
    lines.push({
      style: "note",
      text: `  … ${json.length - SHOWN_INPUT_MAX_CHARS} more characters not shown`,
    });
  const warning = hiddenWarning(json);
  return { subject, size: "", lines, ...(warning ? { warning } : {}) };
}

function cutSubject(subject: string, columns: number): string {
  const max = Math.max(MIN_SUBJECT_CHARS, columns - PROMPT_ROOM);
  const chars = [...subject];
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : subject;
}

export function keyboardApprover(io: KeyboardIo): Approver {
  const bold = (t: string) => (io.color ? `\u001b[1m${t}\u001b[0m` : t);
  const green = (t: string) => (io.color ? `\u001b[32m${t}\u001b[0m` : t);
  const red = (t: string) => (io.color ? `\u001b[31m${t}\u001b[0m` : t);

  return {
    async ask(request, signal): Promise<ApprovalAnswer> {
      const shown = await describe(request);
      const { rows, columns } = io.size();
      const always = safe(alwaysCovers(request));
      const subject = `${cutSubject(shown.subject, columns)}${shown.size ? ` ${shown.size}` : ""}`;
      const tail = screenRows(
        [
          ...(shown.warning ? [{ text: shown.warning }] : []),
          { text: `  a = always: ${always}, for this session` },
          { text: "  y once · a always · n/Esc refuse · d page" },
        ],
        columns,
      );
      const { shown: lines } = foldLines(
        screenRows(shown.lines, columns),
        rows - QUESTION_ROWS - tail.length,
      );
      const out = [
        `${bold("●")} ${bold(shown.title !== undefined ? `${shown.title}${shown.size ? ` ${shown.size}` : ""}` : subject)}`,
        ...lines.map((l) => paintDiffLine(l, io.color)),
        ...tail.map((l) => l.text),
      ];
      io.write(`${out.join("\n")}\n`);
      const prompt = `${bold(`approve ${subject}?`)} [y/a/n] `;
      const showPrompt = (before = "") => {
        io.write(`${before}${prompt}`);
        io.promptShown?.(prompt);
      };
      showPrompt();
      for (;;) {
        const key = await io.key(signal);
        if (key === undefined) {
          io.write("\n");
          return { kind: "refuse", reason: "no answer (input closed or interrupted)" };
        }
        const k = key.toLowerCase();
        if (k === "y") {
          io.write(`\r\u001b[2K${green("✓")} ${subject} · run once\n`);
          return { kind: "once" };
        }
        if (k === "a") {
          io.write(`\r\u001b[2K${wrapped(`${green("✓")} ${subject} · always: ${always}, this session`)}\n`);
          await offerRule(request, signal);
          return { kind: "always" };
        }
        if (k === "n" || key === "\u001b") {
          io.write(`\r\u001b[2K${red("✗ refused by you")}: ${subject}\n`);
          if (key === "\u001b") return { kind: "refuse" };
          const why = await readKeyedLine(
            io,
            signal,
            "reason for the model (optional, Enter to skip): ",
            REASON_MAX_CHARS,
          );
          return why ? { kind: "refuse", reason: why } : { kind: "refuse" };
        }
        if (k === "d") {
          io.write("\n");
          await pageLines(io, shown.lines, signal);
          showPrompt();
          continue;
        }
        showPrompt(
          `\r\u001b[2K${wrapped("  press y (run once), a (always) or n (refuse) — or type yes, always or no and Enter")}\n`,
        );
      }
    },
  };

  async function offerRule(request: Ready, signal: AbortSignal): Promise<void> {
    const offer = io.offerRule?.(request);
    if (!offer) return;
    // Wrapped between words; the last row is the prompt line the answer follows.
    // (The space the answer follows is added after: wrapping drops a line's trailing space.)
    const rows = `${wrapped(`${offer.question} [y/N]`)} `;
    io.write(rows);
    io.promptShown?.(rows.slice(rows.lastIndexOf("\n") + 1));
    const key = await io.key(signal);
    if (key?.toLowerCase() !== "y") {
      io.write("no\n");
      return;
    }
    io.write(`yes\n${wrapped(offer.save())}\n`);
  }

  /** A line Scoot writes, wrapped between words at the terminal's width (docs/keyboard.md "Lines on a terminal"). */
  function wrapped(text: string): string {
    return wrapText(text, Math.max(MIN_SUBJECT_CHARS, io.size().columns - 1));
  }
}
