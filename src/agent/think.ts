/**
 * Reasoning models write their thinking into the reply itself: a leading `<think>…</think>`
 * (or `<thinking>…</thinking>`) block, or — when the server's chat template already opened
 * the block — everything up to an orphan `</think>`. That text is set aside before the step
 * is extracted (docs/context.md "Reasoning models"): a draft step inside the thinking is never run.
 *
 * Tags count only outside JSON strings, so a step whose thought mentions "</think>" keeps it.
 */
import { walkBraces } from "../core/json-braces.js";

export interface SplitThinking {
  /** The thinking set aside (tags removed), "" when there was none. */
  thinking: string;
  /** What remains to hold the step. */
  rest: string;
  /** How the thinking was recognised, for the trace. */
  kind: "none" | "closed" | "orphan" | "unclosed";
}

const OPEN_TAG = /^<(think|thinking)>/i;
const CLOSE_TAG = /^<\/(think|thinking)>/i;

/**
 * Index and length of the first closing tag at or after `from` that is not inside a JSON
 * string (strings are tracked only inside braces: prose quotes do not open one).
 */
function findClose(text: string, from: number): { at: number; length: number } | undefined {
  let found: { at: number; length: number } | undefined;
  walkBraces(text, from, (i, event) => {
    if (event !== "other" || text[i] !== "<") return false;
    const m = CLOSE_TAG.exec(text.slice(i, i + 12));
    if (m) found = { at: i, length: m[0].length };
    return found !== undefined;
  });
  return found;
}

export function splitThinking(text: string): SplitThinking {
  const lead = text.length - text.trimStart().length;
  const open = OPEN_TAG.exec(text.slice(lead));
  if (open) {
    const start = lead + open[0].length;
    const close = findClose(text, start);
    if (!close) return { thinking: text.slice(start).trim(), rest: "", kind: "unclosed" };
    return {
      thinking: text.slice(start, close.at).trim(),
      rest: text.slice(close.at + close.length),
      kind: "closed",
    };
  }
  const close = findClose(text, 0);
  if (!close) return { thinking: "", rest: text, kind: "none" };
  return {
    thinking: text.slice(0, close.at).trim(),
    rest: text.slice(close.at + close.length),
    kind: "orphan",
  };
}
