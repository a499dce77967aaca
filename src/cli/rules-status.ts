/**
 * The rules `/status` lists (docs/keyboard.md "The REPL"): those of the configuration the session
 * loaded, which apply now, and after them those saved in the home's configuration since it was
 * loaded — by the REPL's offer after an "always", or by another Scoot — which apply from the next
 * session (docs/safety.md "Rules").
 */
import { isDeepStrictEqual } from "node:util";
import { rulesSummary } from "../agent/approval-rules.js";
import { loadConfig } from "../config/load.js";

/** How a rule saved since the session loaded its configuration is marked. */
export const SAVED_SINCE_NOTE = "saved during this session: applies from the next session";

/**
 * One line per rule that applies in the project at `cwd`: the loaded ones as `rulesSummary` gives
 * them, then those the home's configuration holds now and the loaded one did not, marked.
 */
export function rulesStatus(
  loaded: readonly unknown[],
  home: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): string[] {
  const now = rulesSummary(loaded, cwd);
  const reread = loadConfig(home, env);
  // A configuration that no longer loads changes nothing for this session; the next one says why.
  if (!reread.ok) return now;
  const onDisk = reread.value.config.tools.rules;
  const unmatched = [...loaded];
  const added = new Set<number>();
  onDisk.forEach((rule, i) => {
    const same = unmatched.findIndex((r) => isDeepStrictEqual(r, rule));
    if (same === -1) added.add(i);
    else unmatched.splice(same, 1);
  });
  if (added.size === 0) return now;
  const later = rulesSummary(onDisk, cwd).filter((line) =>
    [...added].some((i) => line.startsWith(`tools.rules[${i}]  `)),
  );
  return [...now, ...later.map((line) => `${line} — ${SAVED_SINCE_NOTE}`)];
}
