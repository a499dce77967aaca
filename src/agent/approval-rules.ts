/**
 * Approval rules (docs/safety.md "Rules"): `[[tools.rules]]` entries `{tool, match, decision,
 * project?}` in Scoot's own configuration — the home's config file, never the project's, never
 * the environment — that answer the approval question before anyone is asked.
 *
 * `match` is an approval scope (docs/safety.md "Approval scopes"), the very text an "always"
 * covers: `npm test`, `notes.txt`, `POST https://api.example.com`, `github/create_issue`. The
 * gate decides first; a rule is read only for a call the gate allowed, so it can never allow
 * what the gate denies. When several rules match one call, the strictest decides —
 * deny, then ask, then allow — and among rules of one decision the first written; a rule with a
 * `project` applies only in that project root.
 */
import fs from "node:fs";
import path from "node:path";
import { describeType, isPlainObject } from "../config/declare.js";
import { TOOLS_BY_NAME } from "../tools/registry.js";
import type { AnyTool } from "../tools/types.js";

export const RULE_DECISIONS = ["allow", "ask", "deny"] as const;
export type RuleDecision = (typeof RULE_DECISIONS)[number];

/** The strictest decision first: the order in which matching rules decide. */
const STRICTEST_FIRST: readonly RuleDecision[] = ["deny", "ask", "allow"];

const RULE_FIELDS = ["tool", "match", "decision", "project"] as const;

/** What a rule is written as: the rule a REPL saves, and one `[[tools.rules]]` table. */
export interface RuleText {
  tool: string;
  match: string;
  decision: RuleDecision;
  /** The project root (absolute) the rule is kept to; absent: every project. */
  project?: string;
}

/** A checked rule: its scope text in the tool's own form, and where it was written. */
export interface ApprovalRule extends RuleText {
  /** `tools.rules[N]`: how problems, the audit and the model's observation name it. */
  name: string;
  /** The project root as written and with its symlinks followed, when it has one. */
  projectPlaces?: readonly string[];
}

export interface CheckedRules {
  rules: ApprovalRule[];
  /** One line per problem, each naming `tools.rules[N].<field>`, the value and the fix. */
  problems: string[];
}

/** The tools a rule may name: those that declare an approval scope. */
function scopedTools(tools: ReadonlyMap<string, AnyTool>): string[] {
  return [...tools.values()].filter((t) => t.approvalScope).map((t) => t.name);
}

function shown(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : describeType(value);
}

/** Both spellings of a project root: as written, and with every symlink followed. */
function placesOf(root: string): string[] {
  const lexical = path.resolve(root);
  try {
    const real = fs.realpathSync(lexical);
    return real === lexical ? [lexical] : [lexical, real];
  } catch {
    return [lexical];
  }
}

/** One entry checked: every problem of it, and the rule when there is none. */
function checkRule(
  entry: unknown,
  name: string,
  tools: ReadonlyMap<string, AnyTool>,
): { rule?: ApprovalRule; problems: string[] } {
  const problems: string[] = [];
  const toolList = scopedTools(tools).join(", ");
  if (!isPlainObject(entry))
    return { problems: [`${name}: expected a table {tool, match, decision}, got ${describeType(entry)}`] };
  for (const key of Object.keys(entry)) {
    if (!(RULE_FIELDS as readonly string[]).includes(key))
      problems.push(
        `${name}.${key}: unknown field; a rule has ${RULE_FIELDS.join(", ")} (check the spelling)`,
      );
  }
  const { tool: toolName, match, decision, project } = entry;
  let tool: AnyTool | undefined;
  if (typeof toolName !== "string" || toolName.trim() === "") {
    const got = toolName === undefined ? "missing" : `expected a tool name, got ${shown(toolName)}`;
    problems.push(`${name}.tool: ${got}; write tool = "<name>", one of ${toolList}`);
  } else {
    tool = tools.get(toolName);
    if (!tool?.approvalScope) {
      const why = tool ? "asks nothing, so no rule applies to it" : "is not a tool";
      problems.push(`${name}.tool: "${toolName}" ${why}; write one of ${toolList}`);
      tool = undefined;
    }
  }
  if (typeof decision !== "string" || !(RULE_DECISIONS as readonly string[]).includes(decision)) {
    const got = decision === undefined ? "missing" : `${shown(decision)} is not a decision`;
    problems.push(`${name}.decision: ${got}; write decision = "allow", "ask" or "deny"`);
  }
  const example = tool?.approvalScope?.example ?? "npm test";
  let scope: string | undefined;
  if (typeof match !== "string" || match.trim() === "") {
    const got =
      match === undefined
        ? "missing"
        : typeof match === "string"
          ? "empty"
          : `expected a string, got ${shown(match)}`;
    problems.push(`${name}.match: ${got}; write the scope the rule covers, e.g. match = "${example}"`);
  } else if (tool?.approvalScope) {
    const parsed = tool.approvalScope.parseMatch(match);
    if (parsed.ok) scope = parsed.value;
    else problems.push(`${name}.match: ${parsed.error}`);
  }
  let projectPlaces: string[] | undefined;
  if (project !== undefined) {
    if (typeof project !== "string" || !path.isAbsolute(project)) {
      const got =
        typeof project === "string"
          ? `${shown(project)} is not an absolute path`
          : `expected a path, got ${shown(project)}`;
      problems.push(
        `${name}.project: ${got}; write the project root's absolute path (project = "/home/me/src/app"), or leave project out for every project`,
      );
    } else projectPlaces = placesOf(project);
  }
  if (problems.length > 0 || !tool || scope === undefined) return { problems };
  const rule: ApprovalRule = {
    name,
    tool: tool.name,
    match: scope,
    decision: decision as RuleDecision,
    ...(typeof project === "string" ? { project: path.resolve(project) } : {}),
    ...(projectPlaces ? { projectPlaces } : {}),
  };
  return { rule, problems };
}

