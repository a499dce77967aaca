/**
 * `grep {pattern, path, context?}`: the lines of one file that match a regular expression.
 *
 * Linear time whatever the pattern (see line-regex.ts) and streaming whatever the file size:
 * the file is read in chunks of whole lines and only the lines that will be printed are ever
 * decoded. Hits print as `N:text`, context lines as `N-text`; overlapping or touching blocks
 * merge and separate blocks are divided by `--` (as `grep -n -C`).
 */
import * as fs from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import { fsErrorText } from "../core/fs-errors.js";
import type { Result } from "../core/types.js";
import { CLIP } from "./clip.js";
import { declareInput, optInt, str } from "./declare.js";
import {
  BINARY_SNIFF_BYTES,
  checkOpenedFile,
  judgedPath,
  looksBinary,
  OPEN_JUDGED_READ,
  openFailure,
} from "./fs-util.js";
import { compileLineRegex, type LineMatcher } from "./line-regex.js";
import { done, failed, stoppedBy } from "./result.js";
import type { Tool, ToolResult } from "./types.js";

/** Hits printed at most; the rest are counted. */
export const MAX_HITS = 500;
/** `context` is clamped to 0..MAX_CONTEXT lines. */
export const MAX_CONTEXT = 20;
/** Bytes read per chunk. */
const CHUNK_BYTES = 1024 * 1024;
/** A single line longer than this stops the search (the file is not line-oriented text). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Longest piece of one line printed; the window is centred on the match when it is known. */
const MAX_SHOWN_LINE_BYTES = 1000;
/** Output kept at most: the observation is clipped to a few KB anyway, so stop building early. */
const MAX_OUTPUT_BYTES = 256 * 1024;

export interface GrepInput {
  pattern: string;
  path: string;
  context: number;
  /** The compiled pattern (parse compiles it so a bad pattern is a validation error). */
  matcher: LineMatcher;
}

/** The input, declared once: validation, prompt shape and example; `GrepInput` adds the compiled pattern. */
const INPUT = declareInput(
  "grep",
  {
    pattern: str('"..."', { nonEmpty: false, example: '"fn main"' }),
    path: str('"..."', { example: '"src/main.zig"' }),
    // Any integer; clamped to 0..MAX_CONTEXT below rather than refused.
    context: optInt(Number.MIN_SAFE_INTEGER, "2"),
  },
  (input): Result<GrepInput> => {
    // A blank pattern is a real search; only "" (which matches every line) is refused.
    if (input.pattern === "") return { ok: false, error: 'grep: "pattern" must be a non-empty string' };
    const matcher = compileLineRegex(input.pattern);
    if (!matcher.ok) return { ok: false, error: `grep: ${matcher.error}` };
    return {
      ok: true,
      value: {
        pattern: input.pattern,
        path: input.path,
        context: Math.min(MAX_CONTEXT, Math.max(0, input.context ?? 0)),
        matcher: matcher.value,
      },
    };
  },
);

export const grepTool: Tool<GrepInput> = {
  name: "grep",
  describe:
    "Search one file for lines matching a regular expression (RE2 syntax: . ^ $ * + ? [] () | \\d \\w \\s; no backreferences or lookaround). Prints N:line; context (0-20) adds N-line neighbours.",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.grep,
  preferOverShell: true,
  /** Read-only: may run as a `parallel` child. */
  parallelChild: () => undefined,

  parse: INPUT.parse,

  effects(input) {
    return { capability: "read", readPaths: [input.path] };
  },

  present: (input) => ({
    title: `Search "${input.pattern}" in ${input.path}`,
    keyArgument: `${input.pattern} in ${input.path}`,
    locations: [{ path: input.path }],
    search: true,
  }),

  async run(input, ctx, target) {
    const shown = JSON.stringify(input.path);
    const abs = judgedPath(target.read, "grep");
    if (!abs.ok) return failed(abs.error);
    let fh: FileHandle;
    try {
      fh = await open(abs.value, OPEN_JUDGED_READ);
    } catch (e) {
      return failed(`grep: cannot read ${shown}: ${openFailure(e)}`);
    }
    try {
      const checked = checkOpenedFile(fh.fd, abs.value, ctx, "grep", shown, {
        directory: "grep searches one file (use glob to find files first)",
      });
      if (!checked.ok) return failed(checked.error);
      return await search(fh, input, shown, ctx.signal, checked.value.size);
    } catch (e) {
      return failed(`grep: cannot read ${shown}: ${fsErrorText(e)}`);
    } finally {
      await fh.close();
    }
  },
};

