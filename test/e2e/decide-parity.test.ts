/**
 * One decision, seen the same everywhere (docs/safety.md "One call pipeline"): `scoot policy
 * check` prints the decision the run makes — a rule's refusal, a rule's allowance, "would ask",
 * a binding plan's narrowing — and the real run (built CLI, scripted server) makes the same
 * one, visible in `--trace` (the refusal and `refusals=N` on the closing line) and `--json`.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { needsBuiltCli, runCli, runInProcess } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

needsBuiltCli();
const scene = useScene({ home: "scoot-decide-home-", project: "scoot-decide-project-", model: true });

const RULES = [
  "[[tools.rules]]",
  'tool = "bash"',
  'match = "git clean"',
  'decision = "deny"',
  "",
  "[[tools.rules]]",
  'tool = "bash"',
  'match = "npm test"',
  'decision = "allow"',
  "",
  "[[tools.rules]]",
  'tool = "file_write"',
  'match = "notes.txt"',
  'decision = "ask"',
  "",
].join("\n");

/** `scoot policy check` in this process; the runs it is compared with are the built CLI's. */
const check = (...args: string[]) =>
  runInProcess(["policy", "check", ...args], { home: scene.home, cwd: scene.project, env: {} });

describe("scoot policy check decides as the run does", () => {
  it.each<[string, string[], number, string[]]>([
    [
      "a deny rule refuses",
      ["bash", "git clean -n"],
      1,
      [
        "decision=deny",
        'reason=denied by rule tools.rules[0] (deny bash "git clean")',
        "rule=tools.rules[0]",
      ],
    ],
    [
      "an allow rule answers for the person",
      ["bash", "npm test"],
      0,
      [
        "decision=allow",
        'approval=allowed by rule tools.rules[1] (allow bash "npm test")',
        "rule=tools.rules[1]",
      ],
    ],
    [
      "a command no rule covers would be asked about",
      ["bash", "touch notes.txt"],
      0,
      ["decision=allow", "approval=would ask"],
    ],
    [
      "a known-safe command runs unasked in guarded mode",
      ["bash", "ls -la"],
      0,
      ["mode=guarded", "decision=allow", "approval=not needed (known-safe command)"],
    ],
    [
      "a known-safe command's writing variant would be asked about",
      ["bash", "git diff --output=notes.txt"],
      0,
      ["decision=allow", "approval=would ask"],
    ],
    [
      "a known-safe command in unrestricted mode would be asked about",
      ["bash", "ls -la", "--mode", "unrestricted"],
      0,
      ["mode=unrestricted", "decision=allow", "approval=would ask"],
    ],
    [
      "an ask rule would ask",
      ["file_write", '{"path":"notes.txt","content":"x"}'],
      0,
      ["decision=allow", "approval=would ask (rule tools.rules[2])"],
    ],
    [
      "an ask rule refuses where nobody can answer",
      ["file_write", '{"path":"notes.txt","content":"x"}', "--unattended", "--mode", "unrestricted"],
      1,
      [
        "decision=deny",
        'reason=rule tools.rules[2] (ask file_write "notes.txt") asks the user about this call, and nobody can answer in an unattended run',
      ],
    ],
    ["a read needs nobody", ["file_read", '{"path":"a.txt"}'], 0, ["decision=allow", "approval=not needed"]],
  ])("%s", async (_name, args, code, lines) => {
    // Unattended runs may use unrestricted here, so the rule (not the mode) decides.
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      `${RULES}\n[edge]\nmax_job_policy = "unrestricted"\n`,
      {
        mode: 0o600,
      },
    );
    const r = await check(...args);
    expect(r.code, r.stderr).toBe(code);
    for (const line of lines) expect(r.stdout.split("\n")).toContain(line);
  });

  it("tools.approval_safe_commands = false (file or SCOOT_TOOLS_APPROVAL_SAFE_COMMANDS) asks for a known-safe command", async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), "[tools]\napproval_safe_commands = false\n", {
      mode: 0o600,
    });
    const off = await check("bash", "ls -la");
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout.split("\n")).toContain("approval=would ask");
    fs.writeFileSync(path.join(scene.home, "config.toml"), "", { mode: 0o600 });
    const env = await runCli(["policy", "check", "bash", "ls -la"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_TOOLS_APPROVAL_SAFE_COMMANDS: "false" },
    });
    expect(env.code, env.stderr).toBe(0);
    expect(env.stdout.split("\n")).toContain("approval=would ask");
  });

  it("--execute-plan FILE narrows to the plan, as the run bound to it does", async () => {
    const plan = { steps: [{ title: "notes", files: ["notes.txt"] }] };
    fs.writeFileSync(path.join(scene.project, "plan.json"), JSON.stringify({ status: "plan", plan }));
    const named = await check(
      "file_write",
      '{"path":"notes.txt","content":"x"}',
      "--execute-plan",
      "plan.json",
    );
    expect(named.code, named.stderr).toBe(0);
    const other = await check(
      "file_write",
      '{"path":"other.txt","content":"x"}',
      "--execute-plan",
      "plan.json",
    );
    expect(other.code).toBe(1);
    expect(other.stdout).toMatch(/decision=deny\nreason=.*not in the approved plan/);
    const bad = await check("file_read", '{"path":"a"}', "--execute-plan", "missing.json");
    expect(bad.code).toBe(2);
  });
});

describe("the run's refusal by a rule is seen", () => {
  it("in --trace (the refusal, and refusals=1 on the closing line) and in --json", async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), RULES, { mode: 0o600 });
    scene.model.push(step("bash", "git clean -n"), step("final", "done"));
    const r = await runCli(["-e", "clean", "--trace", "--json"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      '[trace] refused: bash: denied by rule tools.rules[0] (deny bash "git clean")',
    );
    expect(r.stderr).toMatch(/\[trace\] done: .* denials=0 refusals=1 /);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ tool_calls: 0, denials: 0, refusals: 1, status: "final" });
  });
});

describe("the audit records carry the call as fields", () => {
  it("tool_call, policy_deny, a rule's refusal and each observation: tool, outcome, rule, exit_code; verify passes", async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), RULES, { mode: 0o600 });
    scene.model.push(
      step("bash", "git clean -n"),
      step("bash", "exit 3"),
      step("file_write", { path: "../outside.txt", content: "x" }),
      step("final", "done"),
    );
    const r = await runCli(["-e", "three calls", "--policy", "guarded", "--approval", "never"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
    });
    expect(r.code, r.stderr).toBe(0);
    const calls = auditEvents(scene.home)
      .filter((e) => e.call !== undefined)
      .map((e) => [e.kind, e.call]);
    expect(calls).toEqual([
      ["approval", { tool: "bash", decision: "refuse", outcome: "refused", rule: "tools.rules[0]" }],
      ["observation", { tool: "bash", outcome: "refused", rule: "tools.rules[0]" }],
      ["tool_call", { tool: "bash" }],
      ["observation", { tool: "bash", outcome: "ran", exit_code: 3 }],
      ["policy_deny", { tool: "file_write", outcome: "denied" }],
      ["observation", { tool: "file_write", outcome: "denied" }],
    ]);
    const verify = await runCli(["audit", "verify"], { home: scene.home, cwd: scene.project, env: {} });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
