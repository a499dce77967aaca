/**
 * What a goal is doing right now, folded from its events, so that a cancel can say in one
 * line what it stopped (docs/keyboard.md "Cancelling"): waiting for the model, the answer as
 * it streamed, or a tool call and how long it had run.
 */

import { callSummary } from "../../agent/approval.js";
import type { AgentEvent } from "../../agent/events.js";
import { redact } from "../../core/redact.js";
import { terminalText } from "../../core/terminal-text.js";
import { seconds } from "./live.js";

export interface Activity {
  listener(e: AgentEvent): void;
  /** One phrase: `bash sleep 30 after 4.1s`, `the answer while it streamed`. */
  describe(): string;
}

export function activity(now: () => number = Date.now): Activity {
  let what = "the goal before its first request";
  let since = now();
  const set = (w: string) => {
    what = w;
    since = now();
  };
  return {
    listener(e) {
      switch (e.type) {
        case "run":
          return set("the goal before its first request");
        case "thinking":
          return set("the model's reply");
        case "answer_delta":
          if (!what.startsWith("the answer")) set("the answer while it streamed");
          return;
        case "running":
          return set(callSummary(e.call).replace(/ {2}/, " "));
        case "observation":
        case "refused":
        case "deny":
          return set("the goal between two steps");
        default:
          return;
      }
    },
    describe() {
      return `${terminalText(redact(what))} after ${seconds(now() - since)}`;
    },
  };
}
