/**
 * The checklist of a plan being carried out (docs/keyboard.md "Plan mode"): drawn whole when the
 * run starts, then one line each time the model says a step's status changed, and a count when
 * the goal ends. Printed as lines, not kept in the block at the bottom: a plan of thirty steps
 * would not fit a small terminal, and the scrollback keeps the record.
 */
import type { PlanStepState } from "../../agent/plan-evidence.js";
import { redact } from "../../core/redact.js";
import { terminalText } from "../../core/terminal-text.js";
import type { Plan } from "../../tools/plan-shape.js";
import type { Style } from "./style.js";
import { cutToWidth } from "./width.js";

/** The hash shown beside the checklist's title: its first characters. */
const SHOWN_HASH_CHARS = 12;

const MARK: Record<PlanStepState | "pending", string> = {
  pending: "[ ]",
  in_progress: "[>]",
  done: "[x]",
  /** The model said done; no call it attributed to the step showed it (agent/plan-evidence.ts). */
  claimed: "[?]",
  skipped: "[-]",
};

export interface Checklist {
  /** The plan's first lines: its title and every step, pending. */
  start(plan: Plan, sha256: string): string[];
  /** A step's status changed: its line, or undefined for a step the plan does not have. */
  progress(step: number, status: PlanStepState): string | undefined;
  /** The step in progress, for the spinner (`plan step 2 of 3`); undefined: none. */
  current(): string | undefined;
  /** When the goal ends: the count, or undefined when no plan ran. Forgets the plan. */
  end(): string | undefined;
}

export function planChecklist(s: Style, columns: () => number): Checklist {
  let titles: string[] = [];
  let states: (PlanStepState | "pending")[] = [];
  const row = (i: number): string => {
    const state = states[i] ?? "pending";
    const mark =
      state === "done" ? s.green(MARK.done) : state === "skipped" ? s.dim(MARK.skipped) : MARK[state];
    const title = cutToWidth(terminalText(redact(titles[i] ?? "")), columns() - 10);
    const note =
      state === "skipped"
        ? ` ${s.dim("(skipped)")}`
        : state === "claimed"
          ? ` ${s.yellow("(claimed, no evidence)")}`
          : "";
    return `  ${mark} ${i + 1} ${title}${note}`;
  };
  return {
    start(plan, sha256) {
      titles = plan.steps.map((p) => p.title);
      states = titles.map(() => "pending");
      const n = titles.length;
      return [
        s.bold(`plan · ${n} step${n === 1 ? "" : "s"} · sha256 ${sha256.slice(0, SHOWN_HASH_CHARS)}`),
        ...titles.map((_, i) => row(i)),
      ];
    },
    progress(step, status) {
      if (step < 1 || step > titles.length) return undefined;
      states[step - 1] = status;
      return row(step - 1);
    },
    current() {
      const i = states.indexOf("in_progress");
      return i < 0 ? undefined : `plan step ${i + 1} of ${titles.length}`;
    },
    end() {
      if (titles.length === 0) return undefined;
      const count = (k: PlanStepState) => states.filter((x) => x === k).length;
      const done = count("done");
      const skipped = count("skipped");
      const claimed = count("claimed");
      const n = titles.length;
      titles = [];
      states = [];
      return s.dim(
        `plan: ${done} of ${n} step${n === 1 ? "" : "s"} done` +
          (claimed > 0 ? `, ${claimed} claimed without evidence` : "") +
          (skipped > 0 ? ` · ${skipped} skipped` : ""),
      );
    },
  };
}
