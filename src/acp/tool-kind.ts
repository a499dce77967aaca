/**
 * How a Scoot call looks to an ACP client (docs/editors.md "Editors (ACP)"), read from its
 * record (agent/call-record.ts): the `kind` comes from the declared effects — the same facts
 * the policy gate decides from — the title and `locations` from the tool's own presentation
 * (paths made absolute against the project root), and `rawInput` is always an object: clients
 * of the 0.4.x SDK reject a string, so a text input (bash's command) travels as `{ "command": … }`.
 */
import path from "node:path";
import type { Diff, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { Prepared } from "../agent/call-record.js";
import { changeBase, type FileChange } from "../agent/file-change.js";
import { terminalText } from "../core/terminal-text.js";
import type { Capability, Effects } from "../core/types.js";
import type { AnyTool, Presentation } from "../tools/types.js";

const KIND_BY_CAPABILITY: Record<Capability, ToolKind> = {
  read: "read",
  write: "edit",
  exec: "execute",
  net_read: "fetch",
  net_write: "fetch",
  native: "other",
};

/** A title longer than this is cut (rawInput has it all). */
const TITLE_MAX_CHARS = 80;

/** Files larger than this are not sent whole to the editor; the changed region is. */
export const DIFF_MAX_FILE_BYTES = 512 * 1024;

export interface ToolCallView {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
  rawInput: Record<string, unknown>;
}

/** What a view is made from: a prepared record, or a recorded step presented again (replay). */
export type Viewed = Pick<Prepared, "raw" | "presentation"> & {
  effects?: Effects;
  tool?: Pick<AnyTool, "textName">;
  /** The validated input: a text tool's text as it runs (mapped from `{"command": …}` if so). */
  input?: unknown;
};

/** The raw input as an object: JSON objects as they are, anything else under a name. */
function rawInputOf(raw: string, textName: string | undefined): Record<string, unknown> {
  if (textName) return { [textName]: raw };
  try {
    const v = JSON.parse(raw) as unknown;
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
    return { input: v };
  } catch {
    return { input: raw };
  }
}

/**
 * The title on one line, its invisible and reordering characters shown escaped as on a terminal
 * (docs/safety.md "Hostile inputs"): an editor shows the title where a person approves the call,
 * so `evil\u202egnp.sh` must not read as `evilhs.png`. Escaping comes first: U+2028 is white
 * space to the collapse below and would otherwise read as a plain space.
 */
function cut(s: string): string {
  const one = terminalText(s).replace(/\s+/g, " ").trim();
  return one.length > TITLE_MAX_CHARS ? `${one.slice(0, TITLE_MAX_CHARS)}…` : one;
}

function kindOf(p: Presentation, effects: Effects | undefined): ToolKind {
  if (p.search) return "search";
  return effects ? KIND_BY_CAPABILITY[effects.capability] : "other";
}

export function toolCallView(call: Viewed, cwd: string): ToolCallView {
  const p = call.presentation;
  const locations = p.locations.map((l) => ({
    path: path.resolve(cwd, l.path),
    ...(l.line !== undefined && l.line > 0 ? { line: l.line } : {}),
  }));
  return {
    title: cut(p.title),
    kind: kindOf(p, call.effects),
    locations,
    rawInput: rawInputOf(typeof call.input === "string" ? call.input : call.raw, call.tool?.textName),
  };
}

/**
 * The `diff` content of a file tool's planned change — the very bytes the tool will write —
 * or undefined when there is none to show: no change, a change that cannot be made (it is
 * never shown as one), or a binary file (one holding a NUL byte) being replaced. A large file is shown as the changed region only, never read whole into
 * the protocol. Both texts are shown as the keyboard shows them (shownText): a NUL byte, an
 * escape sequence or a bidi override is escaped, never sent raw for the editor to render.
 */
export function changeDiff(change: FileChange | undefined): Diff | undefined {
  return shownChange(change)?.diff;
}

/**
 * The diff of a planned change as the editor is shown it, and the warning line to show with it
 * when its new text holds characters that were escaped (the keyboard's words:
 * `⚠ this holds 1 NUL byte and 2 control or invisible characters, shown escaped …`).
 */
export function shownChange(change: FileChange | undefined): { diff: Diff; warning?: string } | undefined {
  if (!change?.after.ok) return undefined;
  const base = changeBase(change);
  // A binary file being replaced is not sent as text (the tool call names it).
  if (base?.includes(0)) return undefined;
  const raw = rawDiff(change.abs, base, change.after.value);
  const warning = hiddenWarning(raw.newText);
  return {
    diff: {
      path: raw.path,
      oldText: raw.oldText === null || raw.oldText === undefined ? null : shownText(raw.oldText),
      newText: shownText(raw.newText),
    },
    ...(warning ? { warning } : {}),
  };
}

function rawDiff(abs: string, base: Buffer | null, after: string): Diff {
  // The old text as the person has it: the editor's buffer when the change was planned from it.
  if (base === null) return { path: abs, oldText: null, newText: after };
  const before = base.toString("utf8");
  if (base.length <= DIFF_MAX_FILE_BYTES && Buffer.byteLength(after) <= DIFF_MAX_FILE_BYTES)
    return { path: abs, oldText: before, newText: after };
  const region = changedRegion(before, after);
  return { path: abs, oldText: region.before, newText: region.after };
}

/** A text as a terminal would be given it (terminalText), its CRLF line ends kept for the editor. */
function shownText(text: string): string {
  return text.split("\r\n").map(terminalText).join("\r\n");
}

/** Every character terminalText might escape (a superset: it decides, character by character). */
const MAYBE_ESCAPED = /[\p{C}\u2028\u2029]/gu;

/** What shownText escapes in `text`: NUL bytes, and other control, invisible and reordering characters. */
export function escapedCharacters(text: string): { nul: number; other: number } {
  let nul = 0;
  let other = 0;
  const judged = new Map<string, boolean>();
  for (const m of text.matchAll(MAYBE_ESCAPED)) {
    const c = m[0];
    if (c === "\r" && text[m.index + 1] === "\n") continue;
    let escaped = judged.get(c);
    if (escaped === undefined) {
      escaped = terminalText(c) !== c;
      judged.set(c, escaped);
    }
    if (!escaped) continue;
    if (c === "\u0000") nul += 1;
    else other += 1;
  }
  return { nul, other };
}

function hiddenWarning(text: string): string | undefined {
  const { nul, other } = escapedCharacters(text);
  if (nul + other === 0) return undefined;
  const parts = [
    ...(nul > 0 ? [`${nul} NUL byte${nul === 1 ? "" : "s"}`] : []),
    ...(other > 0 ? [`${other} control or invisible character${other === 1 ? "" : "s"}`] : []),
  ];
  return `⚠ this holds ${parts.join(" and ")}, shown escaped (\\x00, \\u202e): read it with care`;
}

/** The part of two texts between their common start and common end, whole lines. */
function changedRegion(before: string, after: string): { before: string; after: string } {
  let start = 0;
  const max = Math.min(before.length, after.length);
  while (start < max && before[start] === after[start]) start++;
  let end = 0;
  while (end < max - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  // Widen to whole lines so the editor shows lines, not fragments.
  const from = before.lastIndexOf("\n", start - 1) + 1;
  const tailBefore = before.indexOf("\n", before.length - end);
  const tailAfter = after.indexOf("\n", after.length - end);
  return {
    before: before.slice(from, tailBefore === -1 ? before.length : tailBefore),
    after: after.slice(from, tailAfter === -1 ? after.length : tailAfter),
  };
}
