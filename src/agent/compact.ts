/**
 * Context compaction. Before each backend call, if the history is over budget, keep the
 * system prompt, the run's goal and the latest turns, and replace everything older with
 * one summary message. The session file keeps everything; `recall` reads it back.
 */
import type { Message } from "../store/session.js";
import type { Result } from "../tools/types.js";
import { declaredEffects } from "./calls.js";
import { extractStep } from "./step.js";

/** Bytes a message costs beyond its content on the wire (role, quotes, separators). */
const MESSAGE_OVERHEAD = 32;
/** How many items each list of the extractive summary keeps (the newest). */
const SUMMARY_LIST_MAX = 12;
const SUMMARY_ITEM_MAX = 160;
export const SUMMARY_MARKER = "[Compacted history]";

export function historyBytes(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) n += Buffer.byteLength(m.content) + MESSAGE_OVERHEAD;
  return n;
}

export interface Compaction {
  messages: Message[];
  removed: number;
  beforeBytes: number;
  afterBytes: number;
}

function short(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > SUMMARY_ITEM_MAX ? `${one.slice(0, SUMMARY_ITEM_MAX - 1)}…` : one;
}

function pushCapped(list: string[], item: string): void {
  if (list.includes(item)) return;
  list.push(item);
  if (list.length > SUMMARY_LIST_MAX) list.shift();
}

/** A deterministic digest of what older turns did: files, commands, denials, errors, findings. */
export function extractiveSummary(removed: readonly Message[]): string {
  const read: string[] = [];
  const changed: string[] = [];
  const commands: string[] = [];
  const denials: string[] = [];
  const errors: string[] = [];
  const findings: string[] = [];
  const earlier: string[] = [];
  let pending: { action: string; input: string; shell: boolean } | undefined;
  for (const m of removed) {
    if (m.content.startsWith(SUMMARY_MARKER)) {
      earlier.push(m.content.split("\n").slice(1).join("\n"));
      continue;
    }
    if (m.role === "assistant") {
      const step = extractStep(m.content);
      if (!step.ok) continue;
      const action = String(step.value.action ?? "");
      const rawInput = step.value.action_input;
      const input = typeof rawInput === "string" ? rawInput : JSON.stringify(rawInput ?? "");
      // What the call read or wrote comes from its declared effects, not its action name.
      const effects = declaredEffects(action, input);
      for (const p of effects?.readPaths ?? []) pushCapped(read, p);
      for (const p of effects?.writePaths ?? []) pushCapped(changed, p);
      pending = { action, input, shell: effects?.command !== undefined };
      if (typeof step.value.thought === "string" && step.value.thought)
        pushCapped(findings, short(step.value.thought));
      continue;
    }
    if (m.role === "user" && pending) {
      const text = m.content;
      if (/denied/i.test(text.slice(0, 200)) && /policy/i.test(text.slice(0, 300))) {
        pushCapped(denials, short(`${pending.action} ${pending.input}`));
      } else if (pending.shell) {
        const exit = /exit code: (-?\d+)|killed by signal (\w+)|timed out after \d+ ms/.exec(text);
        pushCapped(commands, short(`${pending.input} → ${exit ? exit[0] : "ran"}`));
      } else if (/\berror\b/i.test(text.split("\n").slice(0, 3).join(" "))) {
        pushCapped(errors, short(`${pending.action}: ${text.split("\n").slice(1, 3).join(" ")}`));
      }
      pending = undefined;
    }
  }
  const lines = [
    `${SUMMARY_MARKER} ${removed.length} earlier messages were summarised; use the recall action to read any of them exactly.`,
  ];
  if (earlier.length > 0) lines.push(`Earlier summary: ${short(earlier.join(" "))}`);
  const list = (title: string, items: string[]) => {
    if (items.length > 0) lines.push(`${title}: ${items.join("; ")}`);
  };
  list("Files read", read);
  list("Files changed", changed);
  list("Commands", commands);
  list("Denied", denials);
  list("Errors", errors);
  list("Notes", findings);
  return lines.join("\n");
}

function dropSummary(removed: readonly Message[]): string {
  return `${SUMMARY_MARKER} ${removed.length} earlier messages were dropped to fit the context budget; use the recall action to read them.`;
}

/**
 * `pinned` are indexes kept whatever happens (system prompt, the run's goal). Returns the
 * compacted history, or an error when even the minimum does not fit the budget.
 */
export function compactHistory(
  messages: readonly Message[],
  pinned: ReadonlySet<number>,
  budget: number,
  style: "extractive" | "drop",
): Result<Compaction | undefined> {
  const beforeBytes = historyBytes(messages);
  if (budget <= 0 || beforeBytes <= budget) return { ok: true, value: undefined };
  const pinnedMsgs = messages.filter((_, i) => pinned.has(i));
  const lastPinned = Math.max(...pinned);
  // Keep the newest messages after the last pinned one while they fit.
  const tail: Message[] = [];
  const candidates = messages.map((m, i) => ({ m, i })).filter(({ i }) => !pinned.has(i));
  const fixed = historyBytes(pinnedMsgs);
  let removedCount = candidates.length;
  let summary = "";
  for (let keep = candidates.length - 1; keep >= 0; keep--) {
    const kept = candidates.slice(keep);
    if (kept.some(({ i }) => i < lastPinned)) break;
    const removed = candidates.slice(0, keep).map(({ m }) => m);
    const s = style === "extractive" ? extractiveSummary(removed) : dropSummary(removed);
    const size = fixed + historyBytes(kept.map(({ m }) => m)) + Buffer.byteLength(s) + MESSAGE_OVERHEAD;
    if (size > budget) break;
    tail.splice(0, tail.length, ...kept.map(({ m }) => m));
    removedCount = removed.length;
    summary = s;
  }
  if (tail.length === 0) {
    const last = candidates[candidates.length - 1];
    const minimum = fixed + (last ? historyBytes([last.m]) : 0);
    return {
      ok: false,
      error: `the context budget (agent.context_budget_bytes = ${budget}) is too small: the system prompt, the goal and the latest observation alone need ${minimum} bytes. Raise the budget or set it to 0 to disable compaction`,
    };
  }
  const out: Message[] = [...pinnedMsgs, { role: "user", content: summary }, ...tail];
  return {
    ok: true,
    value: { messages: out, removed: removedCount, beforeBytes, afterBytes: historyBytes(out) },
  };
}
