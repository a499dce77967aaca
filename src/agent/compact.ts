/**
 * Context compaction. Before each backend call, if the history is over budget, keep the
 * system prompt, the run's goal and the latest turns, and replace everything older with
 * one summary message. The session file keeps everything; `recall` reads it back.
 */

import type { Result } from "../core/types.js";
import type { Message } from "../store/session.js";
import { declaredEffects } from "./call-prepare.js";
import { extractStep } from "./step.js";

/** Bytes a message costs beyond its content on the wire (role, quotes, separators). */
const MESSAGE_OVERHEAD = 32;
/** How many items each list of the extractive summary keeps (the newest). */
const SUMMARY_LIST_MAX = 12;
const SUMMARY_ITEM_MAX = 160;
export const SUMMARY_MARKER = "[Compacted history]";
/** A goal larger than this share of the budget is named as the thing to shorten when nothing fits. */
const GOAL_SHARE_TO_SHORTEN = 0.5;

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
  /** Where the pinned messages are in `messages`, in their order (the goal is the last of them). */
  pinnedAt: number[];
}

function short(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > SUMMARY_ITEM_MAX ? `${one.slice(0, SUMMARY_ITEM_MAX - 1)}…` : one;
}

/**
 * Counts the step parses compaction does, so a test can check that each message is parsed
 * once without timing anything.
 */
export const compactStats = { stepParses: 0 };

/** What one message contributes to the digest, found by parsing it once. */
type Fact =
  | { kind: "earlier"; text: string }
  | {
      kind: "step";
      action: string;
      input: string;
      /** From the call's declared effects, never from its action name. */
      reads: readonly string[];
      writes: readonly string[];
      shell: boolean;
      thought: string;
    }
  | { kind: "observation"; text: string }
  | { kind: "none" };

/**
 * Facts are cached per message object: the loop keeps the same objects from turn to turn, so
 * a message is parsed once per run, not once per turn. The content is compared too, so a
 * message changed in place is parsed again rather than summarised from stale facts.
 */
const factCache = new WeakMap<Message, { content: string; fact: Fact }>();

function factOf(m: Message): Fact {
  const cached = factCache.get(m);
  if (cached && cached.content === m.content) return cached.fact;
  const fact = parseFact(m);
  factCache.set(m, { content: m.content, fact });
  return fact;
}

function parseFact(m: Message): Fact {
  if (m.content.startsWith(SUMMARY_MARKER))
    return { kind: "earlier", text: m.content.split("\n").slice(1).join("\n") };
  if (m.role === "assistant") {
    compactStats.stepParses += 1;
    const step = extractStep(m.content);
    if (!step.ok) return { kind: "none" };
    const action = String(step.value.action ?? "");
    const rawInput = step.value.action_input;
    const input = typeof rawInput === "string" ? rawInput : JSON.stringify(rawInput ?? "");
    // What the call read or wrote comes from its declared effects, not its action name.
    const effects = declaredEffects(action, input);
    const thought = typeof step.value.thought === "string" ? step.value.thought : "";
    return {
      kind: "step",
      action,
      input,
      // The project root itself (glob's default root) names nothing worth remembering.
      reads: (effects?.readPaths ?? []).filter((p) => p !== "."),
      writes: effects?.writePaths ?? [],
      shell: effects?.command !== undefined,
      thought,
    };
  }
  if (m.role === "user") return { kind: "observation", text: m.content };
  return { kind: "none" };
}

/** A list of the digest, with its rendered size kept up to date as items come and go. */
class CappedList {
  readonly items: string[] = [];
  private readonly sizes: number[] = [];
  bytes = 0;

  push(item: string): void {
    if (this.items.includes(item)) return;
    const size = Buffer.byteLength(item);
    this.items.push(item);
    this.sizes.push(size);
    this.bytes += size;
    if (this.items.length > SUMMARY_LIST_MAX) {
      this.items.shift();
      this.bytes -= this.sizes.shift()!;
    }
  }

  /** Bytes of `title: a; b; c`, or 0 when the list is empty (the line is left out). */
  lineBytes(title: string): number {
    const n = this.items.length;
    return n === 0 ? 0 : Buffer.byteLength(title) + 2 + this.bytes + 2 * (n - 1);
  }
}

const LIST_TITLES = ["Files read", "Files changed", "Commands", "Denied", "Errors", "Notes"] as const;

function headerLine(removed: number): string {
  return `${SUMMARY_MARKER} ${removed} earlier messages were summarised; use the recall action to read any of them exactly.`;
}
const EARLIER_TITLE = "Earlier summary: ";

/**
 * The running digest of what older turns did: files, commands, denials, errors, findings.
 * Messages are added oldest first; after each one the digest can say the exact byte size of
 * the summary it would render, without rendering it (linear compaction).
 */
class Digest {
  private readonly lists = {
    read: new CappedList(),
    changed: new CappedList(),
    commands: new CappedList(),
    denials: new CappedList(),
    errors: new CappedList(),
    findings: new CappedList(),
  };
  private readonly earlier: string[] = [];
  /** short(earlier.join(" ")), kept current; once it is cut, more text cannot change it. */
  private earlierShort = "";
  private earlierSaturated = false;
  private pending: { action: string; input: string; shell: boolean } | undefined;
  count = 0;

