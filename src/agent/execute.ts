/**
 * Runs one tool call under a hard deadline. The tool gets an AbortSignal that fires on the
 * deadline or on interruption; a tool that ignores it is abandoned after a short grace so
 * the agent never hangs. Errors inside a tool become observations, never crashes. Only the
 * call pipeline (`calls.ts`) calls this, with the target the gate resolved.
 */

import type { Target } from "../core/types.js";
import { failed } from "../tools/result.js";
import type { AnyTool, PlannedContent, ToolContext, ToolResult } from "../tools/types.js";

/** Time a tool gets after its signal fires to clean up (bash needs 1 s for SIGKILL). */
export const ABORT_GRACE_MS = 2_500;

export async function runToolWithDeadline(
  tool: AnyTool,
  input: unknown,
  target: Target,
  base: Omit<ToolContext, "signal" | "timeoutMs" | "gate" | "call">,
  /** The derived-call hooks, bound to this call's own signal (children stop with their parent). */
  derived: (signal: AbortSignal) => Pick<ToolContext, "gate" | "call" | "progress">,
  timeoutMs: number,
  parent: AbortSignal,
  /** The planned content of a file tool's change: the tool writes exactly this. */
  change?: PlannedContent,
): Promise<ToolResult> {
  const controller = new AbortController();
  let reason: "deadline" | "interrupted" | undefined;
  const onParentAbort = () => {
    reason ??= "interrupted";
    controller.abort(parent.reason);
  };
  if (parent.aborted)
    return failed(`${tool.name}: interrupted before it started`, { stopped: "interrupted" });
  parent.addEventListener("abort", onParentAbort, { once: true });
  const timer = setTimeout(() => {
    reason ??= "deadline";
    controller.abort(new DOMException(`deadline of ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);

  const work = (async () => {
    try {
      // A call that may touch the filesystem (a command could rename a secret) comes after the
      // protected identities are known: see policy/identity.ts.
      if (tool.effects(input).capability !== "native")
        base.services.identities?.protectedIdentities.prime?.();
      const ctx: ToolContext = {
        ...base,
        ...derived(controller.signal),
        signal: controller.signal,
        timeoutMs,
        ...(change ? { change } : {}),
      };
      return await tool.run(input, ctx, target);
    } catch (e) {
      return failed(`${tool.name} error: ${(e as Error)?.message ?? String(e)}`);
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
      ? failed(`${tool.name}: interrupted`, { stopped: "interrupted" })
      : failed(`${tool.name}: timed out after ${timeoutMs} ms`, { stopped: "deadline" });
  } finally {
    clearTimeout(timer);
    parent.removeEventListener("abort", onParentAbort);
  }
}
