/**
 * Where a tool call's project keeps its effect lock (store/effect-lock.ts): under the home of
 * the session (the sandbox service knows it), else the home the environment names.
 */
import { resolveHomeDir } from "../config/home.js";
import { effectLockDir } from "../store/effect-lock.js";
import type { ToolContext } from "./types.js";

export function effectLockDirOf(ctx: Pick<ToolContext, "cwd" | "childEnv" | "services">): string {
  const home = ctx.services.sandbox?.scootHome ?? resolveHomeDir(undefined, ctx.childEnv);
  return effectLockDir(home, ctx.cwd);
}
