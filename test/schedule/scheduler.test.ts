/** The scheduler's decisions under a fake clock, with a real state file and a real audit log. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig, type JobConfig } from "../../src/config/schema.js";
import { type Job, validateJobs } from "../../src/schedule/jobs.js";
import { createStopControl, runLoop } from "../../src/schedule/loop.js";
import {
  createScheduler,
  JOB_DEADLINE_CAP_MS,
  type JobOutcome,
  type JobRunner,
  jobDeadlineMs,
  type Scheduler,
} from "../../src/schedule/scheduler.js";
import { readAuditEvents } from "../../src/store/audit-readers.js";
import { createAuditLog } from "../../src/store/audit-writer.js";

let dir: string;
let stateFile: string;
let auditFile: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-sched-"));
  stateFile = path.join(dir, "schedule.json");
  auditFile = path.join(dir, "audit.jsonl");
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const T0 = Date.parse("2025-03-01T00:00:00.000Z");

function jobs(...raw: JobConfig[]): Job[] {
  const c = defaultConfig();
  c.schedule.jobs = raw;
  const set = validateJobs(c);
  expect(set.invalid).toEqual([]);
  return set.jobs;
}

interface Harness {
  scheduler: Scheduler;
  fired: string[];
  logs: string[];
  setNow(ms: number): void;
}

function harness(
  js: Job[],
  opts: { runJob?: JobRunner; deadlineMs?: number; graceMs?: number; start?: number } = {},
): Harness {
  let now = opts.start ?? T0;
  const fired: string[] = [];
  const logs: string[] = [];
  const runJob: JobRunner =
    opts.runJob ??
    (async (job) => {
      fired.push(job.id);
      return { status: "final", turns: 1 };
    });
  const scheduler = createScheduler({
    jobs: js,
    stateFile,
    audit: createAuditLog({
      file: auditFile,
      level: "info",
      toFile: true,
      maxRetained: 8,
      maxFileBytes: 1 << 24,
    }),
    runJob,
    deadlineMs: opts.deadlineMs ?? 60_000,
    graceMs: opts.graceMs,
    log: (l) => logs.push(l),
    now: () => now,
  });
  return { scheduler, fired, logs, setNow: (ms) => (now = ms) };
}

function savedState(): {
  jobs: Record<string, { last_fire?: number; since: number; last_status?: string; last_stop?: string }>;
} {
  return JSON.parse(fs.readFileSync(stateFile, "utf8"));
}

describe("every_sec", () => {
  it("fires at the first tick, then once per elapsed interval; missed intervals coalesce", async () => {
    const h = harness(jobs({ id: "e", goal: "g", every_sec: 1 }));
    const ticks = [0, 500, 999, 1000, 1200, 2500, 2999, 3000, 5100, 5200];
    const firedAt: number[] = [];
    for (const dt of ticks) {
      h.setNow(T0 + dt);
      const before = h.fired.length;
      await h.scheduler.tick();
      if (h.fired.length > before) firedAt.push(dt);
    }
    // 2500 fires on the grid slot 2000, so 3000 is due again; 5100 covers 4000 and 5000 once.
    expect(firedAt).toEqual([0, 1000, 2500, 3000, 5100]);
    expect(savedState().jobs.e!.last_fire).toBe(T0 + 5000);
  });

  it("keeps its cadence across a restart", async () => {
    const js = jobs({ id: "e", goal: "g", every_sec: 60 });
    const first = harness(js);
    await first.scheduler.tick();
    expect(first.fired).toEqual(["e"]);

    const second = harness(js, { start: T0 + 30_000 });
    await second.scheduler.tick();
    expect(second.fired).toEqual([]);
    second.setNow(T0 + 60_000);
    await second.scheduler.tick();
    expect(second.fired).toEqual(["e"]);
  });

  it("a clock that went back does not stall the job until the old time", async () => {
    const h = harness(jobs({ id: "e", goal: "g", every_sec: 10 }), { start: T0 + 3_600_000 });
    await h.scheduler.tick();
    h.setNow(T0); // an hour back
    await h.scheduler.tick();
    h.setNow(T0 + 10_000);
    await h.scheduler.tick();
    expect(h.fired).toEqual(["e", "e"]);
  });
});

describe("at_unix", () => {
  const past = Math.floor(T0 / 1000) - 3600;

  it("a time in the past that never fired fires once, and never again — also after a restart", async () => {
    const js = jobs({ id: "once", goal: "g", at_unix: past });
    const h = harness(js);
    await h.scheduler.tick();
    h.setNow(T0 + 10_000);
    await h.scheduler.tick();
    expect(h.fired).toEqual(["once"]);

    const restarted = harness(js, { start: T0 + 20_000 });
    await restarted.scheduler.tick();
    expect(restarted.fired).toEqual([]);
  });

  it("a future time waits for its moment", async () => {
    const h = harness(jobs({ id: "later", goal: "g", at_unix: Math.floor(T0 / 1000) + 5 }));
    await h.scheduler.tick();
    h.setNow(T0 + 4_999);
    await h.scheduler.tick();
    expect(h.fired).toEqual([]);
    h.setNow(T0 + 5_000);
    await h.scheduler.tick();
    expect(h.fired).toEqual(["later"]);
  });

  it("a changed at_unix is a new one-shot", async () => {
    await harness(jobs({ id: "once", goal: "g", at_unix: past })).scheduler.tick();
    const changed = harness(jobs({ id: "once", goal: "g", at_unix: past + 1 }));
    await changed.scheduler.tick();
    expect(changed.fired).toEqual(["once"]);
  });

  it("the firing is on disk before the run starts", async () => {
    let seenDuringRun: number | undefined;
    const h = harness(jobs({ id: "once", goal: "g", at_unix: past }), {
      runJob: async () => {
        seenDuringRun = savedState().jobs.once!.last_fire;
        return { status: "final" };
      },
    });
    await h.scheduler.tick();
    expect(seenDuringRun).toBe(T0);
  });
});

describe("cron", () => {
  it("fires after each matching minute, never for minutes before the job was first seen", async () => {
    const js = jobs({ id: "c", goal: "g", cron: "*/2 * * * *" });
    const h = harness(js, { start: T0 + 30_000 }); // 00:00:30: the 00:00 slot is already past
    const firedAt: string[] = [];
    for (const t of ["00:00:30", "00:01:59", "00:02:00", "00:02:30", "00:03:59", "00:04:01"]) {
      h.setNow(Date.parse(`2025-03-01T${t}.000Z`));
      const before = h.fired.length;
      await h.scheduler.tick();
      if (h.fired.length > before) firedAt.push(t);
    }
    expect(firedAt).toEqual(["00:02:00", "00:04:01"]);

    // Restarted after several slots passed: they coalesce into one firing.
    const restarted = harness(js, { start: Date.parse("2025-03-01T00:11:00.000Z") });
    await restarted.scheduler.tick();
    await restarted.scheduler.tick();
    expect(restarted.fired).toEqual(["c"]);
  });
});

