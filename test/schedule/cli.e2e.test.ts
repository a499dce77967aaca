/** `schedule` and `daemon` end to end: the built CLI, the scripted model server, real signals. */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { type CliResult, collect, runCli, spawnCli } from "../helpers/cli.js";
import { freePort } from "../helpers/otlp-receiver.js";
import { useScene } from "../helpers/scene.js";
import type { ScriptItem } from "../helpers/scripted-server.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-sched-e2e-", model: true });
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

const final = (answer: string): ScriptItem => step("final", answer, "done");

function writeConfig(body: string): void {
  fs.writeFileSync(path.join(scene.home, "config.toml"), body);
}

function env(): Record<string, string> {
  return { SCOOT_BACKEND_BASE_URL: scene.model.url };
}

function scoot(args: string[]): Promise<CliResult> {
  return runCli(args, { home: scene.home, env: env() });
}

function spawnScoot(args: string[]): ChildProcess {
  const child = spawnCli(args, { home: scene.home, env: env() });
  children.push(child);
  return child;
}

function daemonState(): Record<string, unknown> | undefined {
  const file = path.join(scene.home, "state", "daemon.json");
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : undefined;
}

/** Waits for a condition on disk; the timeout only guards against a hung test. */
async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const pidFile = () => path.join(scene.home, "state", "daemon.pid");

