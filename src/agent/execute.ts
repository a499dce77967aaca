/**
 * Runs one tool call under a hard deadline. The tool gets an AbortSignal that fires on the
 * deadline or on interruption; a tool that ignores it is abandoned after a short grace so
 * the agent never hangs. Errors inside a tool become observations, never crashes.
 */
import { clip } from "../tools/clip.js";
import type { AnyTool, ToolContext } from "../tools/types.js";

/** Time a tool gets after its signal fires to clean up (bash needs 1 s for SIGKILL). */
export const ABORT_GRACE_MS = 2_500;

/**
 * Runs a derived call (a `parallel` child) inside its parent's deadline and signal: the
 * gate has already allowed it; here it is validated, run and clipped like any call.
 */
async function runChildCall(
  tools: ReadonlyMap<string, AnyTool>,
  action: string,
  raw: string,
  ctx: ToolContext,
): Promise<string> {
  const tool = tools.get(action);
  if (!tool) return `${action}: unknown action`;
  const parsed = tool.parse(raw);
  if (!parsed.ok) return `${action}: invalid input: ${parsed.error}`;
  try {
    return clip(await tool.run(parsed.value, ctx), tool.clipBytes);
  } catch (e) {
    return `${action} error: ${(e as Error)?.message ?? String(e)}`;
  }
}

export async function runToolWithDeadline(
  tool: AnyTool,
  input: unknown,
  base: Omit<ToolContext, "signal" | "timeoutMs">,
  timeoutMs: number,
  parent: AbortSignal,
  tools: ReadonlyMap<string, AnyTool> = new Map(),
): Promise<string> {
  const controller = new AbortController();
  let reason: "deadline" | "interrupted" | undefined;
  const onParentAbort = () => {
    reason ??= "interrupted";
    controller.abort(parent.reason);
  };
  if (parent.aborted) return `${tool.name}: interrupted before it started`;
  parent.addEventListener("abort", onParentAbort, { once: true });
  const timer = setTimeout(() => {
    reason ??= "deadline";
    controller.abort(new DOMException(`deadline of ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);

  const work = (async () => {
    try {
      const ctx: ToolContext = { ...base, signal: controller.signal, timeoutMs };
      ctx.services = { ...base.services, runChild: (action, raw) => runChildCall(tools, action, raw, ctx) };
      return await tool.run(input, ctx);
    } catch (e) {
      return `${tool.name} error: ${(e as Error)?.message ?? String(e)}`;
    }
  })();
  try {
    const abandoned = new Promise<undefined>((resolve) => {
      controller.signal.addEventListener(
        "abort",
        () => setTimeout(() => resolve(undefined), ABORT_GRACE_MS).unref(),
        {
          once: true,
        },
      );
    });
    const result = await Promise.race([work, abandoned]);
    if (result !== undefined) return result;
    return reason === "interrupted"
      ? `${tool.name}: interrupted`
      : `${tool.name}: timed out after ${timeoutMs} ms`;
  } finally {
    clearTimeout(timer);
    parent.removeEventListener("abort", onParentAbort);
  }
}
