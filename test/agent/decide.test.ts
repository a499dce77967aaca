/**
 * The one decision about a call (src/agent/decide.ts), on its own: every combination of the
 * gate's verdict × the covering rule × the remembered answer × whether the call has an effect ×
 * whether someone can be asked × whether the change can be made × whether it is a known-safe
 * command, checked against the rules of docs/safety.md "Approval", "Known-safe commands" and
 * "Rules", then a table of named cases with their exact values.
 */
import { describe, expect, it } from "vitest";
import type { ApprovalRule } from "../../src/agent/approval-rules.js";
import { type CallDecision, type DecideInput, decideCall, type Ruled } from "../../src/agent/decide.js";

const rule = (decision: ApprovalRule["decision"]): ApprovalRule => ({
  name: "tools.rules[3]",
  tool: "bash",
  match: "git clean",
  decision,
});
const KEY = "bash:git clean";

const verdicts: DecideInput["verdict"][] = [
  { allow: true },
  { allow: false, reason: "denied by policy (readonly)" },
];
const ruleds: (Ruled | undefined)[] = [
  undefined,
  { kind: "rule", rule: rule("allow") },
  { kind: "rule", rule: rule("ask") },
  { kind: "rule", rule: rule("deny") },
  { kind: "broken", text: "tools.rules[0].tool: ..." },
];
const remembereds: DecideInput["remembered"][] = [undefined, "allow", "refuse"];
const bools = [false, true];

function* every(): Generator<DecideInput> {
  for (const verdict of verdicts)
    for (const ruled of ruleds)
      for (const remembered of remembereds)
        for (const hasEffect of bools)
          for (const canAsk of bools)
            for (const cannotApply of bools)
              for (const knownSafe of bools)
                yield {
                  verdict,
                  ...(ruled ? { ruled } : {}),
                  ...(remembered ? { remembered } : {}),
                  hasEffect,
                  canAsk,
                  cannotApply,
                  knownSafe,
                };
}

const ruleOf = (i: DecideInput) => (i.ruled?.kind === "rule" ? i.ruled.rule.decision : i.ruled?.kind);

describe("decideCall over every combination (480)", () => {
  const all = [...every()].map((input) => ({ input, d: decideCall(input, KEY) }));

  it("covers 2 × 5 × 3 × 2 × 2 × 2 × 2 inputs", () => {
    expect(all).toHaveLength(480);
  });

  it("a gate's denial refuses, with the gate's reason, whatever else holds", () => {
    for (const { d } of all.filter((x) => !x.input.verdict.allow))
      expect(d).toEqual({ kind: "refuse", why: "denied", reason: "denied by policy (readonly)" });
  });

  it("rules that do not check refuse every call they could cover", () => {
    for (const { d } of all.filter((x) => x.input.verdict.allow && x.input.ruled?.kind === "broken"))
      expect(d).toMatchObject({ kind: "refuse", why: "broken_rules", rule: "tools.rules" });
  });

  it("a deny rule refuses whatever was remembered and whoever could answer", () => {
    for (const { d } of all.filter((x) => x.input.verdict.allow && ruleOf(x.input) === "deny"))
      expect(d).toEqual({
        kind: "refuse",
        why: "rule",
        rule: "tools.rules[3]",
        reason: 'denied by rule tools.rules[3] (deny bash "git clean")',
      });
  });

  it('a "reject always" refuses its key, with or without an effect, asked or not', () => {
    const rows = all.filter(
      (x) =>
        x.input.verdict.allow &&
        x.input.remembered === "refuse" &&
        ruleOf(x.input) !== "deny" &&
        ruleOf(x.input) !== "broken",
    );
    expect(rows.length).toBe(48);
    for (const { d } of rows)
      expect(d).toEqual({
        kind: "refuse",
        why: "remembered",
        reason: 'refused earlier ("reject always" for bash:git clean)',
      });
  });

  it("nobody is ever asked when nobody can answer", () => {
    for (const { input, d } of all) if (!input.canAsk) expect(d.kind).not.toBe("ask");
  });

  it('an ask rule asks every time someone can answer (an earlier "always" does not answer it)', () => {
    const rows = all.filter(
      (x) =>
        x.input.verdict.allow &&
        ruleOf(x.input) === "ask" &&
        x.input.remembered !== "refuse" &&
        x.input.canAsk &&
        !x.input.cannotApply,
    );
    expect(rows.length).toBe(8);
    for (const { d } of rows) expect(d).toEqual({ kind: "ask", rule: "tools.rules[3]" });
  });

  it("an ask rule nobody can answer refuses, saying why", () => {
    const rows = all.filter(
      (x) =>
        x.input.verdict.allow &&
        ruleOf(x.input) === "ask" &&
        x.input.remembered !== "refuse" &&
        !x.input.canAsk &&
        !x.input.cannotApply,
    );
    for (const { d } of rows)
      expect(d).toMatchObject({
        kind: "refuse",
        why: "rule",
        reason: expect.stringMatching(/nobody can answer in this run$/),
      });
  });

  it("a read nobody covers runs without asking", () => {
    for (const { d } of all.filter(
      (x) =>
        x.input.verdict.allow &&
        x.input.ruled === undefined &&
        !x.input.hasEffect &&
        x.input.remembered !== "refuse",
    ))
      expect(d).toEqual({ kind: "run", why: "not_needed" });
  });

  it("being known-safe turns only a question nobody else answered into a run: rules, refusals, the gate and who can be asked decide as before", () => {
    const byInput = (input: DecideInput) => decideCall(input, KEY);
    let turned = 0;
    for (const { input, d } of all.filter((x) => x.input.knownSafe)) {
      const asked = byInput({ ...input, knownSafe: false });
      if (asked.kind === "ask" && asked.rule === undefined) {
        expect(d).toEqual({ kind: "run", why: "known_safe" });
        turned++;
      } else expect(d).toEqual(asked);
    }
    expect(turned).toBe(1);
    for (const { input, d } of all)
      if (d.kind === "run" && d.why === "known_safe") {
        expect(input).toMatchObject({
          verdict: { allow: true },
          knownSafe: true,
          canAsk: true,
          hasEffect: true,
        });
        expect(input.ruled).toBeUndefined();
        expect(input.remembered).toBeUndefined();
      }
  });

  it("a run decision is never made for a call a rule denies or the gate refused", () => {
    for (const { input, d } of all)
      if (d.kind === "run") {
        expect(input.verdict.allow).toBe(true);
        expect(ruleOf(input)).not.toBe("deny");
        expect(ruleOf(input)).not.toBe("broken");
        expect(input.remembered).not.toBe("refuse");
      }
  });
});