/**
 * Reads the file in chunks of whole lines. Two buffers alternate so the next read is already in
 * flight (on libuv's thread pool) while this chunk is searched: on a big file the read time
 * mostly hides behind the search.
 */
async function search(
  fh: FileHandle,
  input: GrepInput,
  shown: string,
  signal: AbortSignal,
  size: number,
): Promise<ToolResult> {
  // A small file gets buffers its size, not two full chunks: an agent greps many small files,
  // and 2 MiB of short-lived buffers per call kept a long run's RSS high. A file
  // that grows meanwhile is still read whole: the buffers grow as below.
  const first0 = Math.min(CHUNK_BYTES, Math.max(BINARY_SNIFF_BYTES, size + 1));
  const bufs = [Buffer.allocUnsafe(first0), Buffer.allocUnsafe(first0)];
  let cur = 0; // which buffer the pending read fills
  let have = 0; // bytes already in it (the partial line carried over)
  let pos = 0; // file offset of the pending read
  let first = true;
  const printer = newPrinter(input.context, (at, length) => countNewlines(fh.fd, at, length));
  let searched = 0; // bytes handed to the printer
  let pending = fh.read(bufs[cur]!, have, bufs[cur]!.length - have, pos);
  for (;;) {
    const { bytesRead } = await pending;
    if (signal.aborted) {
      printer.stopped = { at: searched, size: (await fh.stat()).size };
      break;
    }
    pos += bytesRead;
    const buf = bufs[cur]!;
    const filled = have + bytesRead;
    const eof = bytesRead === 0;
    if (first && (filled >= BINARY_SNIFF_BYTES || eof)) {
      first = false;
      if (looksBinary(buf.subarray(0, Math.min(filled, BINARY_SNIFF_BYTES)))) {
        return failed(`grep: ${shown} is a binary file, ${(await fh.stat()).size} bytes; not searched`);
      }
    }
    const end = eof ? filled : buf.lastIndexOf(10, filled - 1) + 1;
    if (first || (end === 0 && !eof)) {
      // Still sniffing, or no complete line yet: read more into the same buffer, growing it if full.
      if (filled === buf.length) {
        if (buf.length >= MAX_LINE_BYTES) {
          return failed(
            `grep: a line of ${shown} near byte ${pos - filled} is longer than ${MAX_LINE_BYTES / (1024 * 1024)} MiB; this is not line-oriented text`,
          );
        }
        bufs[cur] = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bufs[cur]!, 0, 0, filled);
      }
      have = filled;
      pending = fh.read(bufs[cur]!, have, bufs[cur]!.length - have, pos);
      continue;
    }
    // Carry the partial last line into the other buffer and start its read before searching this one.
    const carry = filled - end;
    const next = 1 - cur;
    if (bufs[next]!.length < carry * 2)
      bufs[next] = Buffer.allocUnsafe(Math.max(bufs[next]!.length, carry) * 2);
    buf.copy(bufs[next]!, 0, end, filled);
    if (!eof) pending = fh.read(bufs[next]!, carry, bufs[next]!.length - carry, pos);
    printer.view(buf.subarray(0, end), searched, input.matcher);
    searched += end;
    if (eof) break;
    cur = next;
    have = carry;
  }
  const text = printer.finish(input.pattern, shown);
  // No match is an answer; a search the deadline cut short is not a whole one, whatever it found.
  if (!printer.stopped) return done(text);
  return failed(text, stoppedBy(signal));
}

interface Printer {
  /** Set when the deadline stopped the search: bytes searched and file size. */
  stopped: { at: number; size: number } | undefined;
  /** Takes the next chunk of whole lines, which starts at file offset `at`. */
  view(text: Buffer, at: number, matcher: LineMatcher): void;
  finish(pattern: string, shown: string): string;
}

interface Hit {
  idx: number;
  ls: number;
  le: number;
  at: number;
}

