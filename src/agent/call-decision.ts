/**
 * What decides a judged call besides the gate (docs/safety.md "Rules", "Approval"): the
 * `[[tools.rules]]` of the run, checked once, the rule that covers a call's scope, and the
 * session's remembered answers, handed to the one decision function (decide.ts). The run's
 * approval phase, redirect hops and `scoot policy check` all decide through `decisionOf`.
 */
import type { Config, PolicyMode } from "../config/schema.js";
import type { GateSettings } from "../policy/types.js";
import { TOOLS_BY_NAME } from "../tools/registry.js";
import type { AnyTool } from "../tools/types.js";
import type { ApprovalMemory } from "./approval.js";
import {
  type ApprovalRule,
  checkRules,
  decidingRule,
  type RulePlace,
  rulesProblemText,
} from "./approval-rules.js";
import { realRoot } from "./call-prepare.js";
import type { Prepared, Ready } from "./call-record.js";
import { type CallDecision, decideCall, needsApproval, type Ruled } from "./decide.js";

/** The rules of one pipeline, checked once, and the project they are read in. */
export interface PipelineRules {
  rules: readonly ApprovalRule[];
  problems: readonly string[];
  place: RulePlace;
}

/**
 * `[[tools.rules]]` of a configuration, checked against the run's tools. The commands refuse a
 * configuration with a bad rule before any run; one that reaches here unchecked (an embedding
 * program) refuses every call with a scope rather than drop a rule it cannot read.
 */
export function pipelineRules(
  raw: readonly unknown[],
  tools: ReadonlyMap<string, AnyTool>,
  settings: GateSettings,
): PipelineRules | undefined {
  // The common case: no rule, nothing checked or loaded per call.
  if (raw.length === 0) return undefined;
  const { rules, problems } = checkRules(raw, new Map([...TOOLS_BY_NAME, ...tools]));
  return { rules, problems, place: { root: settings.projectRoot, realRoot: realRoot(settings) } };
}

/** The rule that decides a call with a scope, or the problems that keep every rule from applying. */
export function ruleOf(rules: PipelineRules | undefined, ready: Ready): Ruled | undefined {
  if (!rules || ready.scope === undefined) return undefined;
  if (rules.problems.length > 0) return { kind: "broken", text: rulesProblemText(rules.problems) };
  const rule = decidingRule(rules.rules, ready, rules.place);
  return rule ? { kind: "rule", rule } : undefined;
}

/**
 * Whether known-safe commands run unasked in a run (docs/safety.md "Known-safe commands"): in
 * guarded mode, unless `tools.approval_safe_commands = false`. Readonly runs no command and
 * unrestricted has no sandbox, so both ask as before.
 */
export function safeCommandsRun(mode: PolicyMode, config: Pick<Config, "tools">): boolean {
  return mode === "guarded" && config.tools.approval_safe_commands;
}

/** What is known about a judged call besides its record, for `decideCall`. */
export interface DecisionContext {
  rules: PipelineRules | undefined;
  memory?: ApprovalMemory;
  canAsk: boolean;
  /** Known-safe commands run unasked in this run (safeCommandsRun). */
  safeCommands?: boolean;
  cannotApply?: boolean;
  nobody?: string;
}

/** The decision about a prepared call: the gate's, then the rules', the memory's and the person's. */
export function decisionOf(p: Prepared, ctx: DecisionContext): CallDecision {
  if (p.kind === "invalid") return { kind: "refuse", why: "denied", reason: p.error };
  if (p.kind === "denied") return { kind: "refuse", why: "denied", reason: p.reason };
  const remembered = ctx.memory?.answer(p.rememberKey);
  return decideCall(
    {
      verdict: { allow: true },
      ruled: ruleOf(ctx.rules, p),
      ...(remembered ? { remembered } : {}),
      hasEffect: needsApproval(p.effects.capability),
      canAsk: ctx.canAsk,
      knownSafe: ctx.safeCommands === true && p.knownSafe === true,
      ...(ctx.cannotApply ? { cannotApply: true } : {}),
      ...(ctx.nobody ? { nobody: ctx.nobody } : {}),
    },
    p.rememberKey,
  );
}
