/**
 * `[[tools.rules]]` (docs/safety.md "Rules"): every problem of every rule reported with its
 * place, value and fix; which rule decides when several match; and the rules in the call
 * pipeline, after the gate and before the question — through the real loop, tools and gate.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ApprovalAnswer, Approver } from "../../src/agent/approval.js";
import {
  checkRules,
  decidingRule,
  ruleNotes,
  rulesProblemText,
  rulesSummary,
} from "../../src/agent/approval-rules.js";
import type { Ready } from "../../src/agent/call-record.js";
import type { PolicyMode } from "../../src/config/schema.js";
import { readyCall } from "../helpers/calls.js";
import { loopHarness } from "../helpers/loop.js";
import { type ScriptItem, step } from "../helpers/scripted-server.js";

let project: string;
beforeEach(() => {
  project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-rules-")));
});
afterEach(() => fs.rmSync(project, { recursive: true, force: true }));

describe("checking [[tools.rules]]", () => {
  it("a good rule is kept in its scope's own form", () => {
    const { rules, problems } = checkRules([
      { tool: "bash", match: "npm  test", decision: "allow" },
      { tool: "file_write", match: "./notes.txt", decision: "deny", project: "/srv/app/" },
      { tool: "http_request", match: "post HTTPS://API.example.com:443", decision: "ask" },
    ]);
    expect(problems).toEqual([]);
    expect(rules.map((r) => [r.name, r.tool, r.match, r.decision, r.project])).toEqual([
      ["tools.rules[0]", "bash", "npm test", "allow", undefined],
      ["tools.rules[1]", "file_write", "notes.txt", "deny", "/srv/app"],
      ["tools.rules[2]", "http_request", "POST https://api.example.com", "ask", undefined],
    ]);
  });

  it("every problem of every rule is reported, each naming the rule, the field, the value and the fix", () => {
    const { rules, problems } = checkRules([
      { tool: "bsh", match: "npm test", decision: "allow" },
      { tool: "bash", match: "", decision: "always" },
      { tool: "file_write", match: "notes.txt", decision: "allow", project: "myproject" },
      { tool: "file_read", match: "a.txt", decision: "deny", projet: "/x" },
      { match: 7 },
      "allow bash npm test",
      { tool: "bash", match: "npm test --watch", decision: "allow" },
    ]);
    expect(rules).toEqual([]);
    expect(problems).toEqual([
      'tools.rules[0].tool: "bsh" is not a tool; write one of bash, file_write, file_edit, http_request, mcp_call',
      'tools.rules[1].decision: "always" is not a decision; write decision = "allow", "ask" or "deny"',
      'tools.rules[1].match: empty; write the scope the rule covers, e.g. match = "npm test"',
      'tools.rules[2].project: "myproject" is not an absolute path; write the project root\'s absolute path (project = "/home/me/src/app"), or leave project out for every project',
      "tools.rules[3].projet: unknown field; a rule has tool, match, decision, project (check the spelling)",
      'tools.rules[3].tool: "file_read" asks nothing, so no rule applies to it; write one of bash, file_write, file_edit, http_request, mcp_call',
      'tools.rules[4].tool: missing; write tool = "<name>", one of bash, file_write, file_edit, http_request, mcp_call',
      'tools.rules[4].decision: missing; write decision = "allow", "ask" or "deny"',
      'tools.rules[4].match: expected a string, got an integer (7); write the scope the rule covers, e.g. match = "npm test"',
      'tools.rules[5]: expected a table {tool, match, decision}, got a string ("allow bash npm test")',
      'tools.rules[6].match: "npm test --watch" is not a scope: a plain command\'s scope is its program and first subcommand word; write "npm test" (it covers "npm test --watch" too)',
    ]);
    expect(rulesProblemText(problems).split("\n")[0]).toBe("11 problems in tools.rules:");
    expect(rulesProblemText(problems.slice(0, 1))).toBe(problems[0]);
  });
});

describe("which rule decides", () => {
  const npmTest = () => readyCall("bash", "npm test --watch");
  const rulesOf = (...raw: object[]) => {
    const checked = checkRules(raw);
    expect(checked.problems).toEqual([]);
    return checked.rules;
  };
  const here = () => ({ root: project, realRoot: project });

  it("the strictest matching rule: deny, then ask, then allow; the first written among equals", () => {
    const allow = { tool: "bash", match: "npm test", decision: "allow" };
    const ask = { tool: "bash", match: "npm test", decision: "ask" };
    const deny = { tool: "bash", match: "npm test", decision: "deny" };
    expect(decidingRule(rulesOf(allow, ask, deny), npmTest(), here())?.name).toBe("tools.rules[2]");
    expect(decidingRule(rulesOf(allow, ask), npmTest(), here())?.name).toBe("tools.rules[1]");
    expect(decidingRule(rulesOf(allow, allow), npmTest(), here())?.name).toBe("tools.rules[0]");
    expect(decidingRule(rulesOf({ ...allow, match: "npm publish" }), npmTest(), here())).toBeUndefined();
  });

  it("a rule kept to a project applies in that root only, by either spelling of it", () => {
    const link = `${project}-link`;
    fs.symlinkSync(project, link);
    try {
      const rules = rulesOf({ tool: "bash", match: "npm test", decision: "deny", project: link });
      expect(decidingRule(rules, npmTest(), here())?.name).toBe("tools.rules[0]");
      expect(decidingRule(rules, npmTest(), { root: os.tmpdir(), realRoot: os.tmpdir() })).toBeUndefined();
    } finally {
      fs.rmSync(link);
    }
  });

  it("deny and ask reach a command holding their words; allow needs the very scope", () => {
    const call = readyCall("bash", "git -C . clean -fdx && true");
    const deny = rulesOf({ tool: "bash", match: "git clean", decision: "deny" });
    const allow = rulesOf({ tool: "bash", match: "git clean", decision: "allow" });
    expect(decidingRule(deny, call, here())?.decision).toBe("deny");
    expect(decidingRule(allow, call, here())).toBeUndefined();
  });

  it("the summary lists the rules of this project, in the question's words", () => {
    const raw = [
      { tool: "bash", match: "npm test", decision: "allow" },
      { tool: "bash", match: "git clean", decision: "deny", project },
      { tool: "file_write", match: "notes.txt", decision: "ask", project: "/elsewhere" },
    ];
    expect(rulesSummary(raw, project)).toEqual([
      'tools.rules[0]  allow bash "npm test" (every "npm test …" command; every project)',
      'tools.rules[1]  deny bash "git clean" (every "git clean …" command; this project)',
    ]);
    expect(rulesSummary([{ tool: "bash", match: "npm test" }], project)).toEqual([
      'problem: tools.rules[0].decision: missing; write decision = "allow", "ask" or "deny"',
    ]);
    expect(ruleNotes(raw).get("tools.rules[2]")).toBe(
      "tools.rules[2]: ask — writes to notes.txt, in /elsewhere only",
    );
  });
});

/** An approver that answers from a list and keeps every question. */
function answering(...answers: ApprovalAnswer[]): Approver & { asked: Ready[] } {
  const asked: Ready[] = [];
  return {
    asked,
    async ask(request) {
      asked.push(request);
      const a = answers.shift();
      if (!a) throw new Error(`unexpected question: ${request.action} ${request.raw}`);
      return a;
    },
  };
}

