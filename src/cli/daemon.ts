/** `scoot daemon run [--ticks N]`, `scoot daemon status [--json]`, `scoot daemon stop`. */

import type { HomePaths } from "../config/home.js";
import { abortableSleep as sleep } from "../core/sleep.js";
import {
  acquireDaemonLock,
  currentBootId,
  type DaemonState,
  isPidAlive,
  planStop,
  readDaemonState,
  readPidFile,
  recordedPidAlive,
  releaseDaemonLock,
  writeDaemonState,
} from "../schedule/daemon.js";
import { lockHome } from "../schedule/home-lock.js";
import { hostScheduler, idleScheduler, NOTHING_TO_DO_MESSAGE } from "../schedule/host.js";
import { createStopControl, runLoop } from "../schedule/loop.js";
import { procStartTime } from "../schedule/proc-identity.js";
import {
  type DaemonTelemetry,
  daemonTelemetryWanted,
  startDaemonTelemetry,
} from "../telemetry/daemon-telemetry.js";
import { flagBool } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";
import { parseTicks, schedulerLog } from "./schedule.js";

/** How long `daemon stop` waits for the daemon to record `stopped`. It finishes its current job first. */
export const STOP_WAIT_MS = 10_000;
const STOP_POLL_MS = 50;

export async function runDaemonRun(cli: Cli): Promise<number> {
  const ticks = parseTicks(cli, "daemon run");
  if (!ticks.ok) return ticks.exitCode;
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths } = loaded.value;
  // Jobs, shipping and /metrics are each a reason to run; a daemon with only the last two is
  // how a host whose jobs run under systemd timers ships and is scraped.
  const scheduling = config.schedule.enabled;
  if (!scheduling && !daemonTelemetryWanted(config, cli.env)) {
    cli.io.err(`scoot daemon run: ${NOTHING_TO_DO_MESSAGE}\n`);
    return EXIT.usage;
  }
  const log = schedulerLog(cli);
  // Signals are caught before the lock exists, so a stop during start-up still cleans up.
  const control = createStopControl(log);
  // The kernel-held lock first: only its holder may judge and replace the pid file.
  const held = await lockHome(paths.root);
  if (!held.ok) {
    control.dispose();
    cli.io.err(`scoot daemon run: ${busyMessage(paths, held)}\n`);
    return EXIT.failed;
  }
  let lock: ReturnType<typeof acquireDaemonLock>;
  try {
    lock = acquireDaemonLock(paths);
  } catch (e) {
    control.dispose();
    await held.value.release();
    throw e;
  }
  if (!lock.ok) {
    control.dispose();
    await held.value.release();
    cli.io.err(`scoot daemon run: ${lock.error}\n`);
    return EXIT.failed;
  }
  for (const w of lock.value.warnings) log(`warning: ${w}`);

  let state: DaemonState | undefined;
  let exitCode: number = EXIT.ok;
  let reason = "unknown";
  let telemetry: DaemonTelemetry | undefined;
  try {
    // Shipping and /metrics (docs/telemetry.md "Telemetry and metrics"); nothing loads when neither is configured.
    const started = await startDaemonTelemetry({ config, paths, env: cli.env, log });
    if (!started.ok) {
      cli.io.err(`scoot daemon run: ${started.error}\n`);
      reason = `error: ${started.error}`;
      return EXIT.usage;
    }
    telemetry = started.value;
    for (const line of telemetry.started) log(line);
    const hosted = scheduling
      ? hostScheduler({
          config,
          paths,
          cwd: cli.cwd,
          env: cli.env,
          log,
          ...(telemetry.observe ? { observe: telemetry.observe } : {}),
        })
      : undefined;
    if (!hosted) {
      const unscheduled = config.schedule.jobs.length;
      log(
        `schedule: off (no [schedule] enabled = true)${unscheduled > 0 ? `; ${unscheduled} configured job(s) do not fire` : ""}`,
      );
    }
    const bootId = currentBootId();
    const startTime = procStartTime(process.pid);
    state = {
      status: "running",
      pid: process.pid,
      started_at: new Date().toISOString(),
      stopped_at: null,
      stop_reason: null,
      jobs: hosted ? hosted.jobs.jobs.map((j) => j.id) : [],
      poll_ms: config.schedule.poll_ms,
      fired: 0,
      failed: 0,
      ...(bootId ? { boot_id: bootId } : {}),
      ...(startTime ? { start_time: startTime } : {}),
      ...(lock.value.previousUnclean ? { previous_unclean_stop: lock.value.previousUnclean } : {}),
    };
    const first = writeDaemonState(paths.daemonJson, state);
    if (!first.ok) {
      cli.io.err(`scoot daemon run: ${first.error}\n`);
      reason = `error: ${first.error}`;
      return EXIT.failed;
    }
    log(
      `daemon started (pid ${process.pid}): ${hosted ? `${state.jobs.length} job(s)` : "no scheduling"}, poll every ${state.poll_ms} ms, ` +
        `${ticks.value === 0 ? "until stopped" : `${ticks.value} tick(s)`}`,
    );
    const running = state;
    const result = await runLoop({
      scheduler: hosted ? hosted.scheduler : idleScheduler(),
      ticks: ticks.value,
      pollMs: config.schedule.poll_ms,
      control,
      onTick: (report) => {
        if (report.fired === 0 && report.failed === 0) return;
        running.fired += report.fired;
        running.failed += report.failed;
        const w = writeDaemonState(paths.daemonJson, running);
        if (!w.ok) log(`error: ${w.error}`);
      },
    });
    reason = result.reason === "ticks" ? `completed ${result.ticks} tick(s)` : result.reason;
    return exitCode;
  } catch (e) {
    reason = `error: ${(e as Error)?.message ?? String(e)}`;
    exitCode = EXIT.failed;
    cli.io.err(`scoot daemon run: ${reason}\n`);
    return exitCode;
  } finally {
    await telemetry?.stop();
    if (state) {
      const stopped: DaemonState = {
        ...state,
        status: "stopped",
        stopped_at: new Date().toISOString(),
        stop_reason: reason,
      };
      const w = writeDaemonState(paths.daemonJson, stopped);
      if (!w.ok) cli.io.err(`scoot daemon run: ${w.error}\n`);
    }
    releaseDaemonLock(paths);
    await held.value.release();
    control.dispose();
    log(`daemon stopped (${reason})`);
  }
}

