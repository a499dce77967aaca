/**
 * `recall {query, limit?=8}` or `{seq, context?=2}`: read back the current session's transcript.
 *
 * The transcript is JSONL, one `{"role","content"}` message per line, in `<path>.1` (the
 * rotated older part, if any) then `<path>`. `seq` is the 1-based line number across both
 * files in that order, so it is stable while no rotation happens. A query is a literal,
 * case-insensitive substring of the content; hits come oldest first, because recall exists to
 * bring back what compaction dropped. Torn or unparsable lines keep their number but are
 * skipped. Recall's own steps and results are skipped by a query, or every query would find
 * itself.
 */

import { fsErrorText } from "../core/fs-errors.js";
import type { Result } from "../core/types.js";
import { readLinesSync } from "../store/lines.js";
import { transcriptFiles } from "../store/session.js";
import { CLIP } from "./clip.js";
import { declareInput, optInt, optStr } from "./declare.js";
import { done, failed } from "./result.js";
import type { Tool, ToolResult } from "./types.js";

export const DEFAULT_RECALL_LIMIT = 8;
export const MAX_RECALL_LIMIT = 20;
export const DEFAULT_RECALL_CONTEXT = 2;
export const MAX_RECALL_CONTEXT = 5;
/** Characters of message content returned in all (the observation is clipped at CLIP.recall bytes). */
const CONTENT_BUDGET_CHARS = 12 * 1024;
/** No message is cut shorter than this when many share the budget. */
const MIN_CONTENT_CHARS = 400;
/** First line of every recall result; marks recall's own output so later queries skip it. */
const RESULT_MARKER = "[recall]";

export type RecallInput = { query: string; limit: number } | { seq: number; context: number };

interface Message {
  seq: number;
  role: string;
  content: string;
}

const EXAMPLE = '{"query": "old error text"} or {"seq": 12}';

/**
 * The input, declared once. Either shape is validated field by field; which fields may go
 * together (query+limit or seq+context) is the refinement.
 */
const INPUT = declareInput(
  "recall",
  {
    query: optStr('"..."', { example: '"old error text"' }),
    limit: optInt(1, "8"),
    seq: optInt(1, "12"),
    context: optInt(0, "2"),
  },
  (f): Result<RecallInput> => {
    if (f.query !== undefined && f.seq !== undefined) {
      return { ok: false, error: 'recall: give either "query" or "seq", not both' };
    }
    if (f.query !== undefined) {
      if (f.context !== undefined)
        return { ok: false, error: 'recall: "context" goes with "seq"; with "query" use "limit"' };
      return {
        ok: true,
        value: { query: f.query, limit: Math.min(MAX_RECALL_LIMIT, f.limit ?? DEFAULT_RECALL_LIMIT) },
      };
    }
    if (f.seq !== undefined) {
      if (f.limit !== undefined)
        return { ok: false, error: 'recall: "limit" goes with "query"; with "seq" use "context"' };
      return {
        ok: true,
        value: { seq: f.seq, context: Math.min(MAX_RECALL_CONTEXT, f.context ?? DEFAULT_RECALL_CONTEXT) },
      };
    }
    return {
      ok: false,
      error: `recall: give "query" (text to find) or "seq" (a message number), e.g. ${EXAMPLE}`,
    };
  },
);

export const recallTool: Tool<RecallInput> = {
  name: "recall",
  describe:
    "Search this session's full transcript (older turns included): {query} finds messages containing the text (case-insensitive, oldest first); {seq} returns that message with its neighbours.",
  inputShape: '{"query": "...", "limit": 8} or {"seq": 12, "context": 2}',
  inputFields: INPUT.names,
  clipBytes: CLIP.recall,

  parse: INPUT.parse,

  effects() {
    return { capability: "native" };
  },

  present(input) {
    if ("query" in input)
      return { title: `Recall "${input.query}"`, keyArgument: input.query, locations: [] };
    return { title: `Recall message #${input.seq}`, keyArgument: `#${input.seq}`, locations: [] };
  },

  async run(input, ctx) {
    if (!ctx.sessionPath) return failed("recall: this run has no session transcript to search");
    const lines = transcriptLines(ctx.sessionPath);
    try {
      return "query" in input
        ? byQuery(lines, input.query, input.limit)
        : bySeq(lines, input.seq, input.context);
    } catch (e) {
      return failed(`recall: cannot read the session transcript: ${fsErrorText(e)}`);
    }
  },
};

/**
 * The transcript's lines, every retired part first (oldest first), then the live file, read
 * one at a time (a transcript of any size is searched in bounded memory). An
 * over-long line comes as undefined text: it keeps its number and reads as unreadable, like a
 * torn line.
 */
