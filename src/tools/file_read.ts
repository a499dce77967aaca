/**
 * `file_read {path, offset?, limit?}`: a file's text, whole (up to 1 MiB) or a window of lines.
 *
 * A window may be taken from a file of any size: lines are streamed and nothing past the
 * window is read, so `offset`/`limit` is the way into big logs. Binary files are described by
 * size, never dumped.
 */
import * as fs from "node:fs";
import { fsErrorText } from "../core/fs-errors.js";
import { CLIP } from "./clip.js";
import { declareInput, type InputOf, optInt, str } from "./declare.js";
import { readThroughEditor } from "./editor-read.js";
import {
  BINARY_SNIFF_BYTES,
  checkOpenedFile,
  formatBytes,
  judgedPath,
  looksBinary,
  OPEN_JUDGED_READ,
  openFailure,
  readPrefix,
} from "./fs-util.js";
import { done, failed, stoppedBy } from "./result.js";
import type { Tool, ToolDetails, ToolResult } from "./types.js";

/** Largest whole-file read, and largest window returned. */
export const MAX_READ_BYTES = 1024 * 1024;
/** Read size when streaming a window. */
const WINDOW_CHUNK_BYTES = 64 * 1024;

/** The input, declared once: type, validation, prompt shape and example. */
const INPUT = declareInput("file_read", {
  path: str('"..."', { example: '"src/main.ts"' }),
  offset: optInt(1, "1"),
  limit: optInt(1, "200"),
});
export type FileReadInput = InputOf<typeof INPUT.fields>;

export const fileReadTool: Tool<FileReadInput> = {
  name: "file_read",
  describe:
    "Read a text file (up to 1 MiB). For big files read a window of lines: offset is the 1-based first line, limit the number of lines.",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.file_read,
  preferOverShell: true,
  /** Read-only: may run as a `parallel` child. */
  parallelChild: () => undefined,

  parse: INPUT.parse,

  effects(input) {
    return { capability: "read", readPaths: [input.path] };
  },

  present: (input) => ({
    title: `Read ${input.path}`,
    keyArgument: input.path,
    locations: [{ path: input.path, ...(input.offset !== undefined ? { line: input.offset } : {}) }],
  }),

  async run(input, ctx, target) {
    const shown = JSON.stringify(input.path);
    const judged = judgedPath(target.read, "file_read");
    if (!judged.ok) return failed(judged.error);
    let fd: number;
    try {
      fd = fs.openSync(judged.value, OPEN_JUDGED_READ);
    } catch (e) {
      return failed(`file_read: cannot read ${shown}: ${openFailure(e)}`);
    }
    try {
      const checked = checkOpenedFile(fd, judged.value, ctx, "file_read", shown, {
        directory: "use glob to list its files",
        special: " (device, socket or pipe)",
      });
      if (!checked.ok) return failed(checked.error);
      const size = checked.value.size;
      const windowed = input.offset !== undefined || input.limit !== undefined;
      if (!windowed && size > MAX_READ_BYTES) {
        return failed(
          `file_read: ${shown} is ${formatBytes(size)}, over the ${formatBytes(MAX_READ_BYTES)} limit; ` +
            `read a window with offset/limit (e.g. {"path": ${shown}, "offset": 1, "limit": 200}) or search it with grep`,
        );
      }
      if (looksBinary(readPrefix(fd, Math.min(size, BINARY_SNIFF_BYTES)))) {
        // The content was asked for and is not given: the model must take another way.
        return failed(`file_read: ${shown} is a binary file, ${size} bytes (not shown)`);
      }
      // An editor's buffer of the judged file, unsaved changes included (docs/editors.md "Editors (ACP)").
      if (ctx.services.editorBuffers) {
        const { text } = await readThroughEditor(ctx.services.editorBuffers, judged.value, fd, ctx.signal);
        if (text !== undefined && Buffer.byteLength(text) <= MAX_READ_BYTES)
          return windowed
            ? textWindow(text, shown, input.offset ?? 1, input.limit)
            : done(wholeText(text, shown));
      }
      // A window may be far into a file of any size: asynchronous chunks that stop at the
      // deadline. A whole read is bounded (1 MiB) and stays synchronous: it is the common case
      // and an async round trip per call costs more than the read itself.
      if (windowed && size <= MAX_READ_BYTES && !ctx.signal.aborted) {
        // A window of a small file is cut from the whole text, read in one synchronous go like a
        // whole read: the chunked, deadline-aware walk is for large files.
        const { buf, got } = readBounded(fd, size);
        if (got <= MAX_READ_BYTES)
          return textWindow(buf.toString("utf8", 0, got), shown, input.offset ?? 1, input.limit);
      }
      if (windowed) return await readWindow(fd, shown, size, input.offset ?? 1, input.limit, ctx.signal);
      return done(readWhole(fd, shown, size));
    } catch (e) {
      if (e instanceof Stopped) return failed(`file_read: stopped reading ${shown}: ${e.message}`, e.details);
      return failed(`file_read: cannot read ${shown}: ${fsErrorText(e)}`);
    } finally {
      fs.closeSync(fd);
    }
  },
};

