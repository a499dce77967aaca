/**
 * Plan mode through the real loop and the CLI's routing (docs/safety.md "Plan mode"): `-e --plan`
 * plans in readonly whatever the policy, prints the plan and executes nothing. Most runs are in
 * this process (`runInProcess`); the first case and the runs with their own setup use the built CLI.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planSha256 } from "../../src/tools/plan-shape.js";
import { auditEvents } from "../helpers/audit-file.js";
import { runCli, runInProcess } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step, stepText } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-home-", project: "demo" });

const PLAN = {
  steps: [
    { title: "Read the module", files: ["src/a.ts"] },
    { title: "Write the note", detail: "A short NOTES.md.", files: ["NOTES.md"], commands: ["npm test"] },
  ],
};

/** The model tries to act first (a write, then a command), then sends its plan. */
const script = (): ScriptItem[] => [
  step("file_write", { path: "NOTES.md", content: "written\n" }),
  step("bash", "touch made-by-bash"),
  step("plan", PLAN),
];

/** In this process (the routing main runs), or with `binary` the built CLI in a process of its own. */
async function scoot(args: string[], env: Record<string, string> = {}, binary = false) {
  scene.server = await startScriptedServer(script());
  return (binary ? runCli : runInProcess)(args, {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, ...env },
  });
}

function nothingWritten(): void {
  expect(fs.existsSync(path.join(scene.project, "NOTES.md"))).toBe(false);
  expect(fs.existsSync(path.join(scene.project, "made-by-bash"))).toBe(false);
}