function* transcriptLines(sessionPath: string): Generator<string | undefined> {
  for (const file of transcriptFiles(sessionPath)) {
    for (const line of readLinesSync(file)) yield line.text;
  }
}

/** The message on line `seq`, or undefined for a torn, foreign or over-long line. */
function parseLine(line: string | undefined, seq: number): Message | undefined {
  if (line === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== "object") return undefined;
  const { role, content } = v as { role?: unknown; content?: unknown };
  if (typeof role !== "string" || content === undefined) return undefined;
  return { seq, role, content: typeof content === "string" ? content : JSON.stringify(content) };
}

/** True for recall's own traffic: the model's recall steps and the results they returned. */
function isRecallTraffic(m: Message): boolean {
  if (m.role === "assistant") return /"action"\s*:\s*"recall"/.test(m.content);
  return m.content.includes(`${RESULT_MARKER} `);
}

/** No message containing the query is an answer too, as grep's no match is. */
function byQuery(lines: Iterable<string | undefined>, query: string, limit: number): ToolResult {
  const needle = query.toLowerCase();
  const hits: { m: Message; at: number }[] = [];
  let more = 0;
  let count = 0;
  for (const line of lines) {
    count += 1;
    const m = parseLine(line, count);
    if (!m || isRecallTraffic(m)) continue;
    const at = m.content.toLowerCase().indexOf(needle);
    if (at === -1) continue;
    if (hits.length < limit) hits.push({ m, at });
    else more++;
  }
  if (hits.length === 0)
    return done(`${RESULT_MARKER} no messages contain ${JSON.stringify(query)} (${count} searched)`);
  const budget = Math.max(MIN_CONTENT_CHARS, Math.floor(CONTENT_BUDGET_CHARS / hits.length));
  const out = hits.map(({ m, at }) => render(m, excerpt(m.content, at, query.length, budget)));
  const head = `${RESULT_MARKER} ${hits.length + more} message(s) contain ${JSON.stringify(query)}`;
  const tail =
    more > 0
      ? `[${more} later match(es) not shown; narrow the query or raise "limit" (at most ${MAX_RECALL_LIMIT})]`
      : undefined;
  return done([head, ...out, ...(tail ? [tail] : [])].join("\n"));
}

function bySeq(all: Iterable<string | undefined>, seq: number, context: number): ToolResult {
  // Only the window around `seq` is kept; the rest is counted.
  const window = new Map<number, string | undefined>();
  let total = 0;
  for (const line of all) {
    total += 1;
    if (total >= seq - context && total <= seq + context) window.set(total, line);
  }
  if (seq > total) return failed(`recall: seq ${seq} is past the end; the transcript has ${total} messages`);
  const from = Math.max(1, seq - context);
  const to = Math.min(total, seq + context);
  const neighbours = to - from;
  // The asked-for message gets most of the budget; neighbours share the rest.
  const mainBudget = Math.max(
    CONTENT_BUDGET_CHARS / 2,
    CONTENT_BUDGET_CHARS - neighbours * MIN_CONTENT_CHARS * 2,
  );
  const sideBudget =
    neighbours > 0 ? Math.max(MIN_CONTENT_CHARS, (CONTENT_BUDGET_CHARS - mainBudget) / neighbours) : 0;
  const out: string[] = [`${RESULT_MARKER} messages ${from}-${to} of ${total}`];
  for (let s = from; s <= to; s++) {
    const m = parseLine(window.get(s), s);
    if (!m) {
      if (s === seq) out.push(`[seq ${s} is not a readable message (torn or malformed line)]`);
      continue;
    }
    out.push(render(m, excerpt(m.content, 0, 0, Math.floor(s === seq ? mainBudget : sideBudget))));
  }
  return done(out.join("\n"));
}

function render(m: Message, content: string): string {
  return JSON.stringify({ seq: m.seq, role: m.role, content });
}

/** At most `budget` characters of `text`, keeping the part around [at, at+len) and saying what was cut. */
export function excerpt(text: string, at: number, len: number, budget: number): string {
  if (text.length <= budget) return text;
  const lead = Math.floor(budget / 4);
  const from = Math.max(0, Math.min(at - lead, text.length - budget));
  const to = Math.min(text.length, from + Math.max(budget, len));
  const before = from > 0 ? `[... ${from} chars before] ` : "";
  const after = to < text.length ? ` [${text.length - to} chars after ...]` : "";
  return `${before}${text.slice(from, to)}${after}`;
}