/** Newlines in a byte range of the file, read again (it was just read, so it is in the page cache). */
function countNewlines(fd: number, at: number, length: number): number {
  const buf = Buffer.allocUnsafe(Math.min(length, CHUNK_BYTES));
  let n = 0;
  for (let done = 0; done < length; ) {
    const got = fs.readSync(fd, buf, 0, Math.min(buf.length, length - done), at + done);
    if (got === 0) break;
    const view = buf.subarray(0, got);
    for (let i = view.indexOf(10); i !== -1; i = view.indexOf(10, i + 1)) n++;
    done += got;
  }
  return n;
}

/**
 * Turns the hits of successive chunks into numbered, merged, context-carrying output.
 * Without context, a chunk a literal cannot match is not even line-counted: its range is noted
 * and counted only if a later hit needs a line number (a search for something absent, the
 * common case, then costs one pass of `indexOf`).
 */
function newPrinter(context: number, countRange: (at: number, length: number) => number): Printer {
  const deferred: [number, number][] = []; // [file offset, length] of chunks not yet line-counted
  const out: string[] = [];
  let outBytes = 0;
  let total = 0; // matching lines seen
  let printedHits = 0;
  let lastPrinted = 0; // number of the last line printed
  let pendingAfter = 0; // context lines still owed after the last hit, carried into the next chunk
  let tail: { n: number; text: string }[] = []; // the last `context` lines of earlier chunks

  const emit = (n: number, sep: ":" | "-", text: string) => {
    if (context > 0 && lastPrinted > 0 && n > lastPrinted + 1) out.push("--");
    const line = `${n}${sep}${text}`;
    out.push(line);
    outBytes += line.length + 1;
    lastPrinted = n;
  };

  let lineBase = 1; // number of the first line of the next chunk
  const printer: Printer = {
    stopped: undefined,

    view(text, at, matcher) {
      if (pendingAfter === 0 && (printedHits >= MAX_HITS || outBytes >= MAX_OUTPUT_BYTES)) {
        // Nothing more will be printed: only the count matters, and line numbers are not needed.
        total += matcher.count(text);
        return;
      }
      if (context === 0 && matcher.mayMatch && !matcher.mayMatch(text)) {
        deferred.push([at, text.length]);
        return;
      }
      for (const [from, length] of deferred.splice(0)) lineBase += countRange(from, length);
      const hits: Hit[] = [];
      let firstUnprinted: number | undefined; // the first hit past the cap: context stops there too
      const lines = matcher.scan(text, (idx, ls, le, at) => {
        total++;
        if (
          firstUnprinted === undefined &&
          printedHits + hits.length < MAX_HITS &&
          outBytes < MAX_OUTPUT_BYTES
        ) {
          hits.push({ idx, ls, le, at });
        } else {
          firstUnprinted ??= idx;
        }
      });
      const base = lineBase;

      // Context owed by a hit at the end of the previous chunk, up to this chunk's first hit.
      if (pendingAfter > 0) {
        const stopAt = hits[0]?.idx ?? firstUnprinted ?? Number.POSITIVE_INFINITY;
        let p = 0;
        let idx = 0;
        while (pendingAfter > 0 && idx < stopAt && p < text.length) {
          const nl = text.indexOf(10, p);
          emit(base + idx, "-", shownLine(text, p, lineEndAt(text, p, nl), -1));
          pendingAfter--;
          idx++;
          if (nl === -1) break;
          p = nl + 1;
        }
        if (idx >= stopAt) pendingAfter = 0;
      }

      for (let k = 0; k < hits.length; k++) {
        const h = hits[k]!;
        if (outBytes >= MAX_OUTPUT_BYTES) break; // the remaining hits are counted, not printed
        const n = base + h.idx;
        if (context > 0) {
          const want = Math.min(context, n - 1 - lastPrinted);
          for (const b of linesBefore(text, h.ls, n, want, tail)) emit(b.n, "-", b.text);
        }
        emit(n, ":", shownLine(text, h.ls, h.le, h.at));
        printedHits++;
        if (context === 0) continue;
        const stopAt = hits[k + 1]?.idx ?? firstUnprinted ?? Number.POSITIVE_INFINITY;
        let remaining = context;
        let idx = h.idx + 1;
        let nl = text.indexOf(10, h.le);
        let p = nl === -1 ? text.length : nl + 1;
        while (remaining > 0 && idx < stopAt && p < text.length) {
          nl = text.indexOf(10, p);
          emit(base + idx, "-", shownLine(text, p, lineEndAt(text, p, nl), -1));
          remaining--;
          idx++;
          p = nl === -1 ? text.length : nl + 1;
        }
        pendingAfter = idx < stopAt && p >= text.length ? remaining : 0;
      }

      if (context > 0) tail = [...tail, ...lastLines(text, context, base, lines)].slice(-context);
      lineBase = base + lines;
    },

    finish(pattern, shown) {
      const stop = printer.stopped;
      const stoppedNote = stop
        ? `\n[stopped early after ${stop.at} of ${stop.size} bytes: the tool deadline was reached; counts are partial]`
        : "";
      if (total === 0) return `no matches for ${JSON.stringify(pattern)} in ${shown}${stoppedNote}`;
      const rest = total - printedHits;
      const restNote =
        rest > 0
          ? `\n[... and ${rest} more matching lines not shown (${total} in all); narrow the pattern]`
          : "";
      return `${out.join("\n")}${restNote}${stoppedNote}`;
    },
  };
  return printer;
}

