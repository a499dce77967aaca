/**
 * `scoot audit export [--follow]`: ships the audit log to the OTLP collector configured in
 * `[telemetry]`, from the durable cursor (docs/telemetry.md "Telemetry and metrics"). Once: drain and
 * exit — 1 when the collector did not acknowledge (the cursor keeps its place: run it again),
 * 3 when it refused or rejected records for good (set aside in the rejected file, the cursor
 * moved on), 0 with nothing to do under `OTEL_SDK_DISABLED=true`. `--follow`: keep shipping,
 * with backoff while the collector is down, until SIGTERM/SIGINT.
 */
import { ensureDir } from "../config/home.js";
import { createStopControl } from "../schedule/loop.js";
import { openLogSink } from "../telemetry/otlp.js";
import { busyExporterMessage, lockExporter, NOT_CONFIGURED, prepareExport } from "../telemetry/setup.js";
import { setAsideLine, shipFollow, shipOnce } from "../telemetry/shipper.js";
import { flagBool } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";

export async function runAuditExport(cli: Cli): Promise<number> {
  const name = "scoot audit export";
  if (cli.args.words.length > 0) {
    cli.io.err(
      `${name}: unexpected argument "${cli.args.words[0]}" (usage: scoot audit export [--follow])\n`,
    );
    return EXIT.usage;
  }
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths } = loaded.value;
  const prepared = prepareExport(config, paths, cli.env);
  if (!prepared.ok) {
    cli.io.err(`${name}: ${prepared.error}\n`);
    return EXIT.usage;
  }
  const plan = prepared.value;
  if (plan.kind === "off") {
    cli.io.err(`${name}: ${NOT_CONFIGURED}\n`);
    return EXIT.usage;
  }
  if (plan.kind === "disabled") {
    // The operator's switch, not a mistake: nothing is sent and the cursor stays where it is.
    cli.io.err(`${name}: nothing exported: ${plan.reason} (the cursor keeps its place)\n`);
    return EXIT.ok;
  }
  const setup = plan.setup;
  ensureDir(paths.state);
  const lock = lockExporter(setup);
  if (!lock.ok) {
    cli.io.err(`${name}: ${busyExporterMessage(lock.error.holder)}\n`);
    return EXIT.failed;
  }
  const log = (line: string) => cli.io.err(`scoot: ${line}\n`);
  for (const w of setup.settings.warnings) log(`warning: telemetry: ${w}`);
  // Signals are caught before the exporter loads, so a stop during start-up still ends cleanly.
  const control = flagBool(cli.args, "follow") ? createStopControl(log) : undefined;
  const sink = await openLogSink(setup.settings, setup.version);
  const opts = {
    live: paths.audit,
    cursorFile: setup.cursorFile,
    rejectedFile: setup.rejectedFile,
    key: setup.key,
    sink,
    maxBatchRecords: config.telemetry.max_batch_records,
    log,
  };
  try {
    if (control) {
      try {
        log(`telemetry: following ${paths.audit} to ${setup.settings.logsUrl} (stop with SIGTERM or Ctrl-C)`);
        const r = await shipFollow(opts, control.stop);
        if (!r.ok) {
          cli.io.err(`${name}: ${r.error}\n`);
          return EXIT.failed;
        }
        return EXIT.ok;
      } finally {
        control.dispose();
      }
    }
    const r = await shipOnce(opts);
    if (!r.ok && r.error.local) {
      cli.io.err(`${name}: ${r.error.error}\n`);
      return EXIT.failed;
    }
    const done = r.ok ? r.value : r.error.done;
    for (const aside of done.setAside) cli.io.err(`${name}: ${setAsideLine(aside, setup.rejectedFile)}\n`);
    if (!r.ok) {
      const { error, pending } = r.error;
      cli.io.err(
        `${name}: the collector at ${setup.settings.logsUrl} did not acknowledge a batch: ${error}. ` +
          `${done.exported} event(s) were exported before; ${pending} wait; the cursor keeps its place, so run it again when the collector is up\n`,
      );
      return EXIT.failed;
    }
    cli.io.out(
      `exported ${done.exported} event(s)${done.gaps > 0 ? ` and ${done.gaps} gap record(s)` : ""} in ${done.batches} batch(es) to ${setup.settings.logsUrl}` +
        `${done.rejected > 0 ? `; the collector rejected ${done.rejected} record(s), recorded in ${setup.rejectedFile}` : ""}\n`,
    );
    return done.rejected > 0 ? EXIT.rejected : EXIT.ok;
  } finally {
    control?.dispose();
    await sink.shutdown();
    lock.value.release();
  }
}
