import { describe, expect, it } from "vitest";
import { defaultConfig, type JobConfig, type PolicyMode } from "../../src/config/schema.js";
import { jobWarnings, validateJobs } from "../../src/schedule/jobs.js";

function configWith(jobs: JobConfig[], ceiling: PolicyMode = "readonly") {
  const c = defaultConfig();
  c.schedule.jobs = jobs;
  c.edge.max_job_policy = ceiling;
  return c;
}

describe("jobs: invalid tables are skipped with a reason naming the job", () => {
  it.each<[string, JobConfig, RegExp]>([
    ["missing id", { goal: "g", every_sec: 5 }, /id is missing/],
    ["bad id characters", { id: "a b", goal: "g", every_sec: 5 }, /id "a b" is invalid/],
    ["id too long", { id: "x".repeat(65), goal: "g", every_sec: 5 }, /is invalid: use 1-64/],
    ["id not a string", { id: 7, goal: "g", every_sec: 5 }, /id 7 is invalid/],
    ["missing goal", { id: "a", every_sec: 5 }, /goal must be a non-empty string/],
    ["blank goal", { id: "a", goal: "  ", every_sec: 5 }, /goal must be a non-empty string/],
    ["no trigger", { id: "a", goal: "g" }, /exactly one of every_sec, at_unix, cron \(none given\)/],
    ["two triggers", { id: "a", goal: "g", every_sec: 5, cron: "* * * * *" }, /got every_sec and cron/],
    [
      "every_sec zero",
      { id: "a", goal: "g", every_sec: 0 },
      /every_sec must be a whole number in 1\.\.316224000, got 0/,
    ],
    ["every_sec fraction", { id: "a", goal: "g", every_sec: 1.5 }, /every_sec must be a whole number/],
    [
      "every_sec string",
      { id: "a", goal: "g", every_sec: "5" },
      /every_sec must be a whole number in 1\.\.316224000, got "5"/,
    ],
    ["at_unix negative", { id: "a", goal: "g", at_unix: -1 }, /at_unix must be a whole number of seconds/],
    ["at_unix in ms", { id: "a", goal: "g", at_unix: 1_700_000_000_000 }, /looks like milliseconds/],
    ["cron 6 fields", { id: "a", goal: "g", cron: "0 0 0 * * *" }, /6 fields/],
    ["cron names", { id: "a", goal: "g", cron: "0 0 * * MON" }, /names are not supported/],
    ["cron never fires", { id: "a", goal: "g", cron: "0 0 31 2 *" }, /never matches a real date/],
    ["cron not a string", { id: "a", goal: "g", cron: 5 }, /cron must be a string/],
    [
      "plan_file without plan_sha256",
      { id: "a", goal: "g", every_sec: 5, plan_file: "plan.json" },
      /plan_file "plan\.json" needs plan_sha256, the SHA-256 of the plan as it was approved \(scoot --plan/,
    ],
    [
      "plan_sha256 not a hash",
      { id: "a", goal: "g", every_sec: 5, plan_file: "plan.json", plan_sha256: "ABC" },
      /plan_sha256 must be 64 lower-case hex digits, got "ABC"/,
    ],
    [
      "plan_sha256 alone",
      { id: "a", goal: "g", every_sec: 5, plan_sha256: "0".repeat(64) },
      /needs plan_file/,
    ],
    [
      "plan_file not a path",
      { id: "a", goal: "g", every_sec: 5, plan_file: 3 },
      /plan_file must be the path/,
    ],
  ])("%s", (_name, raw, reason) => {
    const set = validateJobs(configWith([raw, { id: "ok", goal: "g", every_sec: 60 }]));
    expect(set.jobs.map((j) => j.id)).toEqual(["ok"]);
    expect(set.invalid).toHaveLength(1);
    expect(set.invalid[0]!.reason).toMatch(reason);
    const label = typeof raw.id === "string" && /^[A-Za-z0-9._-]{1,64}$/.test(raw.id) ? raw.id : "jobs[0]";
    expect(jobWarnings(set)[0]).toBe(`schedule: job ${label} skipped: ${set.invalid[0]!.reason}`);
  });

  it("a duplicate id is refused; the first keeps running", () => {
    const set = validateJobs(
      configWith([
        { id: "a", goal: "first", every_sec: 5 },
        { id: "a", goal: "second", every_sec: 5 },
      ]),
    );
    expect(set.jobs.map((j) => j.goal)).toEqual(["first"]);
    expect(set.invalid[0]).toMatchObject({ label: "a", index: 1 });
    expect(set.invalid[0]!.reason).toMatch(/duplicate id \(jobs\[0\] already uses "a"\)/);
  });

  it("a valid job has the job-<id> session and its trigger", () => {
    const set = validateJobs(configWith([{ id: "nightly.report_1", goal: "g", cron: "0 3 * * *" }]));
    expect(set.invalid).toEqual([]);
    expect(set.jobs[0]).toMatchObject({
      id: "nightly.report_1",
      sessionId: "job-nightly.report_1",
      mode: "readonly",
    });
    expect(set.jobs[0]!.trigger.kind).toBe("cron");
  });

  it("an unknown key is a warning, not a reason to skip", () => {
    const set = validateJobs(configWith([{ id: "a", goal: "g", every_sec: 5, evry_sec: 10 }]));
    expect(set.jobs).toHaveLength(1);
    expect(jobWarnings(set)).toContain(
      'schedule: job a: unknown key "evry_sec" ignored (check the spelling)',
    );
  });
});

describe("jobs: the effective mode is the --unattended clamp of the job's mode", () => {
  it.each<[string, unknown, PolicyMode, PolicyMode, RegExp | undefined]>([
    ["default", undefined, "readonly", "readonly", undefined],
    ["readonly", "readonly", "unrestricted", "readonly", undefined],
    ["guarded runs as readonly", "guarded", "unrestricted", "readonly", /"guarded" runs as "readonly"/],
    ["guarded under a guarded ceiling", "guarded", "guarded", "readonly", /runs as "readonly"/],
    [
      "unrestricted under the default ceiling",
      "unrestricted",
      "readonly",
      "readonly",
      /lowered to "readonly" by edge.max_job_policy = "readonly"/,
    ],
    ["unrestricted under a guarded ceiling", "unrestricted", "guarded", "readonly", /lowered to "readonly"/],
    [
      "unrestricted under an unrestricted ceiling",
      "unrestricted",
      "unrestricted",
      "unrestricted",
      /runs UNRESTRICTED/,
    ],
    ["yolo is unrestricted", "yolo", "unrestricted", "unrestricted", /runs UNRESTRICTED/],
    [
      "an unknown mode becomes readonly (a typo never loosens)",
      "yolo!",
      "unrestricted",
      "readonly",
      /unknown mode "yolo!"; using "readonly"/,
    ],
  ])("%s", (_name, mode, ceiling, effective, warning) => {
    const raw: JobConfig = { id: "j", goal: "g", every_sec: 5, ...(mode === undefined ? {} : { mode }) };
    const set = validateJobs(configWith([raw], ceiling));
    expect(set.jobs[0]!.mode).toBe(effective);
    const warnings = jobWarnings(set);
    if (warning) expect(warnings.join("\n")).toMatch(warning);
    else expect(warnings).toEqual([]);
  });

  it("the unrestricted ceiling alone loosens nothing: a job without a mode stays readonly", () => {
    const set = validateJobs(configWith([{ id: "j", goal: "g", every_sec: 5 }], "unrestricted"));
    expect(set.jobs[0]!.mode).toBe("readonly");
  });
});
