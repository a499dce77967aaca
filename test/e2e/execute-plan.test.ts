/**
 * `scoot --execute-plan FILE -e goal` through the built CLI against the scripted model server
 * (docs/safety.md "Plans as contracts"): the gate narrowed to an approved plan. A write to a
 * file the plan names runs; a write to another file, or a command it does not name, is denied
 * as "not in the approved plan", recorded as a policy_deny and told to the model in its next
 * request; the plan's SHA-256 is audited at the start; `--plan-sha256` refuses an edited plan;
 * bad plan files exit 2 naming the file, the step and the field; a job's `plan_file` narrows.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planSha256 } from "../../src/tools/plan-shape.js";
import { auditEvents } from "../helpers/audit-file.js";
import { needsBuiltCli, runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

needsBuiltCli();
const scene = useScene({ home: "scoot-plan-home-", project: "scoot-plan-project-", model: true });

const PLAN = {
  steps: [
    { title: "write the notes", files: ["notes.txt"] },
    { title: "make the report", files: ["out/report.txt"], commands: ["touch report.txt"] },
  ],
};

function writePlan(doc: unknown, name = "plan.json"): string {
  const file = path.join(scene.project, name);
  fs.writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}

function run(args: string[]) {
  return runCli(args, {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
  });
}

const exists = (p: string) => fs.existsSync(path.join(scene.project, p));
const kinds = (kind: string) =>
  auditEvents(scene.home, { missingOk: true })
    .filter((e) => e.kind === kind)
    .map((e) => e.msg);

describe("--execute-plan", () => {
  it("a write to a file the plan names runs; the plan's SHA-256 is audited at the start", async () => {
    writePlan({ status: "plan", plan: PLAN, session_id: "x" });
    scene.model.push(step("file_write", { path: "notes.txt", content: "hi\n" }), step("final", "done"));
    // The flag after the goal: either order works.
    const r = await run(["-e", "write notes", "--execute-plan", "plan.json", "--policy", "unrestricted"]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(scene.project, "notes.txt"), "utf8")).toBe("hi\n");
    expect(kinds("approval")).toEqual([
      `plan approved sha256=${planSha256(PLAN)} steps=2 file=plan.json binding=strict`,
    ]);
    expect(kinds("policy_deny")).toEqual([]);
    // The model is given the plan with the goal.
    const first = JSON.stringify(scene.model.completions()[0]!.body);
    expect(first).toContain("approved plan");
    expect(first).toContain("write the notes");
  });

  it.each([
    ["a write to another file", step("file_write", { path: "other.txt", content: "x" }), "writing other.txt"],
    ["a command the plan does not name", step("bash", "touch stray.txt"), "touch stray.txt"],
    [
      "a named command with more after a separator",
      step("bash", "touch report.txt; touch stray.txt"),
      "running",
    ],
  ])(
    "%s is denied as not in the approved plan, audited, and the model is told",
    async (_name, denied, what) => {
      writePlan(PLAN);
      scene.model.push(denied, step("final", "could not"));
      const r = await run(["--execute-plan", "plan.json", "--policy", "unrestricted", "-e", "go"]);
      expect(r.code, r.stderr).toBe(0);
      expect(exists("other.txt")).toBe(false);
      expect(exists("stray.txt")).toBe(false);
      const denials = kinds("policy_deny");
      expect(denials).toHaveLength(1);
      expect(denials[0]).toContain("not in the approved plan");
      const next = JSON.stringify(scene.model.completions()[1]!.body);
      expect(next).toContain("not in the approved plan");
      expect(next).toContain(what);
    },
  );

  it("a named command and its longer plain forms run", async () => {
    writePlan(PLAN);
    scene.model.push(step("bash", "touch report.txt"), step("final", "done"));
    const r = await run(["--execute-plan", "plan.json", "--policy", "unrestricted", "-e", "go"]);
    expect(r.code, r.stderr).toBe(0);
    expect(exists("report.txt")).toBe(true);
    expect(kinds("policy_deny")).toEqual([]);
  });

  it("the normal gate still decides first: a named file the policy refuses stays refused", async () => {
    writePlan({ steps: [{ title: "t", files: ["notes.txt"] }] });
    scene.model.push(step("file_write", { path: "notes.txt", content: "hi\n" }), step("final", "no"));
    const r = await run(["--execute-plan", "plan.json", "--policy", "readonly", "-e", "go"]);
    expect(r.code, r.stderr).toBe(0);
    expect(exists("notes.txt")).toBe(false);
    expect(kinds("policy_deny")[0]).toContain("readonly");
  });

  it("--plan-sha256: a plan edited after approval is refused, naming both hashes", async () => {
    const approved = planSha256(PLAN);
    const edited = { steps: [...PLAN.steps, { title: "sneak", files: [".bashrc"] }] };
    writePlan(edited);
    const r = await run(["--execute-plan", "plan.json", "--plan-sha256", approved, "-e", "go"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("plan file plan.json");
    expect(r.stderr).toContain(approved);
    expect(r.stderr).toContain(planSha256(edited));
    expect(scene.model.completions()).toHaveLength(0);
  });

  it("--plan-sha256 with the recorded hash runs (pretty-printing does not change it)", async () => {
    writePlan(PLAN);
    scene.model.push(step("final", "done"));
    const r = await run(["--execute-plan", "plan.json", "--plan-sha256", planSha256(PLAN), "-e", "go"]);
    expect(r.code, r.stderr).toBe(0);
  });

  it.each([
    ["missing.json", undefined, "plan file missing.json: does not exist"],
    ["plan.json", "not json", "plan file plan.json: is not JSON"],
    ["plan.json", { steps: [] }, "steps is empty: a plan has at least one step"],
    ["plan.json", { steps: [{ detail: "no title" }] }, "step 1.title is required"],
    [
      "plan.json",
      { steps: [{ title: "a" }, { title: "b", files: ["src/*.ts"] }] },
      'step 2.files[0] "src/*.ts" is a pattern',
    ],
    [
      "plan.json",
      { steps: [{ title: "a", hosts: ["https://x.org/p"] }] },
      'step 1.hosts[0] "https://x.org/p" is not a host',
    ],
    ["plan.json", { steps: [{ title: "a", run: "x" }] }, 'step 1 has an unknown field "run"'],
    ["plan.json", { status: "final", plan: { steps: [] } }, 'status is "final"'],
    ["plan.json", { steps: Array.from({ length: 31 }, () => ({ title: "t" })) }, "31 steps; the limit is 30"],
  ])("a bad plan file (%s %j) exits 2 naming it", async (name, doc, message) => {
    if (doc !== undefined) {
      if (typeof doc === "string") fs.writeFileSync(path.join(scene.project, name), doc);
      else writePlan(doc, name);
    }
    const r = await run(["--execute-plan", name, "-e", "go"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(scene.model.completions()).toHaveLength(0);
  });

  it("without -e it is a usage error, never an unbound REPL", async () => {
    writePlan(PLAN);
    const r = await run(["--execute-plan", "plan.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--execute-plan runs one goal: scoot --execute-plan plan.json -e "goal"');
  });
});

describe("a job's plan_file", () => {
  function jobConfig(extra: string[]): void {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      [
        "[edge]",
        'max_job_policy = "unrestricted"',
        "[schedule]",
        "enabled = true",
        "[[schedule.jobs]]",
        'id = "writer"',
        'goal = "write the notes"',
        "every_sec = 3600",
        'mode = "unrestricted"',
        ...extra,
        "",
      ].join("\n"),
    );
  }
  const tick = () =>
    runCli(["schedule", "run", "--ticks", "1"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
    });

  it("narrows the job's runs to the plan", async () => {
    writePlan(PLAN);
    jobConfig(['plan_file = "plan.json"']);
    scene.model.push(
      step("file_write", { path: "notes.txt", content: "ok\n" }),
      step("file_write", { path: "other.txt", content: "no\n" }),
      step("final", "done"),
    );
    const r = await tick();
    expect(r.code, r.stderr).toBe(0);
    expect(exists("notes.txt")).toBe(true);
    expect(exists("other.txt")).toBe(false);
    expect(kinds("policy_deny")[0]).toContain("not in the approved plan: writing other.txt");
    expect(kinds("approval")[0]).toContain(`plan approved sha256=${planSha256(PLAN)}`);
  });

  it("a plan_sha256 the file no longer has: the job does not run", async () => {
    writePlan(PLAN);
    jobConfig(['plan_file = "plan.json"', `plan_sha256 = "${"0".repeat(64)}"`]);
    const r = await tick();
    expect(`${r.stdout}${r.stderr}`).toContain(`not the approved ${"0".repeat(64)}`);
    expect(scene.model.completions()).toHaveLength(0);
  });
});