/** Up to `want` lines before the line starting at `ls` (number n), oldest first; earlier chunks' lines come from `tail`. */
function linesBefore(
  text: Buffer,
  ls: number,
  n: number,
  want: number,
  tail: readonly { n: number; text: string }[],
): { n: number; text: string }[] {
  const found: { n: number; text: string }[] = [];
  let m = n - 1;
  let start = ls;
  while (found.length < want && start > 0) {
    const nl = start - 1; // the newline ending line m
    const prev = nl > 0 ? text.lastIndexOf(10, nl - 1) : -1;
    found.push({ n: m, text: shownLine(text, prev + 1, lineEndAt(text, prev + 1, nl), -1) });
    m--;
    start = prev + 1;
  }
  for (let t = tail.length - 1; found.length < want && t >= 0; t--) {
    const line = tail[t]!;
    if (line.n === m) {
      found.push(line);
      m--;
    }
  }
  return found.reverse();
}

/** The last `count` lines of a chunk holding `lines` lines from number `base`, oldest first. */
function lastLines(text: Buffer, count: number, base: number, lines: number): { n: number; text: string }[] {
  const found: { n: number; text: string }[] = [];
  let end = text.length > 0 && text[text.length - 1] === 10 ? text.length - 1 : text.length;
  let n = base + lines - 1;
  while (found.length < count && n >= base) {
    const prev = end > 0 ? text.lastIndexOf(10, end - 1) : -1;
    const nl = end < text.length ? end : -1;
    found.push({ n, text: shownLine(text, prev + 1, lineEndAt(text, prev + 1, nl), -1) });
    n--;
    if (prev === -1) break;
    end = prev;
  }
  return found.reverse();
}

/** End of the line starting at `ls` whose newline is at `nl` (-1: none), without a "\r" before the newline. */
function lineEndAt(text: Buffer, ls: number, nl: number): number {
  if (nl === -1) return text.length;
  return nl > ls && text[nl - 1] === 13 ? nl - 1 : nl;
}

/** A line's text for output; a very long line is cut to a window around the match (`at`, -1 if unknown). */
function shownLine(text: Buffer, ls: number, le: number, at: number): string {
  if (le - ls <= MAX_SHOWN_LINE_BYTES) return text.toString("utf8", ls, le);
  let from = at < 0 ? ls : Math.max(ls, Math.min(at - MAX_SHOWN_LINE_BYTES / 4, le - MAX_SHOWN_LINE_BYTES));
  while (from < le && (text[from]! & 0xc0) === 0x80) from++; // start on a character boundary
  let to = Math.min(le, from + MAX_SHOWN_LINE_BYTES);
  while (to > from && to < le && (text[to]! & 0xc0) === 0x80) to--;
  const head = from > ls ? `[${from - ls} bytes] ... ` : "";
  const rest = to < le ? ` ... [${le - to} more bytes]` : "";
  return `${head}${text.toString("utf8", from, to)}${rest}`;
}