describe("named cases", () => {
  const base: DecideInput = { verdict: { allow: true }, hasEffect: true, canAsk: true };
  const cases: [string, Partial<DecideInput>, CallDecision][] = [
    ["a command, someone to ask", {}, { kind: "ask" }],
    ["a command, nobody to ask (-e)", { canAsk: false }, { kind: "run", why: "not_needed" }],
    ['a command answered "always" before', { remembered: "allow" }, { kind: "run", why: "remembered" }],
    [
      "a command an allow rule covers",
      { ruled: { kind: "rule", rule: rule("allow") } },
      {
        kind: "run",
        why: "rule",
        rule: "tools.rules[3]",
        reason: 'allowed by rule tools.rules[3] (allow bash "git clean")',
      },
    ],
    [
      "an allow rule, nobody to ask",
      { ruled: { kind: "rule", rule: rule("allow") }, canAsk: false },
      {
        kind: "run",
        why: "rule",
        rule: "tools.rules[3]",
        reason: 'allowed by rule tools.rules[3] (allow bash "git clean")',
      },
    ],
    [
      'an allow rule against a "reject always"',
      { ruled: { kind: "rule", rule: rule("allow") }, remembered: "refuse" },
      { kind: "refuse", why: "remembered", reason: 'refused earlier ("reject always" for bash:git clean)' },
    ],
    [
      "a redirect hop an ask rule covers",
      { ruled: { kind: "rule", rule: rule("ask") }, canAsk: false, nobody: "a redirect is not asked about" },
      {
        kind: "refuse",
        why: "rule",
        rule: "tools.rules[3]",
        reason:
          'rule tools.rules[3] (ask bash "git clean") asks the user about this call, and a redirect is not asked about',
      },
    ],
    [
      'a redirect hop (a read) whose key was "reject always"',
      { hasEffect: false, canAsk: false, remembered: "refuse" },
      { kind: "refuse", why: "remembered", reason: 'refused earlier ("reject always" for bash:git clean)' },
    ],
    ["an edit that cannot apply", { cannotApply: true }, { kind: "run", why: "not_needed" }],
    ["a known-safe command, someone to ask", { knownSafe: true }, { kind: "run", why: "known_safe" }],
    [
      "a known-safe command, nobody to ask (-e)",
      { knownSafe: true, canAsk: false },
      { kind: "run", why: "not_needed" },
    ],
    [
      'a known-safe command answered "always" before',
      { knownSafe: true, remembered: "allow" },
      { kind: "run", why: "remembered" },
    ],
    [
      "a known-safe command an ask rule covers",
      { knownSafe: true, ruled: { kind: "rule", rule: rule("ask") } },
      { kind: "ask", rule: "tools.rules[3]" },
    ],
    [
      "a known-safe command a deny rule covers",
      { knownSafe: true, ruled: { kind: "rule", rule: rule("deny") } },
      {
        kind: "refuse",
        why: "rule",
        rule: "tools.rules[3]",
        reason: 'denied by rule tools.rules[3] (deny bash "git clean")',
      },
    ],
    [
      'a known-safe command refused with "reject always"',
      { knownSafe: true, remembered: "refuse" },
      { kind: "refuse", why: "remembered", reason: 'refused earlier ("reject always" for bash:git clean)' },
    ],
    [
      "a known-safe command the gate denied",
      { knownSafe: true, verdict: { allow: false, reason: "denied by policy (readonly)" } },
      { kind: "refuse", why: "denied", reason: "denied by policy (readonly)" },
    ],
  ];
  it.each(cases)("%s", (_name, over, want) => {
    expect(decideCall({ ...base, ...over }, KEY)).toEqual(want);
  });
});