describe("failures, deadlines and order", () => {
  function auditFor(id: string) {
    return readAuditEvents(auditFile, `job-${id}`).events;
  }

  it("a failed or throwing run is audited in the job's session and the next job still runs", async () => {
    const order: string[] = [];
    const runJob: JobRunner = async (job) => {
      order.push(job.id);
      if (job.id === "fails") return { status: "failed", stop: "backend", error: "backend failed: boom" };
      if (job.id === "throws") throw new Error("kaput");
      return { status: "final" };
    };
    const h = harness(
      jobs(
        { id: "fails", goal: "g", every_sec: 60 },
        { id: "throws", goal: "g", every_sec: 60 },
        { id: "fine", goal: "g", every_sec: 60 },
      ),
      { runJob },
    );
    const report = await h.scheduler.tick();
    expect(order).toEqual(["fails", "throws", "fine"]);
    expect(report).toEqual({ fired: 3, failed: 2 });
    expect(auditFor("fails").map((e) => [e.kind, e.msg])).toEqual([
      ["system_error", "job fails run failed: backend failed: boom"],
    ]);
    expect(auditFor("throws").map((e) => [e.kind, e.msg])).toEqual([
      ["system_error", "job throws run threw: kaput"],
    ]);
    expect(auditFor("fine")).toEqual([]);
    expect(savedState().jobs.throws!.last_status).toBe("error");
    // The state says why each run stopped; a run that threw has no stop of its own.
    expect(savedState().jobs.fails).toMatchObject({ last_status: "failed", last_stop: "backend" });
    expect(savedState().jobs.fine).toMatchObject({ last_status: "final", last_stop: "final" });
    expect(savedState().jobs.throws!.last_stop).toBeUndefined();
  });

  it("a run past its deadline is aborted and audited; the tick goes on", async () => {
    let signalReason: unknown;
    const runJob: JobRunner = (job, signal) =>
      job.id === "slow"
        ? new Promise<JobOutcome>((resolve) => {
            signal.addEventListener("abort", () => {
              signalReason = signal.reason;
              resolve({ status: "interrupted", error: "interrupted" });
            });
          })
        : Promise.resolve({ status: "final" });
    const h = harness(
      jobs({ id: "slow", goal: "g", every_sec: 60 }, { id: "next", goal: "g", every_sec: 60 }),
      {
        runJob,
        deadlineMs: 50,
      },
    );
    const report = await h.scheduler.tick();
    expect(report).toEqual({ fired: 2, failed: 1 });
    expect(String(signalReason)).toMatch(/exceeded its deadline of 50 ms/);
    expect(auditFor("slow").map((e) => e.msg)).toEqual([
      "job slow exceeded its deadline of 50 ms and was aborted",
    ]);
    expect(savedState().jobs.slow!.last_status).toBe("deadline");
    expect(savedState().jobs.next!.last_status).toBe("final");
  });

  it("a run that ignores its abort signal is abandoned shortly after the deadline", async () => {
    const runJob: JobRunner = () => new Promise<JobOutcome>(() => {});
    const h = harness(jobs({ id: "stuck", goal: "g", every_sec: 60 }), {
      runJob,
      deadlineMs: 20,
      graceMs: 20,
    });
    const report = await h.scheduler.tick();
    expect(report.failed).toBe(1);
    expect(auditFor("stuck")[0]!.msg).toMatch(/did not stop within 20 ms of being aborted/);
  });

  it("runs jobs one after another, never overlapping", async () => {
    const events: string[] = [];
    const runJob: JobRunner = async (job) => {
      events.push(`start ${job.id}`);
      await new Promise((r) => setTimeout(r, 10));
      events.push(`end ${job.id}`);
      return { status: "final" };
    };
    const h = harness(jobs({ id: "a", goal: "g", every_sec: 60 }, { id: "b", goal: "g", every_sec: 60 }), {
      runJob,
    });
    await h.scheduler.tick();
    expect(events).toEqual(["start a", "end a", "start b", "end b"]);
  });

  it("a second stop signal cuts the running job short", async () => {
    const abort = new AbortController();
    const runJob: JobRunner = (_job, signal) =>
      new Promise<JobOutcome>((resolve) => {
        signal.addEventListener("abort", () => resolve({ status: "interrupted", error: "interrupted" }));
        setTimeout(() => abort.abort(new Error("SIGTERM")), 10);
      });
    const h = harness(jobs({ id: "long", goal: "g", every_sec: 60 }), { runJob, deadlineMs: 60_000 });
    const report = await h.scheduler.tick(abort.signal);
    expect(report).toEqual({ fired: 1, failed: 1 });
    expect(auditFor("long").map((e) => e.msg)).toEqual(["job long run interrupted: interrupted"]);
    expect(savedState().jobs.long!.last_status).toBe("interrupted");
  });

  it("an aborted tick starts no further job", async () => {
    const abort = new AbortController();
    const runJob: JobRunner = async (job) => {
      abort.abort(new Error("SIGTERM again"));
      return { status: job.id === "a" ? "final" : "failed" };
    };
    const h = harness(jobs({ id: "a", goal: "g", every_sec: 60 }, { id: "b", goal: "g", every_sec: 60 }), {
      runJob,
    });
    const report = await h.scheduler.tick(abort.signal);
    expect(report.fired).toBe(1);
  });
});