function withRules(
  script: ScriptItem[],
  rules: object[],
  opts: { approver?: Approver; mode?: PolicyMode } = {},
) {
  const h = loopHarness([...script, step("final", "done")], {
    cwd: project,
    mode: opts.mode ?? "guarded",
    configure: (c) => {
      c.tools.rules = rules as Record<string, unknown>[];
      // The shell here is the plain one: a sandbox is not what these tests are about.
      c.tools.sandbox = "off";
    },
    ...(opts.approver ? { approver: opts.approver } : {}),
  });
  const approvals = () => h.audit.records.filter((r) => r.kind === "approval").map((r) => r.msg);
  const observation = (turn: number) => h.backend.calls[turn]!.messages.at(-1)!.content;
  return { h, approvals, observation };
}

/** A target server (counting what reaches it) and a server that redirects every request to it (307). */
async function redirecting() {
  let reached = 0;
  const target = http.createServer((req, res) => {
    req.resume();
    reached++;
    res.end("reached");
  });
  await new Promise<void>((r) => target.listen(0, "127.0.0.1", r));
  const targetPort = (target.address() as AddressInfo).port;
  const hops = http.createServer((req, res) => {
    req.resume();
    res.writeHead(307, { location: `http://127.0.0.1:${targetPort}/in` });
    res.end();
  });
  await new Promise<void>((r) => hops.listen(0, "127.0.0.1", r));
  const hopPort = (hops.address() as AddressInfo).port;
  return { target, hops, targetPort, hopPort, reached: () => reached };
}

