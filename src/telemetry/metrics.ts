/**
 * Prometheus metrics for `scoot daemon run` (docs/telemetry.md "Telemetry and metrics"), served on
 * `daemon.metrics_listen` in the text exposition format by `prom-client`, which is imported
 * only when the daemon is asked to serve metrics.
 *
 * Two sources feed them:
 * - the daemon's own job runs (agent events): runs by status, backend latency, errors and
 *   tokens, job firings and misses;
 * - the audit log of the home, read from where it ended at start (`audit-source.ts`): every
 *   process that writes to it counts (a `scoot -e` under a systemd timer too) — audit events by
 *   kind, tool calls by tool and decision, denials, approvals, recorded gaps. The exporter adds
 *   what it shipped, what the collector rejected, and its lag.
 *
 * Prometheus' conventions: no label is named `job` or `instance` (the scrape sets those; a
 * clash is renamed `exported_job` and breaks `sum by (job)`), so a job is `scoot_job_name`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import type { Registry } from "prom-client";
import type { AgentEvent } from "../agent/events.js";
import type { RunStop } from "../agent/run-stop.js";
import type { Result } from "../core/types.js";
import type { SourceItem } from "./audit-source.js";
import type { Progress } from "./shipper.js";

/** Backend latency buckets in seconds: local models answer in 0.1–30 s, remote ones faster. */
const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** A tool label is the action name; anything longer is not an action and is not a label either. */
const MAX_TOOL_LABEL_CHARS = 64;
const TOOL_LABEL = /^[A-Za-z0-9_.-]+$/;
/** The label naming a scheduled job (never `job`: Prometheus' own target label). */
export const JOB_LABEL = "scoot_job_name";
/** What /metrics answers to; anything else on that path is 405. */
const METRICS_METHODS = ["GET", "HEAD"];

export interface DaemonMetrics {
  registry: Registry;
  /** One agent event of a job run. */
  onAgentEvent(e: AgentEvent): void;
  /** `stop` is the run's stop reason; undefined when no run started (counted as `not_started`). */
  onJobDone(job: string, status: string, stop: RunStop | undefined, missed: boolean): void;
  /** Events read from the audit log. */
  onAuditItems(items: readonly SourceItem[]): void;
  onExportProgress(p: Progress): void;
  setRecordedGaps(n: number): void;
}