function busyMessage(paths: HomePaths, held: { busy: boolean; error: string }): string {
  if (!held.busy) return held.error;
  const pidFile = readPidFile(paths.daemonPid);
  const who = pidFile.kind === "pid" ? ` (pid ${pidFile.pid})` : "";
  return `another daemon${who} is running on this home (${paths.root}); stop it with "scoot daemon stop"`;
}

export async function runDaemonStatus(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot daemon status: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { paths } = loaded.value;
  const read = readDaemonState(paths.daemonJson);
  if (read.kind === "bad") {
    cli.io.err(`scoot daemon status: ${read.error}\n`);
    return EXIT.failed;
  }
  const pidFile = readPidFile(paths.daemonPid);
  const pidFilePid = pidFile.kind === "pid" ? pidFile.pid : null;
  const json = flagBool(cli.args, "json");
  if (read.kind === "missing") {
    if (json) cli.io.out(`${JSON.stringify({ status: "none", pid_alive: false, pid_file: pidFilePid })}\n`);
    else cli.io.out(`status: none (no daemon has run on this home; ${paths.daemonJson} does not exist)\n`);
    return EXIT.ok;
  }
  const s = read.state;
  const alive = recordedPidAlive(s.pid, s);
  const stale = s.status === "running" && !alive;
  if (json) {
    cli.io.out(`${JSON.stringify({ ...s, pid_alive: alive, pid_file: pidFilePid, stale })}\n`);
    return EXIT.ok;
  }
  const lines = [
    `status: ${s.status}${stale ? ` (stale: pid ${s.pid} is gone; the daemon stopped uncleanly)` : ""}`,
    `pid: ${s.pid} (${alive ? "alive" : "not running"})`,
    `pid file: ${pidFilePid ?? (pidFile.kind === "garbage" ? "unreadable" : "none")}`,
    `started_at: ${s.started_at}`,
    `stopped_at: ${s.stopped_at ?? "-"}`,
    `stop_reason: ${s.stop_reason ?? "-"}`,
    `jobs: ${Array.isArray(s.jobs) && s.jobs.length > 0 ? s.jobs.join(", ") : "(none)"}`,
    `poll_ms: ${s.poll_ms}`,
    `fired: ${s.fired ?? 0} (failed: ${s.failed ?? 0})`,
  ];
  if (s.previous_unclean_stop) {
    lines.push(
      `previous_unclean_stop: pid ${s.previous_unclean_stop.pid} started ${s.previous_unclean_stop.started_at}`,
    );
  }
  cli.io.out(`${lines.join("\n")}\n`);
  return EXIT.ok;
}

export async function runDaemonStop(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot daemon stop: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { paths } = loaded.value;
  const plan = planStop(paths);
  if (!plan.ok || plan.pid === undefined) {
    cli.io.err(`scoot daemon stop: ${plan.reason ?? "nothing to stop"}\n`);
    return EXIT.failed;
  }
  const pid = plan.pid;
  try {
    process.kill(pid, "SIGTERM");
  } catch (e) {
    cli.io.err(`scoot daemon stop: cannot signal pid ${pid}: ${(e as Error).message}\n`);
    return EXIT.failed;
  }
  cli.io.err(`scoot: sent SIGTERM to the daemon (pid ${pid}); waiting for it to stop\n`);
  const never = new AbortController().signal;
  const deadline = Date.now() + STOP_WAIT_MS;
  while (Date.now() < deadline) {
    const read = readDaemonState(paths.daemonJson);
    if (read.kind === "state" && read.state.pid === pid && read.state.status === "stopped") {
      cli.io.out(`daemon (pid ${pid}) stopped: ${read.state.stop_reason ?? "stopped"}\n`);
      return EXIT.ok;
    }
    if (!isPidAlive(pid)) {
      const again = readDaemonState(paths.daemonJson);
      if (again.kind === "state" && again.state.pid === pid && again.state.status === "stopped") {
        cli.io.out(`daemon (pid ${pid}) stopped: ${again.state.stop_reason ?? "stopped"}\n`);
        return EXIT.ok;
      }
      cli.io.err(
        `scoot daemon stop: pid ${pid} exited without recording "stopped"; the next "scoot daemon run" recovers its state\n`,
      );
      return EXIT.failed;
    }
    await sleep(STOP_POLL_MS, never);
  }
  cli.io.err(
    `scoot daemon stop: SIGTERM was sent to pid ${pid}, but it has not stopped within ${STOP_WAIT_MS / 1000} s: ` +
      `it finishes its current job first (bounded by the job deadline). Check "scoot daemon status"\n`,
  );
  return EXIT.failed;
}