/** The read was abandoned because the call's signal fired (deadline or Ctrl-C). */
class Stopped extends Error {
  constructor(
    message: string,
    readonly details: ToolDetails,
  ) {
    super(message);
  }
}

/** Asynchronous positioned read of an open descriptor (no `util.promisify`: a short run loads no `node:util`). */
function readAsync(fd: number, buf: Buffer, offset: number, length: number, position: number) {
  return new Promise<{ bytesRead: number }>((resolve, reject) =>
    fs.read(fd, buf, offset, length, position, (err, bytesRead) =>
      err ? reject(err) : resolve({ bytesRead }),
    ),
  );
}

/** Up to `n` bytes at `pos` (fewer at the end of the file), without blocking the event loop. */
async function readAt(fd: number, pos: number, n: number): Promise<Buffer> {
  const buf = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    const { bytesRead } = await readAsync(fd, buf, got, n - got, pos + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buf.subarray(0, got);
}

/** What the file holds now, read synchronously up to one byte past the limit (the size may have changed since stat). */
function readBounded(fd: number, size: number): { buf: Buffer; got: number } {
  const buf = Buffer.alloc(Math.min(size, MAX_READ_BYTES) + 1);
  let got = 0;
  while (got < buf.length) {
    const r = fs.readSync(fd, buf, got, buf.length - got, got);
    if (r === 0) break;
    got += r;
  }
  return { buf, got };
}

function readWhole(fd: number, shown: string, size: number): string {
  const { buf, got } = readBounded(fd, size);
  if (got === 0) return `(${shown} is empty, 0 bytes)`;
  const text = buf.toString("utf8", 0, Math.min(got, MAX_READ_BYTES));
  if (got > MAX_READ_BYTES)
    return `[${shown} grew past ${formatBytes(MAX_READ_BYTES)}; showing the first part]\n${text}`;
  return wholeText(text, shown, got);
}

/** A whole file's text as the model sees it: with a note when the observation will be clipped. */
function wholeText(text: string, shown: string, got = Buffer.byteLength(text)): string {
  if (got === 0) return `(${shown} is empty, 0 bytes)`;
  if (got <= CLIP.file_read) return text;
  // The observation will be clipped in the middle; say so up front so the model can ask for a window.
  const lines = countLines(text);
  return (
    `[${shown}: ${lines} lines, ${got} bytes; the observation is clipped to about ` +
    `${CLIP.file_read / 1024} KB, so read the part you need with offset/limit]\n${text}`
  );
}

/**
 * Streams the file, keeping only lines offset..offset+limit-1 (at most MAX_READ_BYTES of them);
 * nothing after the window is read. Each chunk is an async read and the signal is checked
 * between chunks, so a far offset in a huge or slow file stops at the deadline.
 */
async function readWindow(
  fd: number,
  shown: string,
  size: number,
  offset: number,
  limit: number | undefined,
  signal: AbortSignal,
): Promise<ToolResult> {
  const last = limit === undefined ? Number.POSITIVE_INFINITY : offset + limit - 1;
  const chunk = Buffer.alloc(WINDOW_CHUNK_BYTES);
  const kept: string[] = [];
  let keptBytes = 0;
  let lineNo = 1; // the line being read
  let pieces: Buffer[] = []; // its bytes so far, when it is inside the window
  let lineLen = 0; // its length so far, inside the window or not
  let pos = 0; // file offset of the next read
  let consumed = 0; // file offset just past the last complete line
  let overflow = false;
  let eof = false;
  reading: while (lineNo <= last) {
    if (signal.aborted) {
      const why = (signal.reason as Error | undefined)?.name === "TimeoutError" ? "timed out" : "interrupted";
      throw new Stopped(`${why} at line ${lineNo} (byte ${pos})`, stoppedBy(signal));
    }
    const { bytesRead: n } = await readAsync(fd, chunk, 0, chunk.length, pos);
    if (n === 0) {
      eof = true;
      break;
    }
    const view = chunk.subarray(0, n);
    let start = 0;
    while (start < n) {
      const nl = view.indexOf(10, start);
      const end = nl === -1 ? n : nl;
      if (lineNo >= offset) {
        if (keptBytes + (end - start) > MAX_READ_BYTES) {
          overflow = true;
          break reading;
        }
        pieces.push(Buffer.from(view.subarray(start, end)));
        keptBytes += end - start;
      }
      lineLen += end - start;
      if (nl === -1) break; // the line goes on in the next chunk
      if (lineNo >= offset) {
        kept.push(Buffer.concat(pieces).toString("utf8"));
        pieces = [];
        keptBytes += 1;
      }
      lineNo++;
      lineLen = 0;
      start = nl + 1;
      consumed = pos + start;
      if (lineNo > last) break reading;
    }
    pos += n;
  }
  if (eof && lineLen > 0) {
    // A last line without a newline is still a line.
    if (lineNo >= offset) kept.push(Buffer.concat(pieces).toString("utf8"));
    lineNo++;
    consumed = pos;
  }
  let total = eof ? lineNo - 1 : undefined;
  if (total === undefined && !overflow && size <= MAX_READ_BYTES) {
    // A small file costs nothing to count to the end, and "of N" tells the model where it is.
    total =
      lineNo - 1 + countLines((await readAt(fd, consumed, Math.max(0, size - consumed))).toString("utf8"));
  }
  if (kept.length === 0) {
    if (overflow)
      return failed(`file_read: line ${lineNo} of ${shown} alone is over ${formatBytes(MAX_READ_BYTES)}`);
    if (total === 0) return done(`(${shown} is empty, 0 bytes)`);
    return failed(`file_read: offset ${offset} is past the end of ${shown}, which has ${total} lines`);
  }
  const to = offset + kept.length - 1;
  let header = `[${shown} lines ${offset}-${to}`;
  if (total !== undefined) header += ` of ${total}]`;
  else if (overflow) header += `; stopped at ${formatBytes(MAX_READ_BYTES)}, continue with offset ${to + 1}]`;
  else header += consumed < size ? `; the file goes on (${formatBytes(size)} in all)]` : "]";
  return done(`${header}\n${kept.join("\n")}`);
}

/** A window of lines of a text already in memory (an editor's buffer), shaped like readWindow's. */
function textWindow(text: string, shown: string, offset: number, limit: number | undefined): ToolResult {
  const lines = text === "" ? [] : (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
  if (lines.length === 0) return done(`(${shown} is empty, 0 bytes)`);
  if (offset > lines.length)
    return failed(`file_read: offset ${offset} is past the end of ${shown}, which has ${lines.length} lines`);
  const kept = lines.slice(offset - 1, limit === undefined ? undefined : offset - 1 + limit);
  return done(
    `[${shown} lines ${offset}-${offset + kept.length - 1} of ${lines.length}]\n${kept.join("\n")}`,
  );
}

/** Lines in a text, a last line without a newline included ("" has none). */
function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}
