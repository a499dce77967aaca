/**
 * The live view (docs/keyboard.md "The live view"): one more subscriber to the loop's events, drawn on
 * stderr of a terminal. A spinner with the elapsed time and the turn while the model works
 * (and while a tool runs), one line per tool call with its key argument and a dimmed
 * preview of the result, denials with the gate's reason, corrected steps, a coloured diff
 * for each file change, and one usage line per goal. Nothing here touches stdout: the answer
 * stays alone there.
 */
import type { AgentEvent } from "../../agent/events.js";
import type { RunResult } from "../../agent/loop.js";
import { shownPath } from "../../core/inside.js";
import { redact } from "../../core/redact.js";
import { terminalText } from "../../core/terminal-text.js";
import { renderUnifiedDiff } from "../../core/unified-diff.js";
import type { Screen } from "./screen.js";
import { makeStyle } from "./style.js";
import { keyArgument, preview } from "./summary.js";

/** Spinner frame interval. */
export const SPINNER_INTERVAL_MS = 100;
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** A denial reason or a correction is cut to this many characters. */
export const REASON_MAX_CHARS = 160;

export interface LiveView {
  listener(e: AgentEvent): void;
  /** After a goal: stops the spinner and prints the usage line. */
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

  const render = () => {
    if (label === undefined) return;
    frame = (frame + 1) % FRAMES.length;
    screen.status(s.cyan(`${FRAMES[frame]} ${label} · turn ${turn} · ${seconds(now() - goalStart)}`));
  };
  const spin = (what: string) => {
    label = what;
    if (!screen.live) return;
    render();
    timer ??= setInterval(render, SPINNER_INTERVAL_MS);
    timer.unref();
  };
  const stop = () => {
    label = undefined;
    if (timer) clearInterval(timer);
    timer = undefined;
    screen.status(undefined);
  };
  const line = (text: string) => screen.styled(`${text}\n`);
  const shown = (p: string) => shownPath(p, opts.cwd);

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
            `${s.red("✗ denied")}  ${s.bold(clean(e.action))}  ${clean(keyArgument(e.call, e.input))}\n  ${s.red(clean(cut(e.reason, REASON_MAX_CHARS)))}`,
          );
          return;
        case "running":
          stop();
          line(`${s.green("●")} ${s.bold(clean(e.action))}  ${clean(keyArgument(e.call, e.input))}`);
          spin(`running ${e.action}`);
          return;
        case "observation": {
          stop();
          // A successful command's output needs no header; a failing one keeps its exit code.
          const succeeded = e.call?.result?.details?.exitCode === 0;
          const text = succeeded ? (e.text ?? "").replace(/^exit code: 0\nstdout:\n/, "") : e.text;
          const p = preview(text ?? "");
          const rows = p.lines.map((l) => `  ${s.dim(clean(l))}`);
          if (p.more > 0) rows.push(`  ${s.dim(`… ${p.more} more line${p.more === 1 ? "" : "s"}`)}`);
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
      line(s.dim(usageLine(r, contextTokens, window)));
    },
  };
}