describe("schedule run", () => {
  it("refuses to start unless [schedule] enabled = true (exit 2)", async () => {
    writeConfig('[[schedule.jobs]]\nid = "a"\ngoal = "g"\nevery_sec = 1\n');
    const r = await scoot(["schedule", "run", "--ticks", "1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/set `enabled = true` under \[schedule\]/);
    expect(scene.model.completions()).toHaveLength(0);
  });

  it("rejects a bad --ticks value as a usage error", async () => {
    writeConfig("[schedule]\nenabled = true\n");
    const r = await scoot(["schedule", "run", "--ticks", "-1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--ticks needs a whole number >= 0/);
  });

  it("fires an every_sec job once per tick when each poll outlasts the interval; an hourly job once", async () => {
    // poll_ms 1100 > every_sec 1: every tick starts at least 1.1 s after the previous firing,
    // so every tick is due — a count that does not depend on how fast the machine is.
    writeConfig(
      [
        "[schedule]",
        "enabled = true",
        "poll_ms = 1100",
        "[[schedule.jobs]]",
        'id = "fast"',
        'goal = "tick"',
        "every_sec = 1",
        "[[schedule.jobs]]",
        'id = "hourly"',
        'goal = "hour"',
        "every_sec = 3600",
      ].join("\n"),
    );
    scene.model.push(...Array.from({ length: 4 }, (_, i) => final(`answer ${i}`)));
    const r = await scoot(["schedule", "run", "--ticks", "3"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    const goals = scene.model.completions().map((q) => JSON.stringify(q.body));
    expect(goals.filter((g) => g.includes('"tick"'))).toHaveLength(3);
    expect(goals.filter((g) => g.includes('"hour"'))).toHaveLength(1);
    expect(
      auditEvents(scene.home, { sessionId: "job-fast", missingOk: true }).filter((e) => e.kind === "run"),
    ).toHaveLength(3);
    expect(r.stderr).toMatch(/scheduler stopped after 3 tick\(s\) \(ticks\)/);
  });

  it("SIGTERM ends a forever scheduler after its current tick, exit 0", async () => {
    writeConfig("[schedule]\nenabled = true\npoll_ms = 50\n");
    const child = spawnScoot(["schedule", "run"]);
    let stderr = "";
    child.stderr!.on("data", (d) => {
      stderr += d;
    });
    const done = collect(child, { timeoutMs: 30_000 });
    await waitFor("the scheduler to start", () => stderr.includes("scheduler started"));
    child.kill("SIGTERM");
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/scheduler stopped after \d+ tick\(s\) \(SIGTERM\)/);
  });

  it("fires a past at_unix job once, and not again after a restart", async () => {
    const past = Math.floor(Date.now() / 1000) - 60;
    writeConfig(
      [
        "[schedule]",
        "enabled = true",
        "poll_ms = 20",
        "[[schedule.jobs]]",
        'id = "once"',
        'goal = "do it once"',
        `at_unix = ${past}`,
      ].join("\n"),
    );
    scene.model.push(final("done"), final("must not happen"));
    const first = await scoot(["schedule", "run", "--ticks", "3"]);
    expect(first.code, first.stderr).toBe(0);
    expect(scene.model.completions()).toHaveLength(1);

    const second = await scoot(["schedule", "run", "--ticks", "3"]);
    expect(second.code, second.stderr).toBe(0);
    expect(scene.model.completions()).toHaveLength(1);

    const list = await scoot(["schedule", "list", "--json"]);
    const job = JSON.parse(list.stdout).jobs[0];
    expect(job).toMatchObject({ id: "once", valid: true, next_fire: null, mode: "readonly" });
    expect(typeof job.last_fire).toBe("string");
  });

  it("a guarded job runs readonly: the model's bash request is denied and audited", async () => {
    writeConfig(
      [
        "[schedule]",
        "enabled = true",
        "[[schedule.jobs]]",
        'id = "g"',
        'goal = "clean up"',
        "every_sec = 3600",
        'mode = "guarded"',
      ].join("\n"),
    );
    scene.model.push(
      { reply: { thought: "try shell", action: "bash", action_input: "echo pwned > pwned.txt" } },
      final("could not"),
    );
    const r = await scoot(["schedule", "run", "--ticks", "1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/job g: mode "guarded" runs as "readonly"/);
    const events = auditEvents(scene.home, { sessionId: "job-g", missingOk: true });
    const deny = events.find((e) => e.kind === "policy_deny");
    expect(deny?.msg).toMatch(/^bash echo pwned/);
    expect(events.some((e) => e.kind === "tool_call")).toBe(false);
    expect(fs.existsSync(path.join(scene.home, "pwned.txt"))).toBe(false);
    expect(JSON.stringify(scene.model.completions()[1]!.body)).toContain("denied by policy (readonly)");
  });

  it("a job whose run fails is audited and the next job still runs", async () => {
    writeConfig(
      [
        "[schedule]",
        "enabled = true",
        "[[schedule.jobs]]",
        'id = "broken"',
        'goal = "first"',
        "every_sec = 3600",
        "[[schedule.jobs]]",
        'id = "fine"',
        'goal = "second"',
        "every_sec = 3600",
      ].join("\n"),
    );
    scene.model.push({ status: 401, body: { error: { message: "invalid api key" } } }, final("ok"));
    const r = await scoot(["schedule", "run", "--ticks", "1"]);
    expect(r.code, r.stderr).toBe(0);
    const broken = auditEvents(scene.home, { sessionId: "job-broken", missingOk: true }).filter(
      (e) => e.kind === "system_error",
    );
    expect(broken.map((e) => e.msg).join("\n")).toMatch(/job broken run failed: .*invalid api key/);
    expect(
      auditEvents(scene.home, { sessionId: "job-fine", missingOk: true }).some((e) => e.kind === "final"),
    ).toBe(true);
  });
});

describe("daemon without [schedule]", () => {
  it("with nothing to do it refuses (exit 2), naming jobs, shipping and /metrics", async () => {
    writeConfig('[[schedule.jobs]]\nid = "a"\ngoal = "g"\nevery_sec = 1\n');
    const r = await scoot(["daemon", "run", "--ticks", "1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("the daemon has nothing to do");
    for (const what of ["[schedule]", "[telemetry] otlp_endpoint", "daemon.metrics_listen"])
      expect(r.stderr).toContain(what);
    // OTEL_SDK_DISABLED turns shipping off, so an endpoint alone is nothing to do either.
    writeConfig('[telemetry]\notlp_endpoint = "http://127.0.0.1:4318"\n');
    const off = await runCli(["daemon", "run", "--ticks", "1"], {
      home: scene.home,
      env: { ...env(), OTEL_SDK_DISABLED: "true" },
    });
    expect(off.code).toBe(2);
    expect(off.stderr).toContain("the daemon has nothing to do");
    expect(fs.existsSync(pidFile())).toBe(false);
  });

  it("with only daemon.metrics_listen it runs its ticks, fires nothing and stops cleanly", async () => {
    const port = await freePort();
    writeConfig(
      `[daemon]\nmetrics_listen = "${port}"\n\n[[schedule.jobs]]\nid = "a"\ngoal = "g"\nevery_sec = 1\n`,
    );
    const r = await scoot(["daemon", "run", "--ticks", "2"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "schedule: off (no [schedule] enabled = true); 1 configured job(s) do not fire",
    );
    expect(r.stderr).toContain(`metrics: serving http://127.0.0.1:${port}/metrics`);
    expect(r.stderr).toContain("no scheduling");
    expect(daemonState()).toMatchObject({
      status: "stopped",
      jobs: [],
      fired: 0,
      stop_reason: "completed 2 tick(s)",
    });
    expect(scene.model.completions()).toHaveLength(0);
  });
});

describe("daemon", () => {
  const enabled = "[schedule]\nenabled = true\npoll_ms = 50\n";

  it("refuses to start unless scheduling is enabled", async () => {
    const r = await scoot(["daemon", "run", "--ticks", "1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/enabled = true/);
    expect(daemonState()).toBeUndefined();
  });

  it("owns the home: a second daemon is refused; daemon stop from another process ends the first cleanly", async () => {
    writeConfig(enabled);
    const first = spawnScoot(["daemon", "run"]);
    const done = collect(first, { timeoutMs: 30_000 });
    await waitFor(
      "the daemon to start",
      () => daemonState()?.status === "running" && fs.existsSync(pidFile()),
    );
    expect(daemonState()).toMatchObject({ status: "running", pid: first.pid, poll_ms: 50, stopped_at: null });
    expect(fs.readFileSync(pidFile(), "utf8").trim()).toBe(String(first.pid));

    const second = await scoot(["daemon", "run", "--ticks", "1"]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another daemon (pid ${first.pid}) is running on this home`);

    const sched = await scoot(["schedule", "run", "--ticks", "1"]);
    expect(sched.code).toBe(1);
    expect(sched.stderr).toContain(`a daemon (pid ${first.pid}) is already scheduling`);

    const status = await scoot(["daemon", "status", "--json"]);
    expect(JSON.parse(status.stdout)).toMatchObject({
      status: "running",
      pid: first.pid,
      pid_alive: true,
      stale: false,
    });

    const stop = await scoot(["daemon", "stop"]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`daemon (pid ${first.pid}) stopped: SIGTERM`);
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(daemonState()).toMatchObject({ status: "stopped", pid: first.pid, stop_reason: "SIGTERM" });
    expect(typeof daemonState()!.stopped_at).toBe("string");
    expect(fs.existsSync(pidFile())).toBe(false);

    const again = await scoot(["daemon", "stop"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/the daemon is not running/);
  });

  it("SIGINT stops it cleanly too", async () => {
    writeConfig(enabled);
    const d = spawnScoot(["daemon", "run"]);
    const done = collect(d, { timeoutMs: 30_000 });
    await waitFor("the daemon to start", () => daemonState()?.status === "running");
    d.kill("SIGINT");
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(daemonState()).toMatchObject({ status: "stopped", stop_reason: "SIGINT" });
    expect(fs.existsSync(pidFile())).toBe(false);
  });

  it("recovers from a SIGKILLed daemon: reported as an unclean stop and replaced", async () => {
    writeConfig(enabled);
    const d = spawnScoot(["daemon", "run"]);
    const done = collect(d, { timeoutMs: 30_000 });
    await waitFor("the daemon to start", () => daemonState()?.status === "running");
    const oldPid = d.pid;
    d.kill("SIGKILL");
    await done;
    expect(fs.existsSync(pidFile())).toBe(true);

    const status = await scoot(["daemon", "status"]);
    expect(status.stdout).toMatch(/status: running \(stale: pid \d+ is gone; the daemon stopped uncleanly\)/);
    const stop = await scoot(["daemon", "stop"]);
    expect(stop.code).toBe(1);
    expect(stop.stderr).toMatch(/is not alive: it stopped uncleanly/);

    const r = await scoot(["daemon", "run", "--ticks", "1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(`warning: the previous daemon \\(pid ${oldPid}, started .*\\) stopped uncleanly`),
    );
    expect(daemonState()).toMatchObject({
      status: "stopped",
      stop_reason: "completed 1 tick(s)",
      previous_unclean_stop: { pid: oldPid },
    });
    expect(fs.existsSync(pidFile())).toBe(false);
  });

  it("records its jobs and firings, and status reports them", async () => {
    writeConfig(`${enabled}[[schedule.jobs]]\nid = "j"\ngoal = "g"\nevery_sec = 3600\n`);
    scene.model.push(final("ok"));
    const r = await scoot(["daemon", "run", "--ticks", "2"]);
    expect(r.code, r.stderr).toBe(0);
    expect(daemonState()).toMatchObject({ status: "stopped", jobs: ["j"], fired: 1, failed: 0 });
    const status = await scoot(["daemon", "status"]);
    expect(status.stdout).toMatch(/^status: stopped$/m);
    expect(status.stdout).toMatch(/^jobs: j$/m);
    expect(status.stdout).toMatch(/^stop_reason: completed 2 tick\(s\)$/m);
  });

  it("status on a home where no daemon ran says so", async () => {
    const r = await scoot(["daemon", "status", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ status: "none", pid_alive: false, pid_file: null });
  });
});
