/**
 * The live view (docs/keyboard.md "The live view"): one more subscriber to the loop's events, drawn on
 * stderr of a terminal. A spinner with the elapsed time and the turn while the model works
 * (and while a tool runs, with a running command's newest lines dimmed under it), one line per
 * tool call with its key argument and a dimmed preview of the result (a command's: its last
 * lines and the true size of its output), denials with the gate's reason, corrected steps, a
 * coloured diff for each file change, and one usage line per goal. Nothing here touches stdout:
 * the answer stays alone there.
 */
import { type AgentEvent, denialReason } from "../../agent/events.js";
import type { RunResult } from "../../agent/loop.js";
import { shownPath } from "../../core/inside.js";
import { redact } from "../../core/redact.js";
import { terminalText } from "../../core/terminal-text.js";
import { renderUnifiedDiff } from "../../core/unified-diff.js";
import { type Checklist, planChecklist } from "./plan-checklist.js";
import type { Screen } from "./screen.js";
import { makeStyle } from "./style.js";
import { keyArgument, outputTail, preview } from "./summary.js";
import { cutToWidth } from "./width.js";

/** Spinner frame interval. */
export const SPINNER_INTERVAL_MS = 100;
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** A denial reason or a correction is cut to this many characters. */
export const REASON_MAX_CHARS = 160;
/** A running command shows this many of its newest lines under the spinner. */
export const RUNNING_OUTPUT_LINES = 4;
/** Preview and output lines are indented by this under their call's line. */
const INDENT = "  ";

export interface LiveView {
  listener(e: AgentEvent): void;
  /**
   * After a goal: stops the spinner and prints the usage line — when the goal ended with an
   * answer or used tokens (a goal that failed before the model answered has none).
   */
  finish(r: RunResult, contextWindow: number | undefined): void;
  /** The goal is being cancelled: the spinner goes, nothing more is drawn until `finish`. */
  interrupt(): void;
}

export interface LiveViewOptions {
  color: boolean;
  cwd: string;
  now?: () => number;
}

function clean(text: string): string {
  return terminalText(redact(text));
}