/** The tool an audit message names: `tool_call` and `policy_deny` messages start with the action. */
export function toolOf(msg: string): string {
  return toolLabel(msg.trimStart().split(/[\s:({]/, 1)[0] ?? "");
}

/** A tool name as a metric label: bounded, or `unknown`. */
function toolLabel(name: string): string {
  return name.length > 0 && name.length <= MAX_TOOL_LABEL_CHARS && TOOL_LABEL.test(name) ? name : "unknown";
}

export async function createDaemonMetrics(version: string): Promise<DaemonMetrics> {
  const prom = await import("prom-client");
  const registry = new prom.Registry();
  const on = { registers: [registry] };
  // The standard process_* series every Prometheus client exports (resident and virtual memory,
  // CPU seconds, open and maximum file descriptors, start time). prom-client's nodejs_* series
  // are left out: three of them are gauges named *_total, which `promtool check metrics` refuses.
  prom.collectDefaultMetrics({ register: registry });
  for (const m of registry.getMetricsAsArray())
    if (!m.name.startsWith("process_")) registry.removeSingleMetric(m.name);
  new prom.Gauge({ name: "scoot_build_info", help: "Scoot's version", labelNames: ["version"], ...on }).set(
    { version },
    1,
  );
  const runs = new prom.Counter({
    name: "scoot_runs_total",
    help: "Job runs of this daemon by status (final = answered) and stop reason (max_turns, backend, ...)",
    labelNames: ["status", "stop"],
    ...on,
  });
  const toolCalls = new prom.Counter({
    name: "scoot_tool_calls_total",
    help: "Tool calls in the audit log by tool and gate decision",
    labelNames: ["tool", "decision"],
    ...on,
  });
  const denials = new prom.Counter({ name: "scoot_denials_total", help: "policy_deny audit events", ...on });
  const approvals = new prom.Counter({ name: "scoot_approvals_total", help: "approval audit events", ...on });
  const latency = new prom.Histogram({
    name: "scoot_backend_request_duration_seconds",
    help: "Model backend requests of job runs, by outcome (HTTP status or failure kind)",
    labelNames: ["outcome"],
    buckets: LATENCY_BUCKETS,
    ...on,
  });
  const backendErrors = new prom.Counter({
    name: "scoot_backend_errors_total",
    help: "Model backend requests of job runs that did not succeed, by outcome",
    labelNames: ["outcome"],
    ...on,
  });
  const tokens = new prom.Counter({
    name: "scoot_tokens_total",
    help: "Model tokens of job runs: in = prompt, out = completion",
    labelNames: ["direction"],
    ...on,
  });
  const auditEvents = new prom.Counter({
    name: "scoot_audit_events_total",
    help: "Audit events written to this home's log since the daemon started, by kind",
    labelNames: ["kind"],
    ...on,
  });
  const exported = new prom.Counter({
    name: "scoot_audit_events_exported_total",
    help: "Audit events acknowledged by the OTLP collector",
    ...on,
  });
  const rejected = new prom.Counter({
    name: "scoot_audit_records_rejected_total",
    help: "Records the OTLP collector refused or rejected for good (set aside in state/telemetry-rejected.jsonl, not sent again)",
    ...on,
  });
  const exportFailures = new prom.Counter({
    name: "scoot_audit_export_failures_total",
    help: "OTLP export attempts that were not acknowledged",
    ...on,
  });
  const lag = new prom.Gauge({
    name: "scoot_audit_export_lag_events",
    help: "Audit events written but not yet acknowledged by the collector",
    ...on,
  });
  const gapsExported = new prom.Counter({
    name: "scoot_audit_gaps_exported_total",
    help: "gap records sent to the collector (generations evicted before export)",
    ...on,
  });
  const gapsRecorded = new prom.Gauge({
    name: "scoot_audit_gaps",
    help: "Gap records in the audit log (generations removed by retention)",
    ...on,
  });
  const firings = new prom.Counter({
    name: "scoot_job_firings_total",
    help: "Job firings by job and status",
    labelNames: [JOB_LABEL, "status"],
    ...on,
  });
  const misses = new prom.Counter({
    name: "scoot_job_misses_total",
    help: "Job firings that did not run to an answer within their deadline (failed, timed out, abandoned)",
    labelNames: [JOB_LABEL],
    ...on,
  });
  for (const direction of ["in", "out"]) tokens.inc({ direction }, 0);
  runs.inc({ status: "final", stop: "final" }, 0);
  let last: Progress = { exported: 0, gaps: 0, failures: 0, rejected: 0, lag: 0 };
  return {
    registry,
    onAgentEvent(e) {
      if (e.type === "reply" && e.usage) {
        tokens.inc({ direction: "in" }, e.usage.prompt_tokens);
        tokens.inc({ direction: "out" }, e.usage.completion_tokens);
      } else if (e.type === "backend" && e.event.type === "attempt") {
        const outcome = String(e.event.outcome);
        latency.observe({ outcome }, e.event.latencyMs / 1000);
        const ok = typeof e.event.outcome === "number" && e.event.outcome >= 200 && e.event.outcome < 300;
        if (!ok) backendErrors.inc({ outcome });
      }
    },
    onJobDone(job, status, stop, missed) {
      runs.inc({ status, stop: stop ?? "not_started" });
      firings.inc({ [JOB_LABEL]: job, status });
      if (missed) misses.inc({ [JOB_LABEL]: job });
    },
    onAuditItems(items) {
      for (const item of items) {
        if (item.type !== "event") continue;
        const { kind, msg, call } = item.event;
        auditEvents.inc({ kind });
        // The record's own fields; a line from before they were written is read by its words.
        const tool = call ? toolLabel(call.tool) : toolOf(msg);
        if (kind === "tool_call") toolCalls.inc({ tool, decision: "allow" });
        else if (kind === "policy_deny") {
          toolCalls.inc({ tool, decision: "deny" });
          denials.inc();
        } else if (kind === "approval") {
          approvals.inc();
          if (call?.outcome === "refused") toolCalls.inc({ tool, decision: "refuse" });
        }
      }
    },
    onExportProgress(p) {
      if (p.exported > last.exported) exported.inc(p.exported - last.exported);
      if (p.gaps > last.gaps) gapsExported.inc(p.gaps - last.gaps);
      if (p.failures > last.failures) exportFailures.inc(p.failures - last.failures);
      if (p.rejected > last.rejected) rejected.inc(p.rejected - last.rejected);
      lag.set(p.lag);
      last = { ...p };
    },
    setRecordedGaps(n) {
      gapsRecorded.set(n);
    },
  };
}

/** Whether an Accept-Encoding header accepts gzip (`gzip` or `*`, with no `q=0`). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  const q = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const given = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = given === undefined ? 1 : Number(given.slice(2));
    q.set(name, Number.isNaN(weight) ? 0 : weight);
  }
  const gzip = q.get("gzip") ?? q.get("x-gzip") ?? q.get("*");
  return gzip !== undefined && gzip > 0;
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves /metrics on host:port: GET with the exposition, HEAD with the same headers and no body
 * (Node leaves the body out of a HEAD answer); another method there is 405, another path 404.
 * A scraper that accepts gzip (Prometheus does) gets the exposition gzipped.
 */
export function serveMetrics(registry: Registry, host: string, port: number): Promise<Result<MetricsServer>> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found: Scoot serves GET /metrics\n");
      return;
    }
    if (!METRICS_METHODS.includes(req.method ?? "")) {
      res.writeHead(405, { "content-type": "text/plain", allow: METRICS_METHODS.join(", ") });
      res.end(`method ${req.method} not allowed: /metrics answers ${METRICS_METHODS.join(" and ")}\n`);
      return;
    }
    registry.metrics().then(
      (text) => {
        const gzip = acceptsGzip(req.headers["accept-encoding"]);
        const body = gzip ? zlib.gzipSync(text) : Buffer.from(text);
        res.writeHead(200, {
          "content-type": registry.contentType,
          "content-length": body.length,
          vary: "Accept-Encoding",
          ...(gzip ? { "content-encoding": "gzip" } : {}),
        });
        res.end(body);
      },
      (e: unknown) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(`${(e as Error).message}\n`);
      },
    );
  });
  return new Promise((resolve) => {
    server.once("error", (e) =>
      resolve({
        ok: false,
        error: `daemon.metrics_listen: cannot listen on ${host}:${port}: ${(e as Error).message}`,
      }),
    );
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      const shown = a.family === "IPv6" ? `[${a.address}]` : a.address;
      resolve({
        ok: true,
        value: {
          url: `http://${shown}:${a.port}/metrics`,
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections?.();
              server.close(() => done());
            }),
        },
      });
    });
  });
}
