/** `scoot schedule list` and `scoot schedule run [--ticks N]`. */
import { liveDaemonPid } from "../schedule/daemon.js";
import { hostScheduler, NOT_ENABLED_MESSAGE } from "../schedule/host.js";
import { describeTrigger, type Job, jobWarnings, type Trigger, validateJobs } from "../schedule/jobs.js";
import { createStopControl, runLoop } from "../schedule/loop.js";
import { nextFire } from "../schedule/scheduler.js";
import { loadState } from "../schedule/state.js";
import { flagBool, flagCount } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

function triggerJson(t: Trigger): Record<string, unknown> {
  switch (t.kind) {
    case "every_sec":
      return { every_sec: t.seconds };
    case "at_unix":
      return { at_unix: t.seconds };
    case "cron":
      return { cron: t.spec.source };
  }
}

/** The scheduler's log lines: stderr, timestamped (a daemon's output is read later). */
export function schedulerLog(cli: Cli): (line: string) => void {
  return (line) => cli.io.err(`scoot: [${new Date().toISOString()}] ${line}\n`);
}

export function parseTicks(
  cli: Cli,
  command: string,
): { ok: true; value: number } | { ok: false; exitCode: number } {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot ${command}: unexpected argument "${cli.args.words[0]}"\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  const ticks = flagCount(cli.args, "ticks");
  if (!ticks.ok) {
    cli.io.err(`scoot ${command}: ${ticks.error}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  return { ok: true, value: ticks.value ?? 0 };
}

export async function runScheduleList(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot schedule list: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths } = loaded.value;
  const set = validateJobs(config);
  for (const w of jobWarnings(set)) cli.io.err(`scoot: warning: ${w}\n`);
  if (!config.schedule.enabled) cli.io.err(`scoot: note: ${NOT_ENABLED_MESSAGE}\n`);
  const { state, warnings } = loadState(paths.scheduleJson);
  for (const w of warnings) cli.io.err(`scoot: warning: ${w}\n`);
  const now = Date.now();
  const next = (job: Job) => nextFire(job, state.jobs[job.id], now);
  const lastFire = (job: Job) => state.jobs[job.id]?.last_fire;

  if (flagBool(cli.args, "json")) {
    const rows: Record<string, unknown>[] = set.jobs.map((job) => {
      const n = next(job);
      return {
        id: job.id,
        valid: true,
        goal: job.goal,
        trigger: triggerJson(job.trigger),
        mode: job.mode,
        requested_mode: job.requestedMode,
        session_id: job.sessionId,
        next_fire: iso(n),
        due: n !== undefined && n <= now,
        last_fire: iso(lastFire(job)),
        notes: job.notes,
      };
    });
    for (const bad of set.invalid)
      rows.push({ id: bad.label, index: bad.index, valid: false, reason: bad.reason });
    const out = { enabled: config.schedule.enabled, poll_ms: config.schedule.poll_ms, jobs: rows };
    cli.io.out(`${JSON.stringify(out)}\n`);
    return EXIT.ok;
  }
  if (set.jobs.length === 0 && set.invalid.length === 0) {
    cli.io.err("no jobs: add [[schedule.jobs]] tables to config.toml\n");
    return EXIT.ok;
  }
  for (const job of set.jobs) {
    const n = next(job);
    const nextText =
      n === undefined
        ? `never (fired ${iso(lastFire(job)) ?? "already"})`
        : `${iso(n)}${n <= now ? " (due)" : ""}`;
    const modeText = job.mode === job.requestedMode ? job.mode : `${job.mode} (asked ${job.requestedMode})`;
    cli.io.out(`${job.id}\t${describeTrigger(job.trigger)}\tmode=${modeText}\tnext=${nextText}\tvalid\n`);
  }
  for (const bad of set.invalid) cli.io.out(`${bad.label}\t-\t-\t-\tinvalid: ${bad.reason}\n`);
  return EXIT.ok;
}

export async function runScheduleRun(cli: Cli): Promise<number> {
  const ticks = parseTicks(cli, "schedule run");
  if (!ticks.ok) return ticks.exitCode;
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths } = loaded.value;
  if (!config.schedule.enabled) {
    cli.io.err(`scoot schedule run: ${NOT_ENABLED_MESSAGE}\n`);
    return EXIT.usage;
  }
  // Two schedulers on one home would fire every job twice.
  const daemon = liveDaemonPid(paths);
  if (daemon !== undefined) {
    cli.io.err(
      `scoot schedule run: a daemon (pid ${daemon}) is already scheduling this home's jobs; stop it with "scoot daemon stop" first\n`,
    );
    return EXIT.failed;
  }
  const log = schedulerLog(cli);
  const control = createStopControl(log);
  try {
    const hosted = hostScheduler({ config, paths, cwd: cli.cwd, env: cli.env, log });
    log(
      `scheduler started: ${hosted.jobs.jobs.length} job(s), poll every ${config.schedule.poll_ms} ms, ` +
        `${ticks.value === 0 ? "until stopped" : `${ticks.value} tick(s)`}`,
    );
    const result = await runLoop({
      scheduler: hosted.scheduler,
      ticks: ticks.value,
      pollMs: config.schedule.poll_ms,
      control,
    });
    log(`scheduler stopped after ${result.ticks} tick(s) (${result.reason})`);
    return EXIT.ok;
  } finally {
    control.dispose();
  }
}