  add(fact: Fact): void {
    this.count += 1;
    const l = this.lists;
    switch (fact.kind) {
      case "earlier":
        this.earlier.push(fact.text);
        if (!this.earlierSaturated) {
          // Once the text is longer than the cut, appending more leaves the cut text unchanged.
          const one = this.earlier.join(" ").replace(/\s+/g, " ").trim();
          this.earlierShort = short(one);
          this.earlierSaturated = one.length > SUMMARY_ITEM_MAX;
        }
        return;
      case "step": {
        const { action, input, reads, writes, shell, thought } = fact;
        this.pending = { action, input, shell };
        for (const p of reads) l.read.push(p);
        for (const p of writes) l.changed.push(p);
        if (thought) l.findings.push(short(thought));
        return;
      }
      case "observation": {
        const pending = this.pending;
        if (!pending) return;
        const text = fact.text;
        if (/denied/i.test(text.slice(0, 200)) && /policy/i.test(text.slice(0, 300))) {
          l.denials.push(short(`${pending.action} ${pending.input}`));
        } else if (pending.shell) {
          const exit = /exit code: (-?\d+)|killed by signal (\w+)|timed out after \d+ ms/.exec(text);
          l.commands.push(short(`${pending.input} → ${exit ? exit[0] : "ran"}`));
        } else if (/\berror\b/i.test(firstLines(text, 3).join(" "))) {
          l.errors.push(short(`${pending.action}: ${firstLines(text, 3).slice(1, 3).join(" ")}`));
        }
        this.pending = undefined;
        return;
      }
      case "none":
        return;
    }
  }

  private listsInOrder(): CappedList[] {
    const l = this.lists;
    return [l.read, l.changed, l.commands, l.denials, l.errors, l.findings];
  }

  /** Buffer.byteLength(this.render()), in time independent of the history's length. */
  bytes(): number {
    let lines = 1;
    let n = Buffer.byteLength(headerLine(this.count));
    if (this.earlier.length > 0) {
      lines += 1;
      n += EARLIER_TITLE.length + Buffer.byteLength(this.earlierShort);
    }
    this.listsInOrder().forEach((list, i) => {
      const b = list.lineBytes(LIST_TITLES[i]!);
      if (b > 0) {
        lines += 1;
        n += b;
      }
    });
    return n + lines - 1;
  }

  render(): string {
    const lines = [headerLine(this.count)];
    if (this.earlier.length > 0) lines.push(`${EARLIER_TITLE}${this.earlierShort}`);
    this.listsInOrder().forEach((list, i) => {
      if (list.items.length > 0) lines.push(`${LIST_TITLES[i]}: ${list.items.join("; ")}`);
    });
    return lines.join("\n");
  }
}

/** The first `n` lines of text, without splitting all of it (an observation can be long). */
function firstLines(text: string, n: number): string[] {
  const out: string[] = [];
  let from = 0;
  while (out.length < n) {
    const nl = text.indexOf("\n", from);
    if (nl === -1) {
      out.push(text.slice(from));
      break;
    }
    out.push(text.slice(from, nl));
    from = nl + 1;
  }
  return out;
}

/** A deterministic digest of what older turns did: files, commands, denials, errors, findings. */
export function extractiveSummary(removed: readonly Message[]): string {
  const digest = new Digest();
  for (const m of removed) digest.add(factOf(m));
  return digest.render();
}

function dropSummary(removed: number): string {
  return `${SUMMARY_MARKER} ${removed} earlier messages were dropped to fit the context budget; use the recall action to read them.`;
}

function dropBytes(removed: number): number {
  return Buffer.byteLength(dropSummary(removed));
}

/** Where compaction stands when nothing more can be left out: the parts it cannot shrink. */
interface Minimum {
  systemBytes: number;
  goalBytes: number;
  /** The newest message when it is not pinned (the latest observation or step); 0 otherwise. */
  latestBytes: number;
  /** The summary of every other message, with its own overhead. */
  summaryBytes: number;
  summarised: number;
  total: number;
}

/**
 * The one-line error when even the minimum does not fit. Every number in it is a part of the
 * total it names, and the total is more than the budget, so the line cannot contradict itself.
 */
