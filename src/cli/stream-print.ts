/**
 * What `-e`, the REPL and `--trace` show while a step streams (docs/context.md "Streaming"): the
 * final answer on stdout as it arrives, the thought on stderr as it arrives, and the line
 * that ends it all. The printed answer equals the final answer exactly once: the agent
 * loop either completes what was shown or withdraws it (then this ends the line and says
 * so, instead of printing the answer again behind a fragment).
 *
 * The pieces arrive redacted and cut where no credential can straddle them (the streaming
 * redactor, src/core/stream-redact.ts, sits where the session hands events out), so they
 * are printed as they come; the answer they add up to is the redacted final answer.
 */
import type { AgentEvent } from "../agent/events.js";
import type { RunResult } from "../agent/loop.js";
import { redact } from "../core/redact.js";
import { FINAL_ACTION } from "../tools/final.js";
import type { Io } from "./io.js";
import { traceLine } from "./trace.js";

export interface ConsolePrinter {
  listener(e: AgentEvent): void;
  /** After a run: ends what was streamed, or prints the answer when nothing streamed. */
  finish(r: RunResult): void;
  /**
   * The run is being cancelled: an answer or thought line left open is ended and marked, and
   * `finish` prints nothing more of the answer.
   */
  interrupt(): void;
}

export interface PrinterOptions {
  /** Stream the final answer to stdout (`-e` without `--json`, the REPL). */
  answers: boolean;
  /** Show the thought on stderr as it arrives (`--trace`, the REPL). */
  thoughts: boolean;
  /** `--trace` lines on stderr. */
  trace: boolean;
}

export function consolePrinter(io: Pick<Io, "out" | "err">, opts: PrinterOptions): ConsolePrinter {
  let shown = "";
  let thoughtOpen = false;
  let thoughtTurn = -1;
  let thoughtKind: "thinking" | "thought" = "thought";
  let withdrawn: string | undefined;
  /** A cancel ended the streamed answer; nothing more of it is printed. */
  let interrupted = false;

  const closeThought = () => {
    if (thoughtOpen) io.err("\n");
    thoughtOpen = false;
  };

  return {
    listener(e) {
      if (e.type === "thought_delta") {
        if (!opts.thoughts) return;
        // The model's thinking (reasoning field, <think>) and the step's thought get their own lines.
        const kind = e.source === "reasoning" ? "thinking" : "thought";
        if (thoughtOpen && thoughtKind !== kind) closeThought();
        if (!thoughtOpen) io.err(opts.trace ? `[trace] ${kind}: ` : `${kind}: `);
        thoughtOpen = true;
        thoughtKind = kind;
        if (kind === "thought") thoughtTurn = e.turn;
        io.err(e.text.replace(/\n/g, " "));
        return;
      }
      if (e.type === "answer_delta") {
        if (!opts.answers) return;
        closeThought();
        if (withdrawn !== undefined) {
          io.err(`scoot: the text printed above was withdrawn (${withdrawn}); the model answers again\n`);
          withdrawn = undefined;
        }
        shown += e.text;
        io.out(e.text);
        return;
      }
      if (e.type === "answer_withdrawn") {
        if (!opts.answers || shown === "") return;
        io.out("\n");
        shown = "";
        withdrawn = e.reason;
        return;
      }
      // Any other line ends the thought shown so far.
      closeThought();
      if (!opts.trace) return;
      if (e.type === "step" && !e.call && e.action === FINAL_ACTION) {
        // The answer itself goes to stdout once; the trace only marks the step.
        if (thoughtTurn !== e.turn) io.err(`${traceLine(e)?.split("\n")[0]}\n`);
        io.err("[trace] action: final (the answer is on stdout)\n");
        return;
      }
      if (e.type === "step" && thoughtTurn === e.turn) {
        // The thought is already on screen; the trace adds the action.
        const line = traceLine(e)?.split("\n").slice(1).join("\n");
        if (line) io.err(`${line}\n`);
        return;
      }
      const line = traceLine(e);
      if (line) io.err(`${line}\n`);
    },
    interrupt() {
      closeThought();
      if (shown !== "") {
        io.out(" [interrupted]\n");
        interrupted = true;
      }
    },
    finish(r) {
      closeThought();
      if (interrupted) {
        shown = "";
        withdrawn = undefined;
        interrupted = false;
        return;
      }
      if (!opts.answers) return;
      if (r.status === "final") {
        const answer = redact(r.answer ?? "");
        if (withdrawn !== undefined && shown === "") {
          io.err(`scoot: the text printed above was withdrawn (${withdrawn}); the answer follows\n`);
        }
        if (shown === answer) io.out("\n");
        else if (shown === "") io.out(`${answer}\n`);
        else io.out(`\n${answer}\n`);
      } else if (shown !== "") {
        io.out("\n");
      }
      shown = "";
      withdrawn = undefined;
    },
  };
}
