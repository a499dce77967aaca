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

/** How much of a non-file, non-shell input is shown (JSON text). */
export const SHOWN_INPUT_MAX_CHARS = 4000;
/** Screen rows the question keeps for itself: the title, the key line, the prompt and a margin. */
const QUESTION_ROWS = 5;
/** A folded view still shows at least this many lines of the change. */
const MIN_SHOWN_LINES = 6;
/** The subject on the prompt line leaves this many columns for the rest of the question. */
const PROMPT_ROOM = 24;
/** The shortest subject the prompt line cuts to, however narrow the terminal. */
const MIN_SUBJECT_CHARS = 20;
/** The narrowest row a long line is broken into (a terminal narrower than this wraps it). */
const MIN_ROW_CHARS = 20;
/** Marks a row that continues the line above it. */
const CONTINUED = "↪ ";
/** A refusal reason typed at the keyboard is cut to this many characters. */
const REASON_MAX_CHARS = 500;

/** Characters that change what a person sees without showing themselves (escaped on screen). */
const HIDDEN =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

export interface KeyboardIo {
  /** The next single key (after the question is shown); undefined when input closed or the signal fired. */
  key(signal: AbortSignal): Promise<string | undefined>;
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

/**
 * Lines as screen rows: a line wider than the screen is broken into rows (the rows after the
 * first marked `↪`), never cut, so nothing past the edge hides — a command padded with spaces
 * shows its tail. Folding then counts rows, so what is shown fits the screen.
 */
export function screenRows(lines: DiffLine[], columns: number): DiffLine[] {
  const width = Math.max(MIN_ROW_CHARS, columns - 1);
  const rows: DiffLine[] = [];
  for (const line of lines) {
    const chars = [...line.text];
    if (chars.length <= width) {
      rows.push(line);
      continue;
    }
    rows.push({ ...line, text: chars.slice(0, width).join("") });
    for (let at = width; at < chars.length; at += width - CONTINUED.length) {
      rows.push({ ...line, text: `${CONTINUED}${chars.slice(at, at + width - CONTINUED.length).join("")}` });
    }
  }
  return rows;
}

/**
 * The lines that fit under `rows`: all of them, or the first and the last with one fold line
 * between that says how many are folded and how to see them.
 */
export function foldLines(lines: DiffLine[], rows: number): { shown: DiffLine[]; folded: number } {
  const budget = Math.max(MIN_SHOWN_LINES, rows);
  if (lines.length <= budget) return { shown: lines, folded: 0 };
  const room = budget - 1;
  const head = Math.ceil(room / 2);
  const tail = room - head;
  const folded = lines.length - head - tail;
  return {
    shown: [
      ...lines.slice(0, head),
      {
        style: "note",
        text: `  ┄┄ ${folded} of ${lines.length} lines folded · press d to page through all of them ┄┄`,
      },
      ...lines.slice(lines.length - tail),
    ],
    folded,
  };
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

  /** Pages through every line, a screen at a time; any key but space/Enter/d goes back. */
  const page = async (lines: DiffLine[], signal: AbortSignal): Promise<void> => {
    const { rows: height, columns } = io.size();
    const per = Math.max(MIN_SHOWN_LINES, height - 2);
    const all = screenRows(lines, columns);
    const pages = Math.ceil(all.length / per);
    for (let p = 0; p < pages; p++) {
      const chunk = all.slice(p * per, (p + 1) * per);
      io.write(`${chunk.map((l) => paintDiffLine(l, io.color)).join("\n")}\n`);
      if (p === pages - 1) break;
      io.write(`-- page ${p + 1} of ${pages} · space: next page · q: back to the question --`);
      const key = await io.key(signal);
      io.write("\r\u001b[2K");
      if (key === undefined || !(key === " " || key === "\r" || key === "d")) break;
    }
  };

  /** The reason after `n`: typed keys until Enter, echoed; Esc skips. */
  const reason = async (signal: AbortSignal): Promise<string | undefined> => {
    io.write("reason for the model (optional, Enter to skip): ");
    let text = "";
    for (;;) {
      const key = await io.key(signal);
      if (key === undefined || key === "\u001b") break;
      if (key === "\r" || key === "\n") break;
      if (key === "\u007f" || key === "\b") {
        if (text.length > 0) {
          text = [...text].slice(0, -1).join("");
          io.write("\b \b");
        }
        continue;
      }
      if (/^[\u0000-\u001f]$/.test(key) || key.startsWith("\u001b") || text.length >= REASON_MAX_CHARS)
        continue;
      text += key;
      io.write(safe(key));
    }
    io.write("\n");
    return text.trim() || undefined;
  };

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
        `${bold("●")} ${bold(subject)}`,
        ...lines.map((l) => paintDiffLine(l, io.color)),
        ...tail.map((l) => l.text),
      ];
      io.write(`${out.join("\n")}\n`);
      const prompt = `${bold(`approve ${subject}?`)} [y/a/n] `;
      io.write(prompt);
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
          io.write(`\r\u001b[2K${green("✓")} ${subject} · always: ${always}, this session\n`);
          await offerRule(request, signal);
          return { kind: "always" };
        }
        if (k === "n" || key === "\u001b") {
          io.write(`\r\u001b[2K${red("✗ refused by you")}: ${subject}\n`);
          if (key === "\u001b") return { kind: "refuse" };
          const why = await reason(signal);
          return why ? { kind: "refuse", reason: why } : { kind: "refuse" };
        }
        if (k === "d") {
          io.write("\n");
          await page(shown.lines, signal);
          io.write(prompt);
          continue;
        }
        io.write(`\r\u001b[2K  press y (run once), a (always) or n (refuse)\n${prompt}`);
      }
    },
  };

  async function offerRule(request: Ready, signal: AbortSignal): Promise<void> {
    const offer = io.offerRule?.(request);
    if (!offer) return;
    io.write(`${offer.question} [y/N] `);
    const key = await io.key(signal);
    if (key?.toLowerCase() !== "y") {
      io.write("no\n");
      return;
    }
    io.write(`yes\n${offer.save()}\n`);
  }
}