describe("scoot -e --plan", () => {
  it.each([
    ["--plan before -e", ["--policy", "unrestricted", "--plan", "-e", "add notes"]],
    ["--plan after the goal", ["-e", "add notes", "--policy", "unrestricted", "--plan"]],
  ])(
    "plans in readonly even under --policy unrestricted (%s): prints the plan, exits 0",
    async (name, args) => {
      const r = await scoot(args, {}, name === "--plan before -e");
      expect(r.code, r.stderr).toBe(0);
      nothingWritten();
      expect(r.stdout).toBe(
        "1. Read the module\n   files: src/a.ts\n2. Write the note\n   A short NOTES.md.\n   files: NOTES.md\n   commands: npm test\n",
      );
      const requests = scene.server!.completions();
      expect(requests).toHaveLength(3);
      // The write and the command were denied by the readonly gate, and the model was told so.
      const second = JSON.stringify(requests[1]!.body);
      expect(second).toContain("denied by policy (readonly)");
      expect(JSON.stringify(requests[2]!.body)).toContain("denied by policy (readonly)");
      // The planning prompt is in the request; the gate said readonly.
      const system = JSON.stringify(requests[0]!.body);
      expect(system).toContain("## Planning");
      expect(system).toContain("Policy mode: readonly");
      const events = auditEvents(scene.home);
      expect(events.filter((e) => e.kind === "tool_call")).toEqual([]);
      expect(events.filter((e) => e.kind === "policy_deny")).toHaveLength(2);
      const plan = events.filter((e) => e.kind === "plan");
      expect(plan).toHaveLength(1);
      const sha = createHash("sha256").update(JSON.stringify(PLAN)).digest("hex");
      expect(plan[0]!.msg).toContain(`sha256=${sha}`);
    },
  );

  it("--json gives the plan object with status plan", async () => {
    const r = await scoot(["-e", "add notes", "--plan", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    nothingWritten();
    const out = JSON.parse(r.stdout);
    expect(out.status).toBe("plan");
    expect(out.stop).toBe("plan");
    expect(out.plan).toEqual(PLAN);
    // The hash a job's plan_sha256 and --plan-sha256 pin.
    expect(out.plan_sha256).toBe(planSha256(PLAN));
  });

  it('agent.default_mode = "plan" plans -e goals without the flag', async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), '[agent]\ndefault_mode = "plan"\n');
    const r = await scoot(["-e", "add notes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain("reserved");
    nothingWritten();
    expect(JSON.parse(r.stdout).plan).toEqual(PLAN);
  });

  it("a plan with a defect is corrected by naming it; nothing of it runs", async () => {
    scene.server = await startScriptedServer([
      step("plan", { steps: [{ title: "one" }, { title: "two" }, { detail: "no title" }] }),
      step("plan", PLAN),
    ]);
    const r = await runCli(["--plan", "-e", "add notes", "--json"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.stringify(scene.server.completions()[1]!.body)).toContain("plan: step 3.title is required");
  });

  it("a normal run is not offered the plan action", async () => {
    scene.server = await startScriptedServer([step("final", "done")]);
    const r = await runCli(["-e", "hello"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code, r.stderr).toBe(0);
    const system = JSON.stringify(scene.server.completions()[0]!.body);
    expect(system).not.toContain("## Planning");
    expect(system).not.toContain("- plan:");
  });
});

describe("from a plan to its run", () => {
  const env = () => ({ SCOOT_BACKEND_BASE_URL: scene.server!.url });
  const cli = (args: string[]) => runCli(args, { home: scene.home, cwd: scene.project, env: env() });
  const withProgress = (action: string, input: unknown, n: number, status: string): ScriptItem => ({
    reply: { ...JSON.parse(stepText(action, input)), plan_step: n, plan_status: status },
  });

  it("the --plan --json output, committed, runs with --execute-plan and the audited hash", async () => {
    scene.server = await startScriptedServer([step("plan", PLAN)]);
    const planned = await cli(["--plan", "-e", "add notes", "--json"]);
    expect(planned.code, planned.stderr).toBe(0);
    fs.writeFileSync(path.join(scene.project, "plan.json"), planned.stdout);
    // The hash the planning run audited is the one --plan-sha256 checks.
    const recorded = /sha256=([0-9a-f]{64})/.exec(
      auditEvents(scene.home).find((e) => e.kind === "plan")!.msg,
    )![1]!;
    expect(recorded).toBe(planSha256(PLAN));
    expect(JSON.parse(planned.stdout).plan_sha256).toBe(recorded);
    await scene.server.close();

    scene.server = await startScriptedServer([
      withProgress("file_write", { path: "NOTES.md", content: "notes\n" }, 2, "done"),
      withProgress("final", "written", 1, "skipped"),
    ]);
    const r = await cli([
      "--execute-plan",
      "plan.json",
      "--plan-sha256",
      recorded,
      "-e",
      "add notes",
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(scene.project, "NOTES.md"), "utf8")).toBe("notes\n");
    const events = auditEvents(scene.home);
    expect(events.filter((e) => e.kind === "approval").map((e) => e.msg)).toContain(
      `plan approved sha256=${recorded} steps=2 file=plan.json binding=strict`,
    );
    expect(events.filter((e) => e.kind === "plan").map((e) => e.msg)).toEqual(
      expect.arrayContaining(["step 2 done", "step 1 skipped"]),
    );
    // The request said how to report progress, and the step format allows it.
    const first = scene.server.completions()[0]!.body as { response_format?: unknown };
    expect(JSON.stringify(first)).toContain('\\"plan_step\\": N');
    expect(JSON.stringify(first.response_format)).toContain("plan_status");
  });

  it("a plan_step the plan does not have is a correction naming it", async () => {
    fs.writeFileSync(path.join(scene.project, "plan.json"), JSON.stringify({ plan: PLAN }));
    scene.server = await startScriptedServer([
      withProgress("final", "done", 5, "done"),
      withProgress("final", "done", 2, "done"),
    ]);
    const r = await cli(["--execute-plan", "plan.json", "-e", "add notes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.stringify(scene.server.completions()[1]!.body)).toContain(
      '\\"plan_step\\" is 5, but the plan has 2 steps',
    );
  });

  it("plan_step without plan_status is in_progress: the step runs and no correction is sent", async () => {
    fs.writeFileSync(path.join(scene.project, "plan.json"), JSON.stringify(PLAN));
    scene.server = await startScriptedServer([
      {
        reply: { ...JSON.parse(stepText("file_write", { path: "NOTES.md", content: "n\n" })), plan_step: 2 },
      },
      step("final", "written"),
    ]);
    const r = await cli(["--execute-plan", "plan.json", "--policy", "unrestricted", "-e", "add notes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(scene.project, "NOTES.md"), "utf8")).toBe("n\n");
    // Two requests: the step was taken at once, and what came back was its observation.
    const requests = scene.server.completions().map((c) => JSON.stringify(c.body));
    expect(requests).toHaveLength(2);
    expect(requests[1]).not.toContain("not a valid step");
    expect(requests[1]).toContain("Observation from file_write");
    expect(
      auditEvents(scene.home)
        .filter((e) => e.kind === "plan")
        .map((e) => e.msg),
    ).toContain("step 2 in_progress");
  });

  it.each([
    ["--execute-plan", "plan.json"],
    ["--output-schema", "schema.json"],
  ])("--plan with %s is a usage error: one of them would be ignored", async (flag, file) => {
    scene.server = await startScriptedServer([]);
    const r = await cli(["--plan", flag, file, "-e", "add notes"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--plan only plans (nothing runs); ${flag} is for a run that acts`);
    expect(scene.server.completions()).toHaveLength(0);
  });

  it('agent.default_mode = "plan" gives way to --execute-plan: the plan runs', async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), '[agent]\ndefault_mode = "plan"\n');
    fs.writeFileSync(path.join(scene.project, "plan.json"), JSON.stringify(PLAN));
    scene.server = await startScriptedServer([
      step("file_write", { path: "NOTES.md", content: "n\n" }),
      step("final", "ok"),
    ]);
    const r = await cli(["--execute-plan", "plan.json", "-e", "add notes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(scene.project, "NOTES.md"))).toBe(true);
  });
});
