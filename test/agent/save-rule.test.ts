/**
 * Saving an approval rule in the home's config.toml (docs/safety.md "Rules"): the existing text
 * kept byte for byte, the values quoted by the TOML library, the result checked before it
 * replaces the file, and every case that cannot be appended safely refused with the file as it was.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkRules } from "../../src/agent/approval-rules.js";
import { saveApprovalRule } from "../../src/agent/save-rule.js";
import { loadConfig } from "../../src/config/load.js";

let home: string;
let file: string;
beforeEach(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-save-rule-")));
  file = path.join(home, "config.toml");
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

/** The rules the home's configuration now has, as the commands check them. */
function loadedRules() {
  const loaded = loadConfig(home, {});
  if (!loaded.ok) throw new Error(loaded.error.message);
  const checked = checkRules(loaded.value.config.tools.rules);
  expect(checked.problems).toEqual([]);
  return checked.rules.map((r) => ({
    tool: r.tool,
    match: r.match,
    decision: r.decision,
    project: r.project,
  }));
}

describe("saving a rule", () => {
  it("creates config.toml (mode 0600) when the home has no configuration", () => {
    const saved = saveApprovalRule(home, {
      tool: "bash",
      match: "npm test",
      decision: "allow",
      project: "/srv/app",
    });
    expect(saved).toEqual({ ok: true, value: { file, name: "tools.rules[0]", written: true } });
    expect(fs.readFileSync(file, "utf8")).toBe(
      '[[tools.rules]]\ntool = "bash"\nmatch = "npm test"\ndecision = "allow"\nproject = "/srv/app"\n',
    );
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadedRules()).toEqual([
      { tool: "bash", match: "npm test", decision: "allow", project: "/srv/app" },
    ]);
  });

  it("keeps the existing text byte for byte (comments, layout, no final newline) and its mode", () => {
    const before =
      '# my settings\r\n[backend]\nmodel = \'qwen\'   # trailing comment\n\n[tools]\npolicy = "guarded"\n\n[[tools.rules]]\ntool = "bash"\nmatch = "git status"\ndecision = "allow"\n# no newline at the end';
    fs.writeFileSync(file, before, { mode: 0o640 });
    fs.chmodSync(file, 0o640);
    const saved = saveApprovalRule(home, { tool: "file_write", match: "./notes.txt", decision: "deny" });
    expect(saved.ok && saved.value.name).toBe("tools.rules[1]");
    const after = fs.readFileSync(file, "utf8");
    expect(after.startsWith(before)).toBe(true);
    expect(after.slice(before.length)).toBe(
      '\n\n[[tools.rules]]\ntool = "file_write"\nmatch = "notes.txt"\ndecision = "deny"\n',
    );
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    expect(loadedRules()).toEqual([
      { tool: "bash", match: "git status", decision: "allow", project: undefined },
      { tool: "file_write", match: "notes.txt", decision: "deny", project: undefined },
    ]);
  });

  it("quotes any value the TOML way: quotes, backslashes, newlines and other scripts come back unchanged", () => {
    const match = "echo \"a\\b\" 'c'\n# not a comment = 1\n[[tools.rules]]";
    const project = '/home/me/src/ünï "cødé"';
    const saved = saveApprovalRule(home, { tool: "bash", match, decision: "ask", project });
    expect(saved.ok).toBe(true);
    expect(loadedRules()).toEqual([{ tool: "bash", match, decision: "ask", project }]);
  });

  it("writes through a symlinked config.toml to its target, and the link stays a link", () => {
    const real = path.join(home, "dotfiles.toml");
    fs.writeFileSync(real, "[agent]\nmax_turns = 9\n", { mode: 0o600 });
    fs.symlinkSync(real, file);
    expect(saveApprovalRule(home, { tool: "bash", match: "make test", decision: "allow" }).ok).toBe(true);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, "utf8")).toContain('match = "make test"');
  });

  it("the same rule twice is written once", () => {
    const rule = { tool: "bash", match: "npm test", decision: "allow" } as const;
    expect(saveApprovalRule(home, rule).ok).toBe(true);
    const text = fs.readFileSync(file, "utf8");
    expect(saveApprovalRule(home, { ...rule, match: "npm  test" })).toEqual({
      ok: true,
      value: { file, name: "tools.rules[0]", written: false },
    });
    expect(fs.readFileSync(file, "utf8")).toBe(text);
  });
});

describe("what it refuses, leaving the file as it was", () => {
  const refused = (rule: Parameters<typeof saveApprovalRule>[1], says: string) => {
    const before = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
    const saved = saveApprovalRule(home, rule);
    expect(saved.ok).toBe(false);
    if (!saved.ok) expect(saved.error).toContain(says);
    expect(fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined).toBe(before);
  };

  it("a rule that does not check", () => {
    refused(
      { tool: "bsh", match: "npm test", decision: "allow", project: "relative/dir" },
      'cannot save the rule: 2 problems in tools.rules:\n  the rule.tool: "bsh" is not a tool',
    );
    refused({ tool: "bash", match: "npm test --watch", decision: "allow" }, 'write "npm test"');
  });

  it("tools.rules written as an inline list", () => {
    fs.writeFileSync(file, "[tools]\nrules = []\n");
    refused({ tool: "bash", match: "npm test", decision: "allow" }, "add the rule there by hand");
  });

  it("a configuration that does not load as it is", () => {
    fs.writeFileSync(file, '[agent]\nmax_turns = "many"\n');
    refused({ tool: "bash", match: "npm test", decision: "allow" }, "fix it first: ");
    fs.writeFileSync(file, "[agent\n");
    refused({ tool: "bash", match: "npm test", decision: "allow" }, "malformed TOML");
  });

  it("a home configured by config.json: the answer says what to add, and no config.toml appears", () => {
    const json = path.join(home, "config.json");
    fs.writeFileSync(json, '{"agent": {"max_turns": 5}}\n');
    refused(
      { tool: "bash", match: "npm test", decision: "allow" },
      `the configuration is ${json}, which Scoot does not rewrite; add {"tool":"bash","match":"npm test","decision":"allow"}`,
    );
    expect(fs.existsSync(file)).toBe(false);
  });
});