describe("state", () => {
  it("stays one small record per job however many ticks run", async () => {
    const h = harness(jobs({ id: "e", goal: "g", every_sec: 1 }, { id: "c", goal: "g", cron: "* * * * *" }));
    const sizes: number[] = [];
    for (let i = 0; i < 150; i++) {
      h.setNow(T0 + i * 1000);
      await h.scheduler.tick();
      if (i === 70 || i === 149) sizes.push(fs.statSync(stateFile).size);
    }
    expect(h.fired.filter((id) => id === "e")).toHaveLength(150);
    // Minutes 1 and 2 after the job was first seen at minute 0 (never retroactively).
    expect(h.fired.filter((id) => id === "c")).toHaveLength(2);
    expect(Object.keys(savedState().jobs)).toEqual(["e", "c"]);
    expect(sizes[1]).toBe(sizes[0]);
  });

  it("an unreadable state file is a fresh start with a warning", async () => {
    fs.writeFileSync(stateFile, "{not json");
    const h = harness(jobs({ id: "e", goal: "g", every_sec: 60 }));
    expect(h.logs.join("\n")).toMatch(/schedule\.json is not valid JSON .* starting with no fire history/);
    await h.scheduler.tick();
    expect(h.fired).toEqual(["e"]);
    expect(savedState().jobs.e!.last_fire).toBe(T0);
  });
});

