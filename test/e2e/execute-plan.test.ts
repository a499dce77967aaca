/**
 * `scoot --execute-plan FILE -e goal` through the CLI's routing against the scripted model server
 * (docs/safety.md "Plans as contracts"): the gate narrowed to an approved plan. A write to a
 * file the plan names runs; a write to another file, or a command it does not name, is denied
 * as "not in the approved plan", recorded as a policy_deny and told to the model in its next
 * request; the plan's SHA-256 is audited at the start; `--plan-sha256` refuses an edited plan;
 * bad plan files exit 2 naming the file, the step and the field; a job's `plan_file` narrows and is
 * pinned by its `plan_sha256`: a plan changed since — even by the job's own firing — never runs.
 * Most cases run in this process (`runInProcess`); the first case of each table, and the
 * daemon's firings, run the built CLI.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planSha256 } from "../../src/tools/plan-shape.js";
import { auditEvents } from "../helpers/audit-file.js";
import { needsBuiltCli, runCli, runInProcess } from "../helpers/cli.js";
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

/** `binary`: the built CLI in a process of its own, else the same command in this process. */
function run(args: string[], binary = false) {
  return (binary ? runCli : runInProcess)(args, {
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
    const r = await run(
      ["-e", "write notes", "--execute-plan", "plan.json", "--policy", "unrestricted"],
      true,
    );
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
    async (name, denied, what) => {
      writePlan(PLAN);
      scene.model.push(denied, step("final", "could not"));
      const r = await run(
        ["--execute-plan", "plan.json", "--policy", "unrestricted", "-e", "go"],
        name === "a write to another file",
      );
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

  it("a named command runs", async () => {
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
    const r = await run(["--execute-plan", name, "-e", "go"], name === "missing.json");
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

describe("a named command is not a prefix", () => {
  const CLEAN_PLAN = {
    steps: [
      {
        title: "remove the old build output",
        files: ["build/old.txt"],
        commands: ["rm -f build/old.txt", "git diff *"],
      },
    ],
  };

  /** A small git project: the plan's file, files it does not name, and a change for git diff. */
  function gitProject(): void {
    fs.mkdirSync(path.join(scene.project, "build"));
    fs.mkdirSync(path.join(scene.project, "src"));
    fs.writeFileSync(path.join(scene.project, "build", "old.txt"), "old\n");
    fs.writeFileSync(path.join(scene.project, "src", "main.ts"), "export const x = 1;\n");
    fs.writeFileSync(path.join(scene.project, "README.md"), "# readme\n");
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], {
        cwd: scene.project,
        stdio: "ignore",
      });
    git("init", "-q", ".");
    git("add", "-A");
    git("commit", "-qm", "init");
    fs.writeFileSync(path.join(scene.project, "README.md"), "# readme, edited\n");
  }

  /** Every file outside .git with its content. */
  function snapshot(dir = scene.project, out = new Map<string, string>()): Map<string, string> {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, e.name);
      const rel = path.relative(scene.project, abs);
      if (rel === ".git") continue;
      if (e.isDirectory()) snapshot(abs, out);
      else out.set(rel, fs.readFileSync(abs, "utf8"));
    }
    return out;
  }

  it.each([
    ["guarded", "rm -f build/old.txt -r src"],
    ["unrestricted", "rm -f build/old.txt -r src"],
    ["guarded", "git diff --output=README.md"],
    ["unrestricted", "git diff --output=README.md"],
    ["guarded", "git diff --ext-diff"],
    ["unrestricted", "rm -f build/old.txt README.md"],
  ])("%s: %j is denied, the command the plan names runs, nothing else changes", async (mode, stretch) => {
    gitProject();
    writePlan(CLEAN_PLAN);
    const before = snapshot();
    const check = await run([
      "policy",
      "check",
      "bash",
      stretch,
      "--execute-plan",
      "plan.json",
      "--mode",
      mode,
    ]);
    expect(check.code, check.stdout + check.stderr).toBe(1);
    expect(check.stdout).toContain("decision=deny");
    const named = await run([
      "policy",
      "check",
      "bash",
      "rm -f build/old.txt",
      "--execute-plan",
      "plan.json",
      "--mode",
      mode,
    ]);
    expect(named.stdout).toContain("decision=allow");

    scene.model.push(
      step("bash", stretch),
      step("bash", "rm -f build/old.txt"),
      step("bash", "git diff --stat"),
      step("final", "done"),
    );
    const first = mode === "guarded" && stretch === "rm -f build/old.txt -r src";
    const r = await run(
      [
        "--execute-plan",
        "plan.json",
        "--policy",
        mode,
        "--approval",
        "never",
        "-e",
        "remove the old build output",
      ],
      first,
    );
    expect(r.code, r.stderr).toBe(0);
    const denials = kinds("policy_deny");
    expect(denials).toHaveLength(1);
    expect(denials[0]).toContain(`not in the approved plan: running ${JSON.stringify(stretch)}`);
    // The run's reason is the one policy check printed.
    const reason = check.stdout.split("\n").find((l) => l.startsWith("reason="));
    expect(reason).toBeDefined();
    expect(denials[0]).toContain(reason!.slice("reason=".length));
    // The model is told what the plan names and how a plan allows more.
    const next = JSON.stringify(scene.model.completions()[1]!.body);
    expect(next).toContain("rm -f build/old.txt");
    expect(next).toContain("ends a harmless prefix with");
    // The named command ran: its file is gone, and only it.
    const after = snapshot();
    const expected = new Map(before);
    expected.delete(path.join("build", "old.txt"));
    expect(after).toEqual(expected);
    // And a longer form of a prefix the plan marks runs.
    const ran = auditEvents(scene.home, { missingOk: true }).filter((e) => e.kind === "tool_call");
    expect(ran.map((e) => e.msg).join("\n")).toContain("git diff --stat");
  });

  it("a plan file with a ` *` after a command that could not be a harmless prefix exits 2", async () => {
    writePlan({ steps: [{ title: "a" }, { title: "clean", commands: ["npm test *", "rm -f *"] }] });
    const r = await run(["--execute-plan", "plan.json", "-e", "go"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('plan file plan.json: step 2.commands[1] "rm -f *" ends with " *"');
    expect(r.stderr).toContain("rm's extra words are files, code or hosts");
    expect(scene.model.completions()).toHaveLength(0);
    const check = await run(["policy", "check", "bash", "ls", "--execute-plan", "plan.json"]);
    expect(check.code).toBe(2);
  });
});

describe("a job's plan_file", () => {
  function jobConfig(extra: string[], schedule: string[] = []): void {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      [
        "[edge]",
        'max_job_policy = "unrestricted"',
        "[schedule]",
        "enabled = true",
        ...schedule,
        "[[schedule.jobs]]",
        'id = "writer"',
        'goal = "write the notes"',
        'mode = "unrestricted"',
        ...extra,
        "",
      ].join("\n"),
    );
  }
  const scheduleRun = (ticks: number) =>
    runCli(["schedule", "run", "--ticks", String(ticks)], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
    });
  const tick = () => scheduleRun(1);
  const lastStatus = () =>
    JSON.parse(fs.readFileSync(path.join(scene.home, "state", "schedule.json"), "utf8")).jobs.writer
      .last_status;

  it("narrows the job's runs to the plan", async () => {
    writePlan(PLAN);
    jobConfig(["every_sec = 3600", 'plan_file = "plan.json"', `plan_sha256 = "${planSha256(PLAN)}"`]);
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

  it("a plan_file without plan_sha256 is an invalid job, told where the hash comes from", async () => {
    writePlan(PLAN);
    jobConfig(["every_sec = 3600", 'plan_file = "plan.json"']);
    const r = await tick();
    expect(r.stderr).toContain(
      'schedule: job writer skipped: plan_file "plan.json" needs plan_sha256, the SHA-256 of the plan as it was approved',
    );
    expect(r.stderr).toContain('scoot --plan -e "goal" --json prints it as "plan_sha256"');
    expect(scene.model.completions()).toHaveLength(0);
  });

  it("a wrong plan_sha256 from the start: no firing runs; the message names job, file, both hashes and the fix", async () => {
    const wrong = "0".repeat(64);
    const actual = planSha256(PLAN);
    writePlan(PLAN);
    jobConfig(["every_sec = 3600", 'plan_file = "plan.json"', `plan_sha256 = "${wrong}"`]);
    const r = await tick();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `job writer: not run: plan file plan.json changed since it was approved: its plan has SHA-256 ${actual}, not the job's plan_sha256 ${wrong}; nothing ran. Review the plan: if you approve it as it is now, set plan_sha256 = "${actual}" in the job; if not, put the approved plan back`,
    );
    expect(scene.model.completions()).toHaveLength(0);
    expect(kinds("approval")).toEqual([
      `plan not run sha256=${actual} steps=2 file=plan.json job=writer: it is not the approved plan (plan_sha256 ${wrong})`,
    ]);
    expect(kinds("system_error")[0]).toContain("job writer run failed: plan file plan.json changed");
    expect(kinds("run")).toEqual([]);
    expect(lastStatus()).toBe("failed");
  });

  it("a firing that rewrites its own plan file cannot widen it: the next firing is refused", async () => {
    // The plan names its own file, so the first firing may write it: it adds a command.
    const own = { steps: [{ title: "update the plan", files: ["plan.json"] }] };
    const widened = { steps: [...own.steps, { title: "more", commands: ["touch widened.txt"] }] };
    writePlan(own);
    const approved = planSha256(own);
    // Two firings in one scheduler: every second, two polls a second apart.
    jobConfig(
      ["every_sec = 1", 'plan_file = "plan.json"', `plan_sha256 = "${approved}"`],
      ["poll_ms = 1000"],
    );
    scene.model.push(
      step("file_write", { path: "plan.json", content: JSON.stringify(widened) }),
      step("final", "the plan now lets me do more"),
      step("bash", "touch widened.txt"),
      step("final", "widened"),
    );
    const r = await scheduleRun(2);
    expect(r.code, r.stderr).toBe(0);
    // The first firing ran and rewrote the file; the second read it, and nothing of it ran.
    expect(JSON.parse(fs.readFileSync(path.join(scene.project, "plan.json"), "utf8"))).toEqual(widened);
    expect(scene.model.completions()).toHaveLength(2);
    expect(exists("widened.txt")).toBe(false);
    expect(r.stderr.match(/job writer fired/g)).toHaveLength(2);
    expect(r.stderr).toContain(
      `job writer: not run: plan file plan.json changed since it was approved: its plan has SHA-256 ${planSha256(widened)}, not the job's plan_sha256 ${approved}`,
    );
    expect(kinds("approval")).toEqual([
      `plan approved sha256=${approved} steps=1 file=plan.json binding=strict`,
      `plan not run sha256=${planSha256(widened)} steps=2 file=plan.json job=writer: it is not the approved plan (plan_sha256 ${approved})`,
    ]);
    expect(kinds("run")).toHaveLength(1);
    expect(lastStatus()).toBe("failed");
  });
});