function tooSmall(budget: number, m: Minimum): string {
  const parts: string[] = [];
  if (m.systemBytes > 0) parts.push(`the system prompt (${m.systemBytes} bytes)`);
  if (m.goalBytes > 0) parts.push(`the goal (${m.goalBytes} bytes)`);
  if (m.latestBytes > 0) parts.push(`the latest message (${m.latestBytes} bytes)`);
  if (m.summarised > 0)
    parts.push(`a summary of the ${m.summarised} earlier messages (${m.summaryBytes} bytes)`);
  const listed = `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
  // A goal that takes most of the budget is fixed by a shorter goal, not only by a larger budget.
  const goalTooBig = m.goalBytes > budget * GOAL_SHARE_TO_SHORTEN;
  const fix = goalTooBig
    ? "Shorten the goal (or put its text in a file and name the file), raise the budget, or set it to 0 to disable compaction"
    : "Raise the budget or set it to 0 to disable compaction";
  return `the context budget (agent.context_budget_bytes = ${budget}) is too small: ${parts.length > 1 ? `${listed} need` : `${parts[0]} needs`} at least ${m.total} bytes. ${fix}`;
}

/**
 * The fewest bytes `messages` can be compacted to: the pinned messages, the newest message when
 * it is not pinned, and a `drop` summary of everything else.
 */
export function minimumBytes(messages: readonly Message[], pinned: ReadonlySet<number>): number {
  const last = messages.length - 1;
  let n = 0;
  let kept = 0;
  messages.forEach((m, i) => {
    if (pinned.has(i) || i === last) kept += historyBytes([m]);
    else n += 1;
  });
  return kept + (n > 0 ? dropBytes(n) + MESSAGE_OVERHEAD : 0);
}

/**
 * `pinned` are indexes kept whatever happens (system prompt, the run's goal). Returns the
 * compacted history, or an error when even the minimum does not fit the budget.
 *
 * The newest message always stays: a pinned goal just given, or the latest observation the
 * model must see. The oldest unpinned messages are replaced by one summary, which takes the
 * place of the newest message it replaces, so the history keeps its order: a resumed session's
 * new goal stays last, after the summary of everything before it
 * (docs/sessions.md "Resuming a session"), and within a run the summary of its older turns
 * follows its goal.
 *
 * The result is the one the obvious search gives (try keeping the newest message, then two,
 * … and stop at the first that does not fit with its summary), computed in linear time:
 * one pass oldest-first builds the digest and notes the summary's size for every
 * possible cut, one pass newest-first picks the cut, and the summary is rendered once.
 */
export function compactHistory(
  messages: readonly Message[],
  pinned: ReadonlySet<number>,
  budget: number,
  style: "extractive" | "drop",
): Result<Compaction | undefined> {
  const beforeBytes = historyBytes(messages);
  if (budget <= 0 || beforeBytes <= budget) return { ok: true, value: undefined };
  const isPinned = (i: number) => pinned.has(i) && i < messages.length;
  const candidates = messages.map((m, i) => ({ m, i })).filter(({ i }) => !isPinned(i));
  const fixed = historyBytes(messages.filter((_, i) => isPinned(i)));
  const n = candidates.length;
  // summaryBytes[k]: size of the summary of the oldest k candidates (k = 0 … n).
  const summaryBytes = new Array<number>(n + 1);
  const facts: Fact[] = [];
  if (style === "extractive") {
    const digest = new Digest();
    for (let k = 0; k < n; k++) {
      summaryBytes[k] = digest.bytes();
      const fact = factOf(candidates[k]!.m);
      facts.push(fact);
      digest.add(fact);
    }
    summaryBytes[n] = digest.bytes();
  } else {
    for (let k = 0; k <= n; k++) summaryBytes[k] = dropBytes(k);
  }
  // The newest message stays; when it is pinned (the goal, last), every candidate may go.
  const firstCut = isPinned(messages.length - 1) ? n : n - 1;
  // Keep the newest candidates while they fit beside the summary of the older ones.
  let keptBytes = 0;
  let best = -1; // the smallest `keep` that fits: candidates[best..] stay
  for (let keep = firstCut; keep >= 0; keep--) {
    if (keep < n) keptBytes += historyBytes([candidates[keep]!.m]);
    const size = fixed + keptBytes + summaryBytes[keep]! + MESSAGE_OVERHEAD;
    if (size > budget) break;
    best = keep;
  }
  if (best === -1) {
    const latestBytes = firstCut < n ? historyBytes([candidates[n - 1]!.m]) : 0;
    const systemBytes = historyBytes(messages.filter((m, i) => isPinned(i) && m.role === "system"));
    const summary = summaryBytes[firstCut]! + MESSAGE_OVERHEAD;
    return {
      ok: false,
      error: tooSmall(budget, {
        systemBytes,
        goalBytes: fixed - systemBytes,
        latestBytes,
        summaryBytes: summary,
        summarised: firstCut,
        total: fixed + latestBytes + summary,
      }),
    };
  }
  let summary: string;
  if (style === "extractive") {
    const digest = new Digest();
    for (let k = 0; k < best; k++) digest.add(facts[k]!);
    summary = digest.render();
  } else {
    summary = dropSummary(best);
  }
  // The summary stands where the newest message it replaces stood.
  const lastRemoved = best > 0 ? candidates[best - 1]!.i : -1;
  const out: Message[] = [];
  const pinnedAt: number[] = [];
  messages.forEach((m, i) => {
    if (isPinned(i)) {
      pinnedAt.push(out.length);
      out.push(m);
    } else if (i === lastRemoved) out.push({ role: "user", content: summary });
    else if (i > lastRemoved) out.push(m);
  });
  return {
    ok: true,
    value: { messages: out, removed: best, beforeBytes, afterBytes: historyBytes(out), pinnedAt },
  };
}