/**
 * Checks every `[[tools.rules]]` entry against the tools that declare a scope (the registry's,
 * unless given) and reports every problem of every entry, not only the first.
 */
export function checkRules(
  raw: readonly unknown[],
  tools: ReadonlyMap<string, AnyTool> = TOOLS_BY_NAME,
): CheckedRules {
  const rules: ApprovalRule[] = [];
  const problems: string[] = [];
  raw.forEach((entry, i) => {
    const checked = checkRule(entry, `tools.rules[${i}]`, tools);
    problems.push(...checked.problems);
    if (checked.rule) rules.push(checked.rule);
  });
  return { rules, problems };
}

/** The problems as one configuration error: the line, or a count and one indented line each. */
export function rulesProblemText(problems: readonly string[]): string {
  if (problems.length === 1) return problems[0]!;
  return `${problems.length} problems in tools.rules:\n${problems.map((p) => `  ${p}`).join("\n")}`;
}

/** Where a call runs: the project root, and the same with its symlinks followed. */
export interface RulePlace {
  root: string;
  realRoot: string | undefined;
}

function appliesIn(rule: ApprovalRule, where: RulePlace): boolean {
  if (!rule.projectPlaces) return true;
  return rule.projectPlaces.some((p) => p === where.root || p === where.realRoot);
}

/** The call as a rule sees it: its tool, its input and its scope. */
export interface RuleSubject {
  tool: AnyTool;
  input: unknown;
  scope?: string;
}

function matches(rule: ApprovalRule, call: RuleSubject): boolean {
  if (rule.tool !== call.tool.name || call.scope === undefined) return false;
  if (rule.match === call.scope) return true;
  // A deny or ask rule reaches further: bash's words in order (`git -C . clean -fdx`).
  return (
    rule.decision !== "allow" && (call.tool.approvalScope?.narrowedBy?.(call.input, rule.match) ?? false)
  );
}

/** The rule that decides a call, by the order in the module comment; undefined: none matches. */
export function decidingRule(
  rules: readonly ApprovalRule[],
  call: RuleSubject,
  where: RulePlace,
): ApprovalRule | undefined {
  const matching = rules.filter((r) => appliesIn(r, where) && matches(r, call));
  for (const decision of STRICTEST_FIRST) {
    const rule = matching.find((r) => r.decision === decision);
    if (rule) return rule;
  }
  return undefined;
}

/** A rule in one line: `deny bash "git clean"`. */
export function ruleLabel(rule: RuleText): string {
  return `${rule.decision} ${rule.tool} ${JSON.stringify(rule.match)}`;
}

/** What the rule covers, in the words the approval question uses. */
function ruleMeaning(rule: ApprovalRule, tools: ReadonlyMap<string, AnyTool>): string {
  return tools.get(rule.tool)?.approvalScope?.meaning(rule.match) ?? rule.match;
}

/** Each valid rule's name (`tools.rules[N]`) and what it covers where, for `scoot config`. */
export function ruleNotes(
  raw: readonly unknown[],
  tools: ReadonlyMap<string, AnyTool> = TOOLS_BY_NAME,
): Map<string, string> {
  const notes = new Map<string, string>();
  for (const r of checkRules(raw, tools).rules) {
    const where = r.project ? `in ${r.project} only` : "in every project";
    notes.set(r.name, `${r.name}: ${r.decision} — ${ruleMeaning(r, tools)}, ${where}`);
  }
  return notes;
}

/**
 * The rules that apply in a project root, one line each, in the order they are written:
 * `tools.rules[0]  allow bash "npm test" (every "npm test …" command; this project)`. A
 * configuration whose rules have problems says so instead (nothing of it applies).
 */
export function rulesSummary(
  raw: readonly unknown[],
  projectRoot: string,
  tools: ReadonlyMap<string, AnyTool> = TOOLS_BY_NAME,
): string[] {
  const { rules, problems } = checkRules(raw, tools);
  if (problems.length > 0) return problems.map((p) => `problem: ${p}`);
  const where: RulePlace = { root: path.resolve(projectRoot), realRoot: placesOf(projectRoot).at(-1) };
  return rules
    .filter((r) => appliesIn(r, where))
    .map(
      (r) =>
        `${r.name}  ${ruleLabel(r)} (${ruleMeaning(r, tools)}; ${r.project ? "this project" : "every project"})`,
    );
}
