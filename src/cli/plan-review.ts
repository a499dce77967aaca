/**
 * The plan review at the keyboard (docs/keyboard.md "Plan mode"): the numbered plan, then one
 * key decides — `y` runs it, `n` drops it, `e` takes a line of feedback that is sent to the
 * model for a new plan. As with an approval, the last line names what is asked (`run this plan
 * (3 steps)? [y/n/e]`), a plan taller than the screen is folded (`d` pages through it), and the
 * model's text is shown escaped, so it cannot rewrite the question.
 */
import { redact } from "../core/redact.js";
import { terminalText } from "../core/terminal-text.js";
import { formatPlan } from "../tools/plan.js";
import type { Plan } from "../tools/plan-shape.js";
import { hiddenCharacters } from "./approve-keyboard.js";
import { foldLines, pageLines, type QuestionIo, readKeyedLine, screenRows } from "./question-parts.js";
import { makeStyle } from "./view/style.js";
import { wrapText } from "./view/wrap.js";

/** Rows the question keeps for itself: the title, the key line, the prompt and a margin. */
const QUESTION_ROWS = 5;
/** Feedback typed for a new plan is cut to this many characters. */
export const FEEDBACK_MAX_CHARS = 2000;
/** The hash is shown by its first characters: enough to tell two plans apart at a glance. */
const SHOWN_HASH_CHARS = 12;

export type PlanReview = { kind: "run" } | { kind: "drop" } | { kind: "revise"; feedback: string };

function steps(n: number): string {
  return `${n} step${n === 1 ? "" : "s"}`;
}

/** Shows the plan and asks; the answer is one key (and, after `e`, a line of feedback). */
export async function reviewPlan(
  io: QuestionIo,
  plan: Plan,
  sha256: string,
  signal: AbortSignal,
): Promise<PlanReview> {
  const { bold, green, red } = makeStyle(io.color);
  const text = formatPlan(plan).trimEnd();
  const { rows, columns } = io.size();
  // Broken between words at the width (docs/keyboard.md "Lines on a terminal"); only a word
  // longer than a row is left to screenRows to break.
  const words = (lines: string[]) =>
    lines.flatMap((t) => wrapText(t, columns - 1).split("\n")).map((t) => ({ text: t }));
  const lines = words(
    terminalText(redact(text))
      .split("\n")
      .map((t) => `  ${t}`),
  );
  const { nul, other } = hiddenCharacters(text);
  const tail = screenRows(
    words([
      ...(nul + other > 0
        ? [`⚠ this plan holds ${nul + other} control or invisible characters, shown escaped`]
        : []),
      "  y run it · n drop it · e feedback for a new plan · d page",
    ]),
    columns,
  );
  const { shown } = foldLines(screenRows(lines, columns), rows - QUESTION_ROWS - tail.length);
  const subject = `this plan (${steps(plan.steps.length)})`;
  io.write(
    `${[`${bold("●")} ${bold(`plan · ${steps(plan.steps.length)} · sha256 ${sha256.slice(0, SHOWN_HASH_CHARS)}`)}`, ...shown.map((l) => l.text), ...tail.map((l) => l.text)].join("\n")}\n`,
  );
  const prompt = `${bold(`run ${subject}?`)} [y/n/e] `;
  const showPrompt = (before = "") => {
    io.write(`${before}${prompt}`);
    io.promptShown?.(prompt);
  };
  showPrompt();
  for (;;) {
    const key = await io.key(signal);
    if (key === undefined) {
      io.write("\n");
      return { kind: "drop" };
    }
    const k = key.toLowerCase();
    if (k === "y") {
      io.write(`\r\u001b[2K${green("✓")} running ${subject}\n`);
      return { kind: "run" };
    }
    if (k === "n" || key === "\u001b") {
      io.write(`\r\u001b[2K${red("✗ dropped")} ${subject}: nothing of it was run\n`);
      return { kind: "drop" };
    }
    if (k === "e") {
      io.write("\r\u001b[2K");
      const feedback = await readKeyedLine(
        io,
        signal,
        "feedback for a new plan (Enter sends, Esc goes back): ",
        FEEDBACK_MAX_CHARS,
        "discard",
      );
      if (feedback !== undefined) return { kind: "revise", feedback };
      if (signal.aborted) return { kind: "drop" };
      showPrompt();
      continue;
    }
    if (k === "d") {
      io.write("\n");
      await pageLines(io, lines, signal);
      showPrompt();
      continue;
    }
    showPrompt("\r\u001b[2K  press y (run it), n (drop it) or e (feedback for a new plan)\n");
  }
}
