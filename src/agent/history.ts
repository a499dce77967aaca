/**
 * What the model is told about what happened outside its own steps (docs/sessions.md "What the
 * model is told"): after `/undo`, after a call or a reply the person cut off, after a goal that
 * stopped without an answer. Each note goes into the history through `appendTurn`
 * (prompt.ts), which keeps user and assistant messages alternating.
 *
 * The notes are Scoot's own words, so each starts with NOTE_PREFIX: readers of a transcript
 * (the editor's replay, the REPL's "last goal") tell them from the person's goals by it.
 */
import { clip } from "../core/clip.js";
import type { Message } from "../store/session.js";

/** How every note of Scoot's own to the model begins. */
export const NOTE_PREFIX = "[scoot: ";
/** The mark at the end of a reply the person cut off while it streamed. */
export const INTERRUPTED_MARK = "[interrupted]";
/** Who stopped a run, as its notes and observations say it. */
const BY_THE_USER = "interrupted by the user";
const AT_THE_DEADLINE = "stopped at its deadline";
/** A stop reason quotes server or model text: it is cut to this in the note. */
export const STOP_REASON_MAX_BYTES = 600;
/** Files named one by one in an undo note; more are counted. */
export const UNDO_NOTE_MAX_FILES = 40;
/** The undone goal as the undo note quotes it. */
const UNDO_GOAL_MAX_BYTES = 200;

/** True for a message Scoot wrote to the model (not the person's goal, not the model's reply). */
export function isScootNote(content: string): boolean {
  return content.startsWith(NOTE_PREFIX);
}

/** The assistant-side note after a goal that ended without a final answer. */
export function stopNote(reason: string): Message {
  const why = clip(reason.replace(/\s+/g, " ").trim(), STOP_REASON_MAX_BYTES);
  return { role: "assistant", content: `${NOTE_PREFIX}this goal stopped before a final answer: ${why}]` };
}

/** Who stopped a run, from its signal's reason: a deadline says so, anything else is the person. */
export function interruptionCause(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  const text = reason instanceof Error ? `${reason.name} ${reason.message}` : String(reason ?? "");
  return /deadline|TimeoutError/i.test(text) ? AT_THE_DEADLINE : BY_THE_USER;
}

/** True for the observation of a call the run was stopped in (the editor's replay marks it failed). */
export function isInterruptedObservation(body: string): boolean {
  return body.startsWith(`${BY_THE_USER} `) || body.startsWith(`${AT_THE_DEADLINE} `);
}

/**
 * The observation of a call the run was stopped in: who stopped it, after how long it ran
 * (seconds, one decimal), then what the tool returned by then (partial output, its exit).
 */
export function interruptedObservation(cause: string, ranMs: number, toolText: string): string {
  const line = `${cause} after ${(ranMs / 1000).toFixed(1)} s`;
  return toolText.trim() === "" ? line : `${line}\n${toolText}`;
}

/** The observation of a call stopped before it ran. */
export function notRunObservation(cause: string, where: string): string {
  return `${cause} before it ran (${where}); nothing of it ran`;
}

/** What `/undo` (or `scoot undo`) put back, in the words the person saw, relative to the project. */
export interface UndoneFiles {
  /** The goal whose changes were reverted, when known. */
  goal?: string;
  /** Files put back to what they held before that goal. */
  restored: readonly string[];
  /** Files that goal created, removed again. */
  removed: readonly string[];
}

function fileList(files: readonly string[]): string {
  const named = files.slice(0, UNDO_NOTE_MAX_FILES).map((f) => JSON.stringify(f));
  const more = files.length - named.length;
  return more > 0 ? `${named.join(", ")} and ${more} more` : named.join(", ");
}

/** The note that tells the model its earlier file changes were reverted; undefined when none were. */
export function undoNote(u: UndoneFiles): string | undefined {
  if (u.restored.length === 0 && u.removed.length === 0) return undefined;
  const goal = u.goal ? ` of the goal ${JSON.stringify(clip(u.goal, UNDO_GOAL_MAX_BYTES))}` : "";
  const parts = [`${NOTE_PREFIX}the user ran /undo: the file changes${goal} were reverted.`];
  if (u.restored.length > 0)
    parts.push(`Restored to what they held before that goal: ${fileList(u.restored)}.`);
  if (u.removed.length > 0) parts.push(`Removed (that goal created them): ${fileList(u.removed)}.`);
  parts.push("What you wrote to them then is gone; read them again before relying on it.]");
  return parts.join(" ");
}