describe("the job deadline", () => {
  it("is the sum of per-turn deadlines, capped", () => {
    const c = defaultConfig();
    c.agent.max_turns = 2;
    c.backend.timeout_ms = 1000;
    c.backend.max_retries = 1;
    c.tools.timeout_ms = 500;
    expect(jobDeadlineMs(c)).toBe(2 * (1000 * 2 + 500));
    expect(jobDeadlineMs(defaultConfig())).toBe(JOB_DEADLINE_CAP_MS);
  });
});

describe("the polling loop", () => {
  function countingScheduler() {
    let ticks = 0;
    const s: Scheduler = {
      tick: async () => {
        ticks += 1;
        return { fired: 0, failed: 0 };
      },
      state: () => ({ version: 1, jobs: {} }),
    };
    return { s, count: () => ticks };
  }

  it("--ticks N polls exactly N times", async () => {
    const { s, count } = countingScheduler();
    const control = createStopControl(() => {}, false);
    const r = await runLoop({ scheduler: s, ticks: 3, pollMs: 1, control });
    expect(r).toEqual({ ticks: 3, reason: "ticks" });
    expect(count()).toBe(3);
  });

  it("a stop request ends a forever loop after the current tick, without waiting out the poll", async () => {
    const { s, count } = countingScheduler();
    const logs: string[] = [];
    const control = createStopControl((l) => logs.push(l), false);
    const wrapped: Scheduler = {
      ...s,
      tick: async (abort) => {
        const r = await s.tick(abort);
        if (count() === 1) control.request("SIGTERM");
        return r;
      },
    };
    const r = await runLoop({ scheduler: wrapped, ticks: 0, pollMs: 60_000, control });
    expect(r).toEqual({ ticks: 1, reason: "SIGTERM" });
    expect(logs[0]).toMatch(/SIGTERM: stopping after the current tick/);
    control.request("SIGTERM");
    expect(control.abortJob.aborted).toBe(true);
  });
});