describe("rules in the call pipeline", () => {
  it("deny: the call does not run, the model is told which rule, the audit says so", async () => {
    const approver = answering();
    const { h, approvals, observation } = withRules(
      [step("bash", "touch made.txt")],
      [{ tool: "bash", match: "touch made.txt", decision: "deny" }],
      { approver },
    );
    await h.run("make it");
    expect(fs.existsSync(path.join(project, "made.txt"))).toBe(false);
    expect(approver.asked).toEqual([]);
    expect(observation(1)).toContain('not run: denied by rule tools.rules[0] (deny bash "touch made.txt")');
    expect(approvals()).toEqual([
      'refused: denied by rule tools.rules[0] (deny bash "touch made.txt"): bash touch made.txt',
    ]);
    expect(
      h.events.some((e) => e.type === "refused" && e.call.approval?.reason?.includes("tools.rules[0]")),
    ).toBe(true);
  });

  it("allow: runs without a question, audited as allowed by the rule", async () => {
    const approver = answering();
    const { h, approvals } = withRules(
      [step("bash", "touch made.txt")],
      [{ tool: "bash", match: "touch made.txt", decision: "allow" }],
      { approver },
    );
    await h.run("make it");
    expect(fs.existsSync(path.join(project, "made.txt"))).toBe(true);
    expect(approver.asked).toEqual([]);
    expect(approvals()).toEqual([
      'allowed by rule tools.rules[0] (allow bash "touch made.txt"): bash touch made.txt',
    ]);
  });

  it("ask: asked every time, even after an 'always' for the same scope", async () => {
    const approver = answering({ kind: "always" }, { kind: "refuse", reason: "not twice" });
    const { h, approvals } = withRules(
      [
        step("file_write", { path: "a.txt", content: "1" }),
        step("file_write", { path: "./a.txt", content: "2" }),
      ],
      [{ tool: "file_write", match: "a.txt", decision: "ask" }],
      { approver },
    );
    await h.run("write twice");
    expect(approver.asked.map((a) => a.rememberKey)).toEqual(["file_write:a.txt", "file_write:a.txt"]);
    expect(fs.readFileSync(path.join(project, "a.txt"), "utf8")).toBe("1");
    expect(approvals()[0]).toBe('asked (rule tools.rules[0]): file_write {"path":"a.txt","content":"1"}');
  });

  it("ask with nobody to answer (approval never): the call is refused, saying a rule asks", async () => {
    const { h, observation } = withRules(
      [step("bash", "touch made.txt")],
      [{ tool: "bash", match: "touch", decision: "ask" }],
    );
    await h.run("make it");
    expect(fs.existsSync(path.join(project, "made.txt"))).toBe(false);
    expect(observation(1)).toContain(
      'rule tools.rules[0] (ask bash "touch") asks the user about this call, and nobody can answer in this run',
    );
  });

  it("ask reaches a read too: a GET nobody can be asked about is refused", async () => {
    const { h, observation } = withRules(
      [step("http_request", { method: "GET", url: "https://example.com/" })],
      [{ tool: "http_request", match: "GET https://example.com", decision: "ask" }],
    );
    await h.run("fetch");
    expect(observation(1)).toContain("asks the user about this call, and nobody can answer");
  });

  it("the gate decides first: an allow rule never lets through what the policy denies", async () => {
    const { h, approvals, observation } = withRules(
      [step("bash", "rm -rf /"), step("bash", "chmod -R 777 /")],
      [
        { tool: "bash", match: "rm -rf /", decision: "allow" },
        { tool: "bash", match: "chmod -R 777 /", decision: "allow" },
      ],
    );
    await h.run("try");
    expect(observation(1)).toContain("denied by policy (guarded)");
    expect(observation(2)).toContain("denied by policy (guarded)");
    expect(approvals()).toEqual([]);
    expect(h.audit.kinds().filter((k) => k === "policy_deny")).toHaveLength(2);
  });

  it("the gate decides first in readonly too: an allowed write is still denied", async () => {
    const { h, approvals, observation } = withRules(
      [step("file_write", { path: "a.txt", content: "x" })],
      [{ tool: "file_write", match: "a.txt", decision: "allow" }],
      { mode: "readonly" },
    );
    await h.run("try");
    expect(observation(1)).toContain("denied by policy (readonly)");
    expect(fs.existsSync(path.join(project, "a.txt"))).toBe(false);
    expect(approvals()).toEqual([]);
  });

  it("a person's 'reject always' outranks an allow rule for the rest of the session", async () => {
    const approver = answering({ kind: "refuse", always: true });
    const h = loopHarness(
      [step("bash", "touch a.txt"), step("final", "no"), step("bash", "touch a.txt"), step("final", "no")],
      {
        cwd: project,
        approver,
        configure: (c) => {
          c.tools.sandbox = "off";
        },
      },
    );
    await h.run("first");
    // The next goal of the same session runs under a rule that would allow it.
    h.deps.config = {
      ...h.deps.config,
      tools: { ...h.deps.config.tools, rules: [{ tool: "bash", match: "touch a.txt", decision: "allow" }] },
    };
    await h.run("second");
    expect(approver.asked).toHaveLength(1);
    expect(fs.existsSync(path.join(project, "a.txt"))).toBe(false);
    expect(h.backend.calls[3]!.messages.at(-1)!.content).toContain('"reject always" for bash:touch a.txt');
  });

  it("rules that do not check (an embedding program skipped the check) refuse every call they could cover", async () => {
    const { h, observation } = withRules(
      [step("bash", "touch made.txt"), step("file_read", { path: "." })],
      [{ tool: "bash", match: "touch made.txt", decision: "dney" }],
    );
    await h.run("make it");
    expect(fs.existsSync(path.join(project, "made.txt"))).toBe(false);
    expect(observation(1)).toContain("the approval rules in the user's configuration have problems");
    expect(observation(1)).toContain('tools.rules[0].decision: "dney" is not a decision');
  });

  it("a deny rule reaches into parallel: the child read is refused, its siblings run", async () => {
    fs.writeFileSync(path.join(project, "a.txt"), "alpha\n");
    const { h, observation } = withRules(
      [
        step("parallel", {
          calls: [
            { action: "file_read", input: '{"path":"a.txt"}' },
            { action: "http_request", input: '{"method":"GET","url":"https://example.com/x"}' },
          ],
        }),
      ],
      [{ tool: "http_request", match: "GET https://example.com", decision: "deny" }],
    );
    await h.run("read both");
    expect(observation(1)).toContain("alpha");
    expect(observation(1)).toContain(
      'not run: denied by rule tools.rules[0] (deny http_request "GET https://example.com")',
    );
  });

  it('a redirect is not a way around a "reject always": the hop is refused by the remembered answer', async () => {
    const { target, hops, targetPort, hopPort, reached } = await redirecting();
    try {
      // First the person refuses POSTs to the target for good; then allows one POST elsewhere,
      // which the server redirects to the target.
      const approver = answering({ kind: "refuse", reason: "not there", always: true }, { kind: "once" });
      const { h, observation, approvals } = withRules(
        [
          step("http_request", { method: "POST", url: `http://127.0.0.1:${targetPort}/`, body: "a" }),
          step("http_request", { method: "POST", url: `http://127.0.0.1:${hopPort}/`, body: "b" }),
        ],
        [],
        { approver, mode: "unrestricted" },
      );
      await h.run("post twice");
      expect(approver.asked).toHaveLength(2);
      expect(observation(2)).toContain(
        `refused earlier ("reject always" for http_request:POST http://127.0.0.1:${targetPort})`,
      );
      expect(observation(2)).not.toContain("reached");
      expect(reached()).toBe(0);
      expect(approvals().some((m) => m.startsWith('refused: refused earlier ("reject always"'))).toBe(true);
    } finally {
      target.close();
      hops.close();
    }
  });

  it("a redirect is not a way around a deny rule: the hop is refused by it", async () => {
    const { target, hops, targetPort, hopPort } = await redirecting();
    try {
      const { h, observation, approvals } = withRules(
        [step("http_request", { method: "POST", url: `http://127.0.0.1:${hopPort}/`, body: "data" })],
        [{ tool: "http_request", match: `POST http://127.0.0.1:${targetPort}`, decision: "deny" }],
        { mode: "unrestricted" },
      );
      await h.run("post");
      expect(observation(1)).toContain(
        `denied by rule tools.rules[0] (deny http_request "POST http://127.0.0.1:${targetPort}")`,
      );
      expect(observation(1)).not.toContain("reached");
      expect(approvals().some((m) => m.startsWith("refused: denied by rule tools.rules[0]"))).toBe(true);
    } finally {
      target.close();
      hops.close();
    }
  });
});
