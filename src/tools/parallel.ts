/**
 * `parallel {calls:[{action, input}]}`: run 1–4 independent read-only calls concurrently.
 *
 * Its declaration (declare.ts `calls`) checks the shape (count, each call an {action, input}). The call pipeline
 * (`agent/calls.ts`) then validates every child against its own tool (it must be marked
 * `parallelChild` and accept the input) before any runs, and judges each one once: a denied
 * child becomes a "denied" entry and the rest still run. `ctx.call` runs each child as it
 * was judged, through the rest of the pipeline: audited, under this call's deadline, clipped.
 * Results come back in call order, each under a `[i] action input` header and clipped to its
 * share.
 */
import { clip } from "../core/clip.js";
import { CLIP } from "./clip.js";
import { calls, declareInput, type InputOf } from "./declare.js";
import { done } from "./result.js";
import type { Tool } from "./types.js";

export const MAX_PARALLEL_CALLS = 4;
/** Longest child input echoed in its result header. */
const MAX_HEADER_INPUT_CHARS = 160;
/** Smallest share of the observation a child keeps, however many there are. */
const MIN_CHILD_CLIP_BYTES = 256;

/** The one declaration: the `calls` field checks the shape; each child's own declaration checks its input. */
export const INPUT = declareInput("parallel", {
  calls: calls(
    MAX_PARALLEL_CALLS,
    '[{"action": "file_read", "input": {"path": "..."}}, {"action": "grep", "input": {...}}]',
    '[{"action": "file_read", "input": {"path": "README.md"}}]',
  ),
});

export type ParallelInput = InputOf<typeof INPUT.fields>;

export const parallelTool: Tool<ParallelInput> = {
  name: "parallel",
  describe: `Run 1-${MAX_PARALLEL_CALLS} independent read-only calls at once; results come back in call order.`,
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.parallel,

  parse: INPUT.parse,

  effects() {
    // The fan-out itself only reads; each child is judged on its own effects (children()).
    return { capability: "read" };
  },

  present: (input) => ({
    title: `Run ${input.calls.length} calls together`,
    keyArgument: `${input.calls.length} calls`,
    locations: [],
  }),

  children: (input) => input.calls,

  async run(input, ctx) {
    const budget = Math.floor(CLIP.parallel / input.calls.length);
    const results = await Promise.all(
      input.calls.map(async (call, i) => {
        const header = `[${i + 1}] ${call.action} ${shorten(call.input)}`;
        let body: string;
        try {
          body = await ctx.call(call.action, call.input);
        } catch (e) {
          body = `error: ${e instanceof Error ? e.message : String(e)}`;
        }
        return `${header}\n${clip(body, Math.max(MIN_CHILD_CLIP_BYTES, budget - Buffer.byteLength(header) - 2))}`;
      }),
    );
    // Each child's outcome is reported under its own header; the fan-out itself did its work.
    return done(results.join("\n\n"));
  },
};

function shorten(s: string): string {
  const one = s.replace(/\s+/g, " ");
  return one.length > MAX_HEADER_INPUT_CHARS ? `${one.slice(0, MAX_HEADER_INPUT_CHARS)}…` : one;
}
