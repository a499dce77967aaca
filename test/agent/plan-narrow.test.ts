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
    ["npm test", true],
    ["  npm test  ", true],
    ["npm test -- --watch", true],
    ["npm  test", true],
    ["npm testx", false],
    ["npm test;x", false],
    ["npm test; rm -rf x", false],
    ["npm test && rm -rf x", false],
    ["npm test | sh", false],
    ["npm test $(rm -rf x)", false],
    ["npm test `x`", false],
    ["npm test > ../x", false],
    ["npm", false],
    ["npm run test", false],
    ["X=1 npm test", false],
    ["/usr/bin/npm test", false],
    ["git commit -m x", true],
    ["git commit -m x --amend", true],
    ["git commit", false],
    // A named command that is not plain matches only exactly.
    ["make 'all'", true],
    ["make 'all' install", false],
    ["make all", false],
  ])("%j → allowed %s", (command, allowed) => {
    const v = judge(bash(command));
    expect(v.allow, JSON.stringify(v)).toBe(allowed);
    if (!v.allow) expect(v.reason).toMatch(/not in the approved plan|policy/);
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
