/**
 * A plan's commands as the plan is read (docs/safety.md "Plans as contracts"): a final ` *` marks
 * a prefix, and a prefix that could not be harmless is refused with the plan, naming the step
 * and the command — by the one check a plan file, a job's plan and a planning run's plan get.
 */
import { describe, expect, it } from "vitest";
import { checkPlanDocument } from "../../src/agent/plan-file.js";
import { parsePlan } from "../../src/tools/plan.js";
import { matchPlanCommand, parsePlanCommand } from "../../src/tools/plan-command.js";

const planWith = (commands: string[]) => ({ steps: [{ title: "first" }, { title: "second", commands }] });

describe("a ` *` prefix is refused when the plan is read", () => {
  it.each([
    // programs whose extra words are files, code or hosts
    ["rm -f *", "rm's extra words are files, code or hosts"],
    ["rm -f build/old.txt *", "rm's extra words are files, code or hosts"],
    ["/bin/RM -f *", "rm's extra words are files, code or hosts"],
    ["sed -i s/TODO/DONE/ *", "sed's extra words"],
    ["curl https://named.example *", "curl's extra words"],
    ["wget https://named.example *", "wget's extra words"],
    ["cp a.txt *", "cp's extra words"],
    ["mv a.txt *", "mv's extra words"],
    ["tee out.txt *", "tee's extra words"],
    ["sh -c *", "sh's extra words"],
    ["bash scripts/x.sh *", "bash's extra words"],
    ["python -m pytest *", "python's extra words"],
    ["node scripts/build.js *", "node's extra words"],
    ["find . *", "find's extra words"],
    ["xargs -n1 *", "xargs's extra words"],
    ["env FOO=1 *", "env's extra words"],
    ["sudo make *", "sudo's extra words"],
    // a program alone, or followed by an option: the extra words choose the subcommand
    ["git *", "a program alone"],
    ["npm *", "a program alone"],
    ["git --no-pager *", "the word after git is an option"],
    ["git -C ../x *", "the word after git is an option"],
    // a runner without what it runs
    ["npm run *", '"npm run" runs whatever the next word names'],
    ["npm exec -- *", '"npm exec" runs whatever the next word names'],
    ["pnpm dlx *", '"pnpm dlx" runs whatever'],
    ["uv run --with x *", '"uv run" runs whatever'],
    // not plain
    ["make 'all' *", "is not a plain command"],
    ["npm test && rm -rf x *", "is not a plain command"],
    ["npm test * *", "is not a plain command"],
    ["*", 'is only " *"'],
    ["  *  ", 'is only " *"'],
  ])("%j", (command, why) => {
    const r = checkPlanDocument(planWith(["npm test", command]));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain(`step 2.commands[1] "${command}"`);
    expect(r.error).toContain(why);
    // The planning run's plan step is refused by the same check, naming the same place.
    const step = parsePlan(JSON.stringify(planWith(["npm test", command])));
    expect(step.ok).toBe(false);
    if (!step.ok) expect(step.error).toContain(`step 2.commands[1]`);
  });

  it.each([
    "npm test *",
    "npm run build *",
    "npm run test:unit *",
    "git diff *",
    "git branch *",
    "go test ./... *",
    "cargo test *",
    "pytest tests *",
    "./scripts/check.sh all *",
    // Not a prefix: exact commands, also ones a prefix could not be.
    "rm -f build/old.txt",
    "ls *.ts",
    "ls ./*",
    "curl https://named.example",
    "make 'all'",
  ])("%j is a command a plan may name", (command) => {
    expect(checkPlanDocument(planWith([command])).ok).toBe(true);
  });
});

describe("matchPlanCommand", () => {
  const named = (text: string) => {
    const p = parsePlanCommand(text);
    if (!p.ok) throw new Error(p.error);
    return p.value;
  };
  it.each<[string, string, boolean]>([
    ["npm test", "npm test", true],
    ["npm test", "npm   test", true],
    ["npm test", "npm\ttest", true],
    ["npm test", "npm test -- --watch", false],
    ["npm test *", "npm test", true],
    ["npm test *", "npm test -- --watch=false", true],
    ["npm test *", "npm\ttest  --  --watch=false", true],
    ["npm test *", "npm test -- -u", false],
    ["npm test *", "npm testx", false],
    ["npm test *", "NPM test", false],
    ["npm test *", "npm test; rm -rf x", false],
    ["npm test *", "npm test -- $(rm -rf x)", false],
    ["npm test *", 'npm test -- "--watch"', false],
    ["make 'all'", "make 'all'", true],
    ["make 'all'", "make  'all'", false],
  ])("%j covers %j: %s", (plan, command, want) => {
    expect(matchPlanCommand(named(plan), command).match).toBe(want);
  });

  it("a prefix's refused word is reported", () => {
    expect(matchPlanCommand(named("git diff *"), "git diff --output=README.md")).toEqual({
      match: false,
      stretch: { word: "--output=README.md", does: "writes files", named: "git diff *" },
    });
  });
});
