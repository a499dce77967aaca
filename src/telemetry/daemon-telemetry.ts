/**
 * What `scoot daemon run` adds when `[telemetry]` or `daemon.metrics_listen` is configured:
 * continuous shipping of the audit log from the durable cursor, and `/metrics`. With neither
 * configured nothing is imported and nothing runs. Both loops stop when the daemon stops.
 */
import type { AgentEvent } from "../agent/events.js";
import type { RunStop } from "../agent/run-stop.js";
import type { HomePaths } from "../config/home.js";
import type { Config } from "../config/schema.js";
import { abortableSleep as sleep } from "../core/sleep.js";
import type { Result } from "../core/types.js";
import { scootVersion } from "../core/version.js";
import { readGaps } from "../store/audit-rotation.js";
import { endCursor, readBatch } from "./audit-source.js";
import type { Cursor } from "./cursor.js";
import { parseListen, resolveTelemetry } from "./settings.js";
import { busyExporterMessage, lockExporter, prepareExport } from "./setup.js";
import { FOLLOW_POLL_MS } from "./shipper.js";

export interface DaemonTelemetry {
  /** For the job runner: undefined when no metrics are served. */
  observe?: {
    onEvent: (e: AgentEvent) => void;
    onDone: (job: { id: string }, status: string, stop: RunStop | undefined) => void;
  };
  /** Lines for the start-up log. */
  started: string[];
  stop(): Promise<void>;
}

/**
 * Whether the daemon has telemetry work: /metrics to serve, or an exporter configured (a
 * misconfigured one too, so its problems are reported at start rather than "nothing to do").
 */
export function daemonTelemetryWanted(config: Config, env: NodeJS.ProcessEnv): boolean {
  if (config.daemon.metrics_listen?.trim()) return true;
  const kind = resolveTelemetry(config, env, scootVersion()).kind;
  return kind === "on" || kind === "invalid";
}

/** The metrics' audit reader takes this many events per read, so a burst is counted in steps. */
const METRICS_READ_ITEMS = 4096;
/** How long a stopping daemon waits for the batch in flight. */
const STOP_GRACE_MS = 2_000;

export async function startDaemonTelemetry(opts: {
  config: Config;
  paths: HomePaths;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
}): Promise<Result<DaemonTelemetry>> {
  const { config, paths, env, log } = opts;
  const prepared = prepareExport(config, paths, env);
  if (!prepared.ok) return prepared;
  const listenRaw = config.daemon.metrics_listen?.trim();
  const listen = listenRaw ? parseListen(listenRaw) : undefined;
  if (listen && !listen.ok) return { ok: false, error: listen.error };
  const plan = prepared.value;
  const setup = plan.kind === "on" ? plan.setup : undefined;
  const notes = plan.kind === "disabled" ? [`telemetry: not shipping: ${plan.reason}`] : [];
  if (!setup && !listen) return { ok: true, value: { started: notes, stop: async () => {} } };

  const stopper = new AbortController();
  const tasks: Promise<unknown>[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  const started: string[] = [...notes];
  const stop = async () => {
    stopper.abort();
    // A batch in flight when the daemon stops is abandoned after a short grace: its cursor was
    // not written, so the next shipper sends it again (at-least-once), and `daemon stop` stays prompt.
    const never = new AbortController().signal;
    await Promise.race([Promise.allSettled(tasks), sleep(STOP_GRACE_MS, never)]);
    for (const c of cleanups.reverse()) await c();
  };

  let metrics: Awaited<ReturnType<typeof import("./metrics.js").createDaemonMetrics>> | undefined;
  if (listen?.ok) {
    const m = await import("./metrics.js");
    metrics = await m.createDaemonMetrics(scootVersion());
    const served = await m.serveMetrics(metrics.registry, listen.host, listen.port);
    if (!served.ok) return served;
    cleanups.push(() => served.value.close());
    started.push(`metrics: serving ${served.value.url}`);
    const key = setup?.key;
    const counting = metrics;
    tasks.push(
      (async () => {
        let cursor: Cursor = endCursor(paths.audit, key);
        while (!stopper.signal.aborted) {
          try {
            const b = readBatch(paths.audit, cursor, key, {
              maxItems: METRICS_READ_ITEMS,
              maxBytes: Number.MAX_SAFE_INTEGER,
            });
            counting.onAuditItems(b.items);
            cursor = b.next;
            counting.setRecordedGaps(readGaps(paths.audit).gaps.length);
            if (!b.caughtUp) continue;
          } catch (e) {
            log(`metrics: cannot read the audit log: ${(e as Error).message}`);
          }
          await sleep(FOLLOW_POLL_MS, stopper.signal);
        }
      })(),
    );
  }

  if (setup) {
    for (const w of setup.settings.warnings) log(`warning: telemetry: ${w}`);
    const lock = lockExporter(setup);
    if (!lock.ok) {
      log(`warning: telemetry: ${busyExporterMessage(lock.error.holder)}; this daemon does not ship`);
    } else {
      const [{ openLogSink }, { shipFollow }] = await Promise.all([
        import("./otlp.js"),
        import("./shipper.js"),
      ]);
      const sink = await openLogSink(setup.settings, setup.version);
      cleanups.push(() => lock.value.release());
      cleanups.push(() => sink.shutdown());
      started.push(`telemetry: shipping ${paths.audit} to ${setup.settings.logsUrl}`);
      const m = metrics;
      tasks.push(
        shipFollow(
          {
            live: paths.audit,
            cursorFile: setup.cursorFile,
            rejectedFile: setup.rejectedFile,
            key: setup.key,
            sink,
            maxBatchRecords: config.telemetry.max_batch_records,
            log,
            ...(m ? { onProgress: (p) => m.onExportProgress(p) } : {}),
          },
          stopper.signal,
        ).then((r) => {
          if (!r.ok) log(`error: telemetry: ${r.error}`);
        }),
      );
    }
  }
  const counting = metrics;
  return {
    ok: true,
    value: {
      ...(counting
        ? {
            observe: {
              onEvent: (e: AgentEvent) => counting.onAgentEvent(e),
              onDone: (job: { id: string }, status: string, stop: RunStop | undefined) =>
                counting.onJobDone(job.id, status, stop, status !== "final"),
            },
          }
        : {}),
      started,
      stop,
    },
  };
}
