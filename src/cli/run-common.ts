/** What `-e`, the REPL and `serve` share: the effective policy mode and the session id. */
import type { Config, PolicyMode } from "../config/schema.js";
import { effectiveUnattended, parsePolicyMode } from "../policy/modes.js";
import { newSessionId, validateSessionId } from "../store/session.js";
import type { Result } from "../tools/types.js";
import { flagBool, flagCount, flagString, type ParsedArgs } from "./args.js";

/**
 * `--policy` overrides tools.policy freely; with `--unattended` the result is clamped to
 * edge.max_job_policy and guarded becomes readonly. An unknown mode on the command line is
 * a usage error (in a file it falls back to guarded with a warning).
 */
export function resolveMode(args: ParsedArgs, config: Config): Result<PolicyMode> {
  const flag = flagString(args, "policy");
  let requested = config.tools.policy;
  if (flag !== undefined) {
    const parsed = parsePolicyMode(flag);
    if (!parsed)
      return { ok: false, error: `unknown policy "${flag}" (use readonly, guarded, unrestricted or yolo)` };
    requested = parsed;
  }
  if (flagBool(args, "unattended"))
    return { ok: true, value: effectiveUnattended(requested, config.edge.max_job_policy) };
  return { ok: true, value: requested };
}

export function resolveSessionId(args: ParsedArgs, kind: "cli" | "repl"): Result<string> {
  const flag = flagString(args, "session-id");
  if (flag === undefined) return { ok: true, value: newSessionId(kind) };
  return validateSessionId(flag);
}

export function resolveRetries(args: ParsedArgs): Result<number | undefined> {
  return flagCount(args, "retries");
}
