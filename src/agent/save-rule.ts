/**
 * Saves an approval rule in Scoot's own configuration (docs/safety.md "Rules"): what the REPL
 * calls when the person keeps an "always" as a rule for this project. One `[[tools.rules]]`
 * table is appended to `config.toml` in the home:
 *
 * - the existing text is kept byte for byte, the table's values written by the TOML library;
 * - the result is parsed again and must be the old document plus exactly this rule, with every
 *   rule passing the same check the commands run, before it replaces the file;
 * - the file is replaced atomically (src/core/atomic-write.ts) under a lock in the home, at its
 *   real place when it is a symlink, with its permission bits.
 *
 * A home whose configuration is `config.json` is not rewritten (that would drop the person's
 * formatting): the answer says what to add by hand.
 */
import fs from "node:fs";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { loadConfig } from "../config/load.js";
import { atomicWriteFile } from "../core/atomic-write.js";
import { lazyRequire } from "../core/lazy.js";
import { withLock } from "../core/lock.js";
import { CONFIG_MAX_BYTES, readHomeFile } from "../core/safe-open.js";
import type { Result } from "../core/types.js";
import { checkRules, type RuleText, rulesProblemText } from "./approval-rules.js";

/** The TOML library, paid for only when a rule is saved. */
const smolToml = lazyRequire<typeof import("smol-toml")>("smol-toml");

/** Permission bits of a config file this creates: it may sit beside credentials. */
const NEW_CONFIG_MODE = 0o600;
/** Serialises savers of one home (two REPLs answering at once must not lose a rule). */
const LOCK_NAME = ".config.toml.lock";

export interface SavedRule {
  /** The file that now holds the rule. */
  file: string;
  /** `tools.rules[N]`: the rule's name in that file. */
  name: string;
  /** False when the same rule was already there (nothing was written). */
  written: boolean;
}

/** The rule as its table: the fields in their documented order, `project` only when set. */
function ruleTable(rule: RuleText): Record<string, string> {
  return {
    tool: rule.tool,
    match: rule.match,
    decision: rule.decision,
    ...(rule.project !== undefined ? { project: rule.project } : {}),
  };
}

function rulesOf(doc: Record<string, unknown>): unknown[] {
  const tools = doc.tools as Record<string, unknown> | undefined;
  return Array.isArray(tools?.rules) ? tools.rules : [];
}

/**
 * Appends `rule` to `<home>/config.toml` (created, mode 0600, when the home has no configuration).
 * The rule is checked first; its `match` is saved in the scope's own form (`./a.txt` → `a.txt`).
 */
export function saveApprovalRule(home: string, rule: RuleText): Result<SavedRule> {
  const checked = checkRules([ruleTable(rule)]);
  const first = checked.rules[0];
  if (!first) {
    const text = rulesProblemText(checked.problems).replaceAll("tools.rules[0]", "the rule");
    return { ok: false, error: `cannot save the rule: ${text}` };
  }
  const canonical: RuleText = { tool: first.tool, match: first.match, decision: first.decision };
  if (first.project !== undefined) canonical.project = first.project;
  try {
    return withLock(path.join(home, LOCK_NAME), () => appendRule(home, canonical));
  } catch (e) {
    return { ok: false, error: `cannot save the rule: ${(e as Error).message}` };
  }
}

function appendRule(home: string, rule: RuleText): Result<SavedRule> {
  const file = path.join(home, "config.toml");
  const fail = (why: string): Result<SavedRule> => ({
    ok: false,
    error: `cannot save the rule in ${file}: ${why}`,
  });
  const read = readHomeFile(file, { maxBytes: CONFIG_MAX_BYTES, noFollow: false });
  if (!read.ok && !read.missing) return fail(read.error);
  const json = path.join(home, "config.json");
  if (!read.ok && fs.existsSync(json)) {
    const table = JSON.stringify(ruleTable(rule));
    return {
      ok: false,
      error: `cannot save the rule: the configuration is ${json}, which Scoot does not rewrite; add ${table} to its "tools": {"rules": [...]} list`,
    };
  }
  // The configuration must load as it is: a rule is never what breaks it, nor hides a problem.
  const current = loadConfig(home, {});
  if (!current.ok) return fail(`the configuration has a problem; fix it first: ${current.error.message}`);
  const before = read.ok ? read.text : "";
  const oldDoc = smolToml().parse(before) as Record<string, unknown>;
  const existing = rulesOf(oldDoc);
  const table = smolToml().stringify({ tools: { rules: [ruleTable(rule)] } });
  // The table as the parser reads it back (its objects have the parser's own shape).
  const added = rulesOf(smolToml().parse(table) as Record<string, unknown>);
  const same = existing.findIndex((r) => isDeepStrictEqual(r, added[0]));
  if (same !== -1) return { ok: true, value: { file, name: `tools.rules[${same}]`, written: false } };

  const gap = before === "" ? "" : before.endsWith("\n") ? "\n" : "\n\n";
  const after = `${before}${gap}${table}`;
  if (Buffer.byteLength(after) > CONFIG_MAX_BYTES)
    return fail(`the file would pass ${CONFIG_MAX_BYTES} bytes, the most a configuration may hold`);
  let newDoc: Record<string, unknown>;
  try {
    newDoc = smolToml().parse(after) as Record<string, unknown>;
  } catch (e) {
    const why = (e as Error).message.split("\n")[0];
    return fail(
      `a [[tools.rules]] table cannot follow its content (${why}); if it writes tools.rules as an inline list, add the rule there by hand`,
    );
  }
  // What the file must now say: the old document (parsed afresh, not cloned, so its values
  // keep the parser's classes) with exactly this rule after the others.
  const expected = smolToml().parse(before) as Record<string, unknown>;
  const tools = expected.tools as Record<string, unknown> | undefined;
  if (tools === undefined) expected.tools = (smolToml().parse(table) as Record<string, unknown>).tools;
  else tools.rules = [...rulesOf(expected), ...added];
  if (!isDeepStrictEqual(newDoc, expected))
    return fail("the appended table would change more than the rules; add the rule by hand");
  const rules = checkRules(rulesOf(newDoc));
  if (rules.problems.length > 0) return fail(rulesProblemText(rules.problems));

  const target = read.ok ? fs.realpathSync(file) : file;
  const mode = read.ok ? fs.statSync(target).mode & 0o777 : NEW_CONFIG_MODE;
  const written = atomicWriteFile(target, after, { mode });
  if (!written.ok) return fail(written.error);
  return { ok: true, value: { file, name: `tools.rules[${existing.length}]`, written: true } };
}
