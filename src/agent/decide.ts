/**
 * The one decision about a call (docs/safety.md "One call pipeline"): pure, no I/O, no audit.
 * It takes what is known once the gate has judged the call — the gate's verdict (plan
 * narrowing included), the `[[tools.rules]]` entry that covers the call's scope (or the
 * problems that keep every rule from applying), the session's remembered answer for the
 * call's key, whether the call has an effect a person is asked about, whether it is a
 * known-safe command that runs unasked (docs/safety.md "Known-safe commands"), and whether
 * anyone can be asked — and returns what happens: run (and why), refuse (and why), or ask.
 *
 * The approval phase (calls.ts) is decide → audit → ask → remember; a redirect hop is decided
 * here with nobody to ask; `scoot policy check` prints this same value. The table of every
 * combination is test/agent/decide.test.ts.
 */
import type { Capability } from "../core/types.js";
import type { RememberedAnswer } from "./approval.js";
import { type ApprovalRule, ruleLabel } from "./approval-rules.js";

/**
 * Capabilities whose calls wait for a person: effects on files, processes and remote state.
 * Reads (files, GET/HEAD, skills, recall) never ask: they change nothing the person would
 * have to undo, and a `parallel` call is made of reads only.
 */
const ASKING_CAPABILITIES: ReadonlySet<Capability> = new Set(["write", "net_write", "exec"]);

export function needsApproval(capability: Capability): boolean {
  return ASKING_CAPABILITIES.has(capability);
}

/** The rule that covers a call, or the problems that keep every rule from applying. */
export type Ruled = { kind: "rule"; rule: ApprovalRule } | { kind: "broken"; text: string };

export interface DecideInput {
  /** The gate's verdict (a plan that binds narrows it before). */
  verdict: { allow: true } | { allow: false; reason: string };
  /** The rule that covers the call's scope; undefined: none does (or the call has no scope). */
  ruled?: Ruled;
  /** The session's earlier "always" / "reject always" for the call's key. */
  remembered?: RememberedAnswer;
  /** The call has an effect a person is asked about (a write, a command, a remote change). */
  hasEffect: boolean;
  /** Someone can be asked now (an approver is set, and this is not a redirect hop). */
  canAsk: boolean;
  /**
   * A known-safe command where those run unasked (guarded mode, `tools.approval_safe_commands`):
   * it runs instead of being asked about, unless a rule or a remembered refusal decides.
   */
  knownSafe?: boolean;
  /**
   * The change cannot be made (file_edit's `old` is not there): nobody is asked, the call
   * fails with the tool's own words when it runs.
   */
  cannotApply?: boolean;
  /** What a refusal of an ask rule says about why nobody answers ("nobody can answer in this run"). */
  nobody?: string;
}

export type CallDecision =
  | { kind: "run"; why: "not_needed" }
  | { kind: "run"; why: "rule"; rule: string; reason: string }
  | { kind: "run"; why: "remembered" }
  | { kind: "run"; why: "known_safe" }
  | { kind: "refuse"; why: "denied"; reason: string }
  | { kind: "refuse"; why: "rule"; rule: string; reason: string }
  | { kind: "refuse"; why: "remembered"; reason: string }
  | { kind: "refuse"; why: "broken_rules"; rule: "tools.rules"; reason: string }
  | { kind: "ask"; rule?: string };

export function deniedByRule(rule: ApprovalRule): string {
  return `denied by rule ${rule.name} (${ruleLabel(rule)})`;
}

export function askedByRule(rule: ApprovalRule, nobody: string): string {
  return `rule ${rule.name} (${ruleLabel(rule)}) asks the user about this call, and ${nobody}`;
}

export function brokenRulesReason(problems: string): string {
  return `the approval rules in the user's configuration have problems, so no call they could cover runs until they are fixed (${problems})`;
}

export function allowedByRule(rule: ApprovalRule): string {
  return `allowed by rule ${rule.name} (${ruleLabel(rule)})`;
}

/** Why a remembered "reject always" refuses a call, naming its key. */
export function refusedEarlier(key: string): string {
  return `refused earlier ("reject always" for ${key})`;
}

/** The decision about one call; `key` (its remember key) names a remembered refusal. */
export function decideCall(input: DecideInput, key: string): CallDecision {
  const { verdict, ruled, remembered, hasEffect, canAsk } = input;
  if (!verdict.allow) return { kind: "refuse", why: "denied", reason: verdict.reason };
  if (ruled?.kind === "broken")
    return {
      kind: "refuse",
      why: "broken_rules",
      rule: "tools.rules",
      reason: brokenRulesReason(ruled.text),
    };
  const rule = ruled?.rule;
  if (rule?.decision === "deny")
    return { kind: "refuse", why: "rule", rule: rule.name, reason: deniedByRule(rule) };
  // A "reject always" holds for every call with its key, a redirect hop's included.
  if (remembered === "refuse") return { kind: "refuse", why: "remembered", reason: refusedEarlier(key) };
  const asks = rule?.decision === "ask" ? rule : undefined;
  if (asks && !canAsk && !input.cannotApply)
    return {
      kind: "refuse",
      why: "rule",
      rule: asks.name,
      reason: askedByRule(asks, input.nobody ?? "nobody can answer in this run"),
    };
  // A change that cannot be made is not offered; a read, or a call nobody covers and nobody
  // can be asked about, has nothing to decide.
  if (input.cannotApply || (!asks && !hasEffect)) return { kind: "run", why: "not_needed" };
  // An allow rule answers for the person (a "reject always" of theirs came first, above).
  if (rule?.decision === "allow")
    return { kind: "run", why: "rule", rule: rule.name, reason: allowedByRule(rule) };
  if (!canAsk) return { kind: "run", why: "not_needed" };
  // An ask rule asks every time: an earlier "always" does not answer for it, nor does a
  // command's being known-safe.
  if (asks) return { kind: "ask", rule: asks.name };
  if (remembered === "allow") return { kind: "run", why: "remembered" };
  if (input.knownSafe) return { kind: "run", why: "known_safe" };
  return { kind: "ask" };
}
