/**
 * Scopes that do not stretch (docs/safety.md "Approval scopes"): a command whose extra words hold
 * an option that writes, deletes or runs is out of its program-and-subcommand scope — its scope is
 * its own text — so neither an "always" nor an allow rule given to the harmless command reaches
 * it, for every program. Harmless options stay in the scope. Each row goes through the real
 * `prepareCall`, the session's memory of "always" answers and the rules' matching.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alwaysCovers, approvalMemory } from "../../src/agent/approval.js";
import { checkRules, decidingRule } from "../../src/agent/approval-rules.js";
import { commandScope } from "../../src/tools/command-scope.js";
import { TOOLS_BY_NAME } from "../../src/tools/registry.js";
import { readyCall } from "../helpers/calls.js";

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-command-scope-")));
afterAll(() => fs.rmSync(project, { recursive: true, force: true }));
const place = { root: project, realRoot: project };

/** [a command with an option that writes, deletes or runs, the scope of its harmless form]. */
const STRETCHED: [string, string][] = [
  // git: the stretches of the issue, and their spellings
  ["git diff --output=README.md", "git diff"],
  ["git diff --output README.md", "git diff"],
  ["git diff --OUTPUT=README.md", "git diff"],
  ["git diff HEAD -- --output=x", "git diff"],
  ["git diff --ext-diff", "git diff"],
  ["git diff --ext", "git diff"],
  ["git log --output=x", "git log"],
  ["git log -p --ext-diff", "git log"],
  ["git show --output=x", "git show"],
  ["git branch -D x", "git branch"],
  ["git branch -d x", "git branch"],
  ["git branch --delete x", "git branch"],
  ["git branch -M main", "git branch"],
  ["git branch -f main HEAD", "git branch"],
  ["git clean -fdx", "git clean"],
  ["git clean -X", "git clean"],
  ["git push --force", "git push"],
  ["git push -f origin main", "git push"],
  ["git push --delete origin x", "git push"],
  ["git push --force-with-lease", "git push"],
  ["git reset --hard", "git reset"],
  ["git checkout -f main", "git checkout"],
  ["git rebase --exec make main", "git rebase"],
  ["git rebase -x make main", "git rebase"],
  ["git fetch --upload-pack=./evil", "git fetch"],
  ["git stash --git-dir=../other/.git", "git stash"],
  // package managers and the test runners behind them: every word counts, after `--` too
  ["npm test -- -u", "npm test"],
  ["npm test -- --update", "npm test"],
  ["npm test -- --outputFile=r.json", "npm test"],
  ["npm test -- --config=evil.config.ts", "npm test"],
  ["npm test --script-shell=./evil", "npm test"],
  ["npm test --prefix ../other", "npm test"],
  ["npm run lint -- --fix", "npm run lint"],
  ["npm run build -- --outDir=x", "npm run build"],
  ["pnpm test --dir ../other", "pnpm test"],
  ["pnpm exec tsc --outDir x", "pnpm exec tsc"],
  ["yarn test --cwd ../other", "yarn test"],
  ["npx prettier --write .", "npx prettier"],
  ["npx eslint --fix", "npx eslint"],
  // builders, formatters, runners
  ["make test -f evil.mk", "make test"],
  ["make test -C ../other", "make test"],
  ["make test --eval=x", "make test"],
  ["cargo build --target-dir=../x", "cargo build"],
  ["cargo test --manifest-path=../other/Cargo.toml", "cargo test"],
  ["go test -exec ./evil", "go test"],
  ["go test -toolexec ./evil", "go test"],
  ["go build -o bin/x", "go build"],
  ["go test -coverprofile=c.out", "go test"],
  ["biome check --write", "biome check"],
  ["eslint src --fix", "eslint src"],
  ["prettier src --write", "prettier src"],
  ["pytest tests --basetemp=src", "pytest tests"],
  ["pytest tests -p evil", "pytest tests"],
  ["docker run -v /:/host img", "docker run"],
  ["docker run --privileged img", "docker run"],
  ["podman run --entrypoint=sh img", "podman run"],
  ["uv run pytest -x", "uv run pytest"],
  ["rg TODO --pre=./evil", "rg TODO"],
];

/** [a command with only harmless extra words, its scope]. */
const HARMLESS: [string, string][] = [
  ["git diff --stat", "git diff"],
  ["git diff --cached --name-only", "git diff"],
  ["git diff --no-ext-diff", "git diff"],
  ["git log --oneline", "git log"],
  ["git log --format=%h", "git log"],
  ["git log -n 5 --graph", "git log"],
  ["git show --stat", "git show"],
  ["git status --short", "git status"],
  ["git branch -a", "git branch"],
  ["git branch --list", "git branch"],
  ["npm test -- --watch=false", "npm test"],
  ["npm test -- --reporter=verbose -t name", "npm test"],
  ["npm run build -- --watch=false", "npm run build"],
  ["cargo build --release", "cargo build"],
  ["go test -run TestX -v", "go test"],
  ["pytest tests -k slow -q", "pytest tests"],
  ["uv run pytest -q", "uv run pytest"],
  ["pnpm exec tsc --noEmit", "pnpm exec tsc"],
];

const rules = (match: string) =>
  checkRules(
    [
      { tool: "bash", match, decision: "allow" },
      { tool: "bash", match, decision: "deny" },
    ],
    TOOLS_BY_NAME,
  ).rules;

describe("an option that writes, deletes or runs takes a command out of its scope", () => {
  it.each(STRETCHED)("%j is its own exact scope, not %j", (command, base) => {
    const call = readyCall("bash", command, { cwd: project });
    const exact = command.split(/ +/).join(" ");
    expect(commandScope(command)).toBe(exact);
    expect(call.scope).toBe(exact);
    expect(call.scope).not.toBe(base);
    expect(alwaysCovers(call)).toBe("only this exact command");
    // The harmless command is its base scope.
    expect(commandScope(base)).toBe(base);
    // An "always" remembered for the harmless command does not answer this one: its key is its own.
    const memory = approvalMemory({ allow: [`bash:${base}`] });
    expect(memory.answer(call.rememberKey)).toBeUndefined();
    // An allow rule on the harmless command does not cover it; a deny rule still reaches it.
    const [allow, deny] = rules(base);
    expect(decidingRule([allow!], call, place)).toBeUndefined();
    expect(decidingRule([deny!], call, place)?.decision).toBe("deny");
  });

  it.each(HARMLESS)("%j stays in %j", (command, base) => {
    const call = readyCall("bash", command, { cwd: project });
    expect(call.scope).toBe(base);
    expect(alwaysCovers(call)).toBe(`every "${base} …" command`);
    expect(approvalMemory({ allow: [`bash:${base}`] }).answer(call.rememberKey)).toBe("allow");
    const [allow] = rules(base);
    expect(decidingRule([allow!], call, place)?.decision).toBe("allow");
  });

  it("a rule may name the stretched command itself: it is that exact command", () => {
    const scope = TOOLS_BY_NAME.get("bash")!.approvalScope!;
    expect(scope.parseMatch("git diff --output=x")).toEqual({ ok: true, value: "git diff --output=x" });
    expect(scope.parseMatch("git  branch -D x")).toEqual({ ok: true, value: "git branch -D x" });
    expect(scope.meaning("git branch -D x")).toBe("only this exact command");
    expect(scope.meaning("git branch")).toBe('every "git branch …" command');
  });
});
