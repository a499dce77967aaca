/**
 * The ACP input, bounded line by line before the SDK sees it (docs/editors.md "Editors (ACP)"). The
 * SDK ends its input stream on a message over its limit, and the connection closes with
 * nothing said: the agent would exit 0 in silence. Here a line over the cap is discarded as
 * it streams in; the editor gets a JSON-RPC error when the line's beginning names a request
 * id, stderr gets one line saying what was dropped, and every other line passes on unchanged.
 */
import { PassThrough, type Readable } from "node:stream";
import { boundedLines } from "../serve/bounded-lines.js";

/** The SDK's own limit (its DEFAULT_MAX_MESSAGE_BYTES): a line we pass on never trips it. */
export const ACP_MAX_LINE_BYTES = 32 * 1024 * 1024;
/** How much of a dropped line is kept to find its request id. */
const HEAD_BYTES = 4096;
/** JSON-RPC "Invalid Request". */
const INVALID_REQUEST = -32600;

/** The request id at the start of a line, when the line opens like a JSON-RPC request. */
export function requestIdOf(head: string): string | number | undefined {
  const m = /"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")/.exec(head);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]!) as string | number;
  } catch {
    return undefined;
  }
}

export interface LineCapOptions {
  input: Readable;
  /** Where a JSON-RPC error for a dropped request is written (the protocol's stdout). */
  answer: (line: string) => void;
  log: (line: string) => void;
  maxBytes?: number;
}

/** A stream of the input's lines with every line over the cap taken out (and answered). */
export function capAcpLines(opts: LineCapOptions): Readable {
  const max = opts.maxBytes ?? ACP_MAX_LINE_BYTES;
  const out = new PassThrough();
  const stop = new AbortController();
  out.on("close", () => stop.abort());
  void (async () => {
    try {
      for await (const item of boundedLines(opts.input, max, stop.signal, HEAD_BYTES)) {
        if ("line" in item) {
          if (!out.write(`${item.line}\n`)) await new Promise((r) => out.once("drain", r));
          continue;
        }
        const id = item.head === undefined ? undefined : requestIdOf(item.head);
        const what = `a message of ${item.tooLong} bytes is over the ${max}-byte line limit`;
        opts.log(
          `error: ${what}; dropped${id !== undefined ? ` (request id ${JSON.stringify(id)} answered with an error)` : ""}. Fix: send smaller messages (embed large files as resource links)`,
        );
        if (id !== undefined)
          opts.answer(
            `${JSON.stringify({ jsonrpc: "2.0", id, error: { code: INVALID_REQUEST, message: `${what}; send smaller messages` } })}\n`,
          );
      }
    } catch (e) {
      opts.log(`error: reading the ACP input failed: ${(e as Error).message}`);
    }
    out.end();
  })();
  return out;
}