function cut(text: string, max: number): string {
  const one = text.replace(/\s*\n\s*/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

export function seconds(ms: number): string {
  return ms < 60_000
    ? `${(ms / 1000).toFixed(1)}s`
    : `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

export function compactCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** The usage line after a goal; `contextTokens` is the size of the last request. */
export function usageLine(r: RunResult, contextTokens: number, window: number | undefined): string {
  const u = r.usage;
  const parts = [
    `${r.turns} turn${r.turns === 1 ? "" : "s"}`,
    `${r.toolCalls} tool call${r.toolCalls === 1 ? "" : "s"}`,
    `${u.total_tokens} tokens (${u.prompt_tokens} in, ${u.completion_tokens} out)`,
    window
      ? `context ${compactCount(contextTokens)} of ${compactCount(window)} (${Math.round((100 * contextTokens) / window)}%)`
      : `context ${compactCount(contextTokens)} of an unknown window`,
    seconds(r.wallMs),
  ];
  return parts.join(" · ");
}

export function liveView(screen: Screen, opts: LiveViewOptions): LiveView {
  const s = makeStyle(opts.color);
  const now = opts.now ?? Date.now;
  let goalStart = now();
  let turn = 0;
  let label: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  let contextTokens = 0;

  /** A running command's newest lines, shown under the spinner until the call ends. */
  let running: readonly string[] = [];
  /** The plan being carried out, if any (docs/keyboard.md "Plan mode"); made when one starts. */
  let checklist: Checklist | undefined;

  const render = () => {
    if (label === undefined) return;
    const step = checklist?.current();
    const spinner = s.cyan(
      `${FRAMES[frame]} ${label} · turn ${turn}${step ? ` · ${step}` : ""} · ${seconds(now() - goalStart)}`,
    );
    screen.status([spinner, ...running.map((l) => `${INDENT}${s.dim(clean(l.replace(/\t/g, "  ")))}`)]);
  };
  const tick = () => {
    frame = (frame + 1) % FRAMES.length;
    render();
  };
  const spin = (what: string) => {
    label = what;
    running = [];
    if (!screen.live) return;
    tick();
    timer ??= setInterval(tick, SPINNER_INTERVAL_MS);
    timer.unref();
  };
  const stop = () => {
    label = undefined;
    running = [];
    if (timer) clearInterval(timer);
    timer = undefined;
    screen.status(undefined);
  };
  const line = (text: string) => screen.styled(`${text}\n`);
  const shown = (p: string) => shownPath(p, opts.cwd);
  /** One dimmed line of a result, cut to the terminal's width (a preview never wraps). */
  const row = (text: string) =>
    `${INDENT}${s.dim(cutToWidth(clean(text), screen.columns() - 1 - INDENT.length))}`;

  /** The preview of a result: a command's last lines and true size, else the first lines. */
  const resultRows = (e: Extract<AgentEvent, { type: "observation" }>): string[] => {
    const details = e.call.result?.details;
    const text = e.call.shown ?? "";
    // A successful command's output needs no header; a failing one keeps its exit code.
    const succeeded = details?.exitCode === 0;
    const output = details?.output;
    if (output) {
      const rows: string[] = [];
      if (!succeeded) rows.push(row(text.split("\n")[0] ?? ""));
      // The model saw it all when the capture kept every byte and no clip cut the observation.
      const all = output.kept >= output.bytes && e.clippedTo >= e.bytes;
      const tail = outputTail(output, { bytes: e.clippedTo, all });
      if (tail.note) rows.push(row(tail.note));
      rows.push(...tail.lines.map(row));
      if (output.bytes === 0 && succeeded) rows.push(row("(no output)"));
      return rows;
    }
    const p = preview(succeeded ? text.replace(/^exit code: 0\nstdout:\n/, "") : text);
    const rows = p.lines.map(row);
    if (p.more > 0) rows.push(row(`… ${p.more} more line${p.more === 1 ? "" : "s"}`));
    return rows;
  };

  return {
    listener(e) {
      switch (e.type) {
        case "run":
          goalStart = now();
          contextTokens = 0;
          return;
        case "thinking":
          turn = e.turn;
          spin("thinking");
          return;
        case "reply":
          if (e.usage) contextTokens = e.usage.prompt_tokens + e.usage.completion_tokens;
          stop();
          return;
        case "thought_delta":
        case "answer_delta":
        case "final":
        case "error":
          stop();
          return;
        case "malformed":
          stop();
          line(s.yellow(`↻ invalid step, asking again: ${clean(cut(e.error, REASON_MAX_CHARS))}`));
          return;
        case "deny":
          stop();
          line(
            `${s.red("✗ denied")}  ${s.bold(clean(e.call.action))}  ${clean(keyArgument(e.call))}\n  ${s.red(clean(cut(denialReason(e.call), REASON_MAX_CHARS)))}`,
          );
          return;
        case "refused": {
          // The person's own refusal was marked by the question; a rule's or an earlier
          // "reject always" was made without one, so it is marked here.
          const { rule, remembered, reason } = e.call.approval ?? {};
          if (!rule && !remembered) return;
          stop();
          line(
            `${s.red(rule ? `✗ refused by rule ${clean(rule)}` : "✗ refused")}  ${s.bold(clean(e.call.action))}  ${clean(keyArgument(e.call))}\n  ${s.red(clean(cut(reason ?? "", REASON_MAX_CHARS)))}`,
          );
          return;
        }
        case "running": {
          stop();
          // A call the person just approved is named by the question's `✓` line: not twice.
          const { answer, rule } = e.call.approval ?? {};
          // A saved rule let it run without a question: the line says which one.
          const ruled = answer === "rule" && rule ? `  ${s.dim(`(allowed by rule ${clean(rule)})`)}` : "";
          if (answer !== "once" && answer !== "always")
            line(`${s.green("●")} ${s.bold(clean(e.call.action))}  ${clean(keyArgument(e.call))}${ruled}`);
          spin(`running ${e.call.action}`);
          return;
        }
        case "tool_output":
          if (label === undefined) return;
          running = e.lines.slice(-RUNNING_OUTPUT_LINES);
          if (screen.live) render();
          return;
        case "observation": {
          stop();
          const rows = resultRows(e);
          if (rows.length > 0) line(rows.join("\n"));
          return;
        }
        case "file_changed": {
          // A change the person approved was shown as a diff in the question: not twice.
          const answer = e.call?.approval?.answer;
          if (answer === "once" || answer === "always") return;
          screen.styled(renderUnifiedDiff(shown(e.path), e.before, e.after, { color: opts.color }));
          return;
        }
        case "plan_execute":
          stop();
          checklist ??= planChecklist(s, () => screen.columns());
          line(checklist.start(e.plan, e.sha256).join("\n"));
          return;
        case "plan_progress": {
          const changed = checklist?.progress(e.step, e.status);
          if (!changed) return;
          stop();
          line(changed);
          return;
        }
        case "compacted":
          line(s.dim(`… compacted ${e.removed} earlier messages to fit the budget`));
          return;
        default:
          return;
      }
    },
    interrupt() {
      stop();
    },
    finish(r, window) {
      stop();
      const planned = checklist?.end();
      if (planned) line(planned);
      if (r.status !== "final" && r.usage.total_tokens === 0) return;
      line(s.dim(usageLine(r, contextTokens, window)));
    },
  };
}
