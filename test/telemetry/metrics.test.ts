/**
 * `scoot daemon run` with `daemon.metrics_listen` and `[telemetry]`: /metrics in the Prometheus
 * text format (checked by a parser here, and by promtool where installed), scraped by a real
 * Prometheus from Debian whose HTTP API then returns Scoot's series; and the daemon ships the
 * job runs' audit events to the OTLP receiver continuously (docs/telemetry.md "Telemetry and metrics").
 * A second daemon has no `[schedule]` at all: it only serves /metrics and ships what other
 * processes (a `scoot -e` here) write to its home. Everything listens on 127.0.0.1.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, cleanEnv, collect, removeDir, tempDir } from "../helpers/cli.js";
import { freePort, type OtlpReceiver, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";

const PROMETHEUS = "/usr/bin/prometheus";
const PROMTOOL = "/usr/bin/promtool";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The Prometheus text exposition format (version 0.0.4): `# HELP name text`, `# TYPE name kind`,
 * then `name{label="value",...} number`. Throws on any line outside the grammar.
 */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  const sampleLine = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+-?\\d+)?$`);
  const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) ?(.*)$`).exec(line);
    if (meta) {
      if (meta[1] === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(meta[3]!))
          throw new Error(`bad TYPE line: ${line}`);
        types.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = sampleLine.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      label.lastIndex = 0;
      let consumed = 0;
      for (let l = label.exec(m[2]); l; l = label.exec(m[2])) {
        labels[l[1]!] = l[2]!;
        consumed = label.lastIndex;
      }
      if (consumed !== m[2].length) throw new Error(`bad labels: ${line}`);
    }
    const value = m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : Number(m[3]);
    if (Number.isNaN(value) && m[3] !== "NaN") throw new Error(`bad value: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return { samples, types };
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const s = samples.find(
    (x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v),
  );
  return s?.value;
}

async function get(url: string): Promise<string | undefined> {
  try {
    const r = await fetch(url);
    return r.ok ? await r.text() : undefined;
  } catch {
    return undefined;
  }
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let base: string;
let home: string;
let model: ScriptedServer;
let receiver: OtlpReceiver;
let daemon: ChildProcess;
let daemonErr = "";
let metricsUrl: string;
let metricsPort: number;
/** The daemon with no [schedule]: its home, process and /metrics. */
let shipperHome: string;
let shipper: ChildProcess;
let shipperErr = "";
let shipperPort: number;
let shipperUrl: string;

function startDaemon(h: string, onErr: (d: string) => void): ChildProcess {
  const child = spawn(process.execPath, [CLI, "daemon", "run"], {
    cwd: base,
    env: cleanEnv({ SCOOT_HOME: h }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr?.setEncoding("utf8").on("data", onErr);
  return child;
}

async function stopDaemon(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

beforeAll(async () => {
  base = tempDir();
  home = path.join(base, "home");
  fs.mkdirSync(home, { mode: 0o700 });
  const script = [];
  for (let i = 0; i < 200; i++) script.push(step("glob", { pattern: "*" }), step("final", `tick ${i}`));
  model = await startScriptedServer(script);
  receiver = await startOtlpReceiver();
  metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  fs.writeFileSync(
    path.join(home, "config.toml"),
    `[backend]
base_url = "${model.url}"

[schedule]
enabled = true
poll_ms = 200

[[schedule.jobs]]
id = "tick"
goal = "list the files"
every_sec = 1

[[schedule.jobs]]
id = "tock"
goal = "list the files again"
every_sec = 2

[daemon]
metrics_listen = "${metricsPort}"

[telemetry]
otlp_endpoint = "${receiver.url}"
otlp_protocol = "http/protobuf"
`,
  );
  daemon = startDaemon(home, (d) => {
    daemonErr += d;
  });
  // The daemon with no [schedule]: metrics and shipping only.
  shipperHome = path.join(base, "shipper-home");
  fs.mkdirSync(shipperHome, { mode: 0o700 });
  shipperPort = await freePort();
  shipperUrl = `http://127.0.0.1:${shipperPort}/metrics`;
  fs.writeFileSync(
    path.join(shipperHome, "config.toml"),
    `[backend]\nbase_url = "${model.url}"\n\n[daemon]\nmetrics_listen = "${shipperPort}"\n\n[telemetry]\notlp_endpoint = "${receiver.url}"\n`,
  );
  shipper = startDaemon(shipperHome, (d) => {
    shipperErr += d;
  });
  await until("finished runs of both jobs in /metrics", 40_000, async () => {
    const text = await get(metricsUrl);
    if (!text) return undefined;
    const { samples } = parseExposition(text);
    const runs = value(samples, "scoot_runs_total", { status: "final" }) ?? 0;
    // The audit-log counters follow the log within a poll of the daemon's reader.
    const finals = value(samples, "scoot_audit_events_total", { kind: "final" }) ?? 0;
    const tock = value(samples, "scoot_job_firings_total", { scoot_job_name: "tock" }) ?? 0;
    return runs >= 1 && finals >= 1 && tock >= 1 ? true : undefined;
  }).catch((e: Error) => {
    throw new Error(`${e.message}\ndaemon stderr:\n${daemonErr}`);
  });
  await until("the daemon without [schedule] to serve /metrics", 20_000, () => get(shipperUrl)).catch(
    (e: Error) => {
      throw new Error(`${e.message}\ndaemon stderr:\n${shipperErr}`);
    },
  );
}, 90_000);

afterAll(async () => {
  await stopDaemon(daemon);
  await stopDaemon(shipper);
  await receiver?.close();
  await model?.close();
  if (base) removeDir(base);
}, 30_000);

describe("the daemon's /metrics", () => {
  it("is the Prometheus text format with the runs, tools, backend, tokens, audit and job series", async () => {
    const text = (await get(metricsUrl))!;
    const { samples, types } = parseExposition(text);
    expect(types.get("scoot_runs_total")).toBe("counter");
    expect(types.get("scoot_backend_request_duration_seconds")).toBe("histogram");
    expect(types.get("scoot_audit_export_lag_events")).toBe("gauge");
    expect(value(samples, "scoot_runs_total", { status: "final", stop: "final" })).toBeGreaterThanOrEqual(1);
    expect(
      value(samples, "scoot_tool_calls_total", { tool: "glob", decision: "allow" }),
    ).toBeGreaterThanOrEqual(1);
    expect(value(samples, "scoot_tokens_total", { direction: "in" })).toBeGreaterThan(0);
    expect(value(samples, "scoot_tokens_total", { direction: "out" })).toBeGreaterThan(0);
    expect(
      value(samples, "scoot_backend_request_duration_seconds_count", { outcome: "200" }),
    ).toBeGreaterThan(0);
    expect(value(samples, "scoot_audit_events_total", { kind: "tool_call" })).toBeGreaterThanOrEqual(1);
    expect(
      value(samples, "scoot_job_firings_total", { scoot_job_name: "tick", status: "final" }),
    ).toBeGreaterThanOrEqual(1);
    expect(value(samples, "scoot_build_info", { version: "0.1.0" })).toBe(1);
    for (const family of [
      "scoot_denials_total",
      "scoot_approvals_total",
      "scoot_backend_errors_total",
      "scoot_audit_events_exported_total",
      "scoot_audit_gaps",
      "scoot_job_misses_total",
    ])
      expect(types.has(family), family).toBe(true);
    if (fs.existsSync(PROMTOOL)) {
      const lint = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" });
      expect(lint.status, `${lint.stdout}${lint.stderr}`).toBe(0);
    } else
      console.log(
        `[metrics] promtool check skipped: ${PROMTOOL} is not installed (.ci/run installs prometheus)`,
      );
    // No label of Scoot's is one Prometheus sets on every series itself.
    for (const sample of samples) {
      expect(sample.labels).not.toHaveProperty("job");
      expect(sample.labels).not.toHaveProperty("instance");
    }
    // Only /metrics is served; HEAD answers with the headers and no body; other methods are 405.
    const other = await fetch(`http://127.0.0.1:${metricsPort}/`);
    expect(other.status).toBe(404);
    const head = await fetch(metricsUrl, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(Number(head.headers.get("content-length"))).toBeGreaterThan(100);
    expect(await head.text()).toBe("");
    const post = await fetch(metricsUrl, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("has the standard process_* series and answers a scrape that accepts gzip with gzip", async () => {
    // A plain request as Prometheus makes it: the body is read as sent, not decoded on the way.
    const scrape = (acceptEncoding: string) =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http
          .get(metricsUrl, { headers: { "accept-encoding": acceptEncoding } }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          })
          .on("error", reject);
      });
    const zipped = await scrape("gzip");
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(Number(zipped.headers["content-length"])).toBe(zipped.body.length);
    const text = zlib.gunzipSync(zipped.body).toString("utf8");
    const { samples, types } = parseExposition(text);
    expect(types.get("process_cpu_seconds_total")).toBe("counter");
    expect(types.get("process_start_time_seconds")).toBe("gauge");
    const now = Date.now() / 1000;
    const started = value(samples, "process_start_time_seconds")!;
    expect(started).toBeGreaterThan(now - 3600);
    expect(started).toBeLessThanOrEqual(now);
    expect(value(samples, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(value(samples, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(value(samples, "process_virtual_memory_bytes")).toBeGreaterThan(0);
    expect(value(samples, "process_open_fds")).toBeGreaterThan(0);
    expect(value(samples, "process_max_fds")).toBeGreaterThanOrEqual(value(samples, "process_open_fds")!);
    expect(text).toContain("scoot_runs_total");
    if (fs.existsSync(PROMTOOL)) {
      const lint = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" });
      expect(lint.status, `${lint.stdout}${lint.stderr}`).toBe(0);
    } else
      console.log(
        `[metrics] promtool check skipped: ${PROMTOOL} is not installed (.ci/run installs prometheus)`,
      );
    // Without gzip in Accept-Encoding (or with q=0) the exposition is plain text.
    for (const plain of ["identity", "gzip;q=0"]) {
      const r = await scrape(plain);
      expect(r.headers["content-encoding"], plain).toBeUndefined();
      expect(r.body.toString("utf8")).toMatch(/^# HELP /);
    }
  });

  it("ships the job runs' audit events to the collector continuously, and counts them as exported", async () => {
    const records = await until("job events at the receiver", 20_000, async () =>
      receiver.records.some(
        (r) => r.attributes["scoot.session_id"] === "job-tick" && r.attributes["scoot.kind"] === "final",
      )
        ? receiver.records
        : undefined,
    );
    const ids = records.map(
      (r) =>
        `${r.attributes["scoot.session_id"]}/${r.attributes["scoot.seq"]}/${r.attributes["scoot.chain"]}`,
    );
    expect(new Set(ids).size).toBe(ids.length);
    const exported = await until("exported events in /metrics", 20_000, async () => {
      const v = value(
        parseExposition((await get(metricsUrl)) ?? "").samples,
        "scoot_audit_events_exported_total",
      );
      return v !== undefined && v > 0 ? v : undefined;
    });
    expect(exported).toBeGreaterThan(0);
  });
});

describe("a daemon with no [schedule]", () => {
  it("runs with only metrics_listen and [telemetry]: serves /metrics and ships what other runs write", async () => {
    expect(shipper.exitCode).toBeNull();
    expect(shipperErr).toContain("schedule: off");
    const state = JSON.parse(fs.readFileSync(path.join(shipperHome, "state", "daemon.json"), "utf8"));
    expect(state).toMatchObject({ status: "running", jobs: [] });
    // A run of its own home (as a systemd timer's job would be): the daemon ships its events.
    // Not spawnSync: the scripted model answers from this process.
    const run = await collect(
      spawn(process.execPath, [CLI, "--session-id", "from-a-timer", "-e", "list the files"], {
        cwd: base,
        env: cleanEnv({ SCOOT_HOME: shipperHome }),
        stdio: ["ignore", "pipe", "pipe"],
      }),
      { timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    await until("the run's events at the receiver", 20_000, async () =>
      receiver.records.some(
        (r) => r.attributes["scoot.session_id"] === "from-a-timer" && r.attributes["scoot.kind"] === "final",
      )
        ? true
        : undefined,
    );
    const samples = await until("the run counted in its /metrics", 20_000, async () => {
      const text = await get(shipperUrl);
      if (!text) return undefined;
      const parsed = parseExposition(text).samples;
      const exported = value(parsed, "scoot_audit_events_exported_total") ?? 0;
      const finals = value(parsed, "scoot_audit_events_total", { kind: "final" }) ?? 0;
      return exported > 0 && finals >= 1 ? { text, parsed } : undefined;
    });
    expect(value(samples.parsed, "scoot_build_info", { version: "0.1.0" })).toBe(1);
    if (fs.existsSync(PROMTOOL)) {
      const lint = spawnSync(PROMTOOL, ["check", "metrics"], { input: samples.text, encoding: "utf8" });
      expect(lint.status, `${lint.stdout}${lint.stderr}`).toBe(0);
    }
  });
});

describe("Prometheus from Debian", () => {
  it("scrapes both daemons on loopback; its HTTP API returns scoot_runs_total and per-job series by scoot_job_name", async (ctx) => {
    if (!fs.existsSync(PROMETHEUS)) {
      console.log(
        `[metrics] Prometheus scrape skipped: ${PROMETHEUS} is not installed (.ci/run installs prometheus)`,
      );
      ctx.skip();
      return;
    }
    const dir = path.join(base, "prometheus");
    fs.mkdirSync(dir);
    const cfg = path.join(dir, "prometheus.yml");
    fs.writeFileSync(
      cfg,
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: scoot\n    static_configs:\n      - targets: ["127.0.0.1:${metricsPort}", "127.0.0.1:${shipperPort}"]\n`,
    );
    execFileSync(PROMETHEUS.replace("prometheus", "promtool"), ["check", "config", cfg], { stdio: "ignore" });
    const port = await freePort();
    let err = "";
    const prom = spawn(
      PROMETHEUS,
      [
        `--config.file=${cfg}`,
        `--storage.tsdb.path=${path.join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    prom.stderr?.setEncoding("utf8").on("data", (d: string) => {
      err += d;
    });
    try {
      const api = `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent("scoot_runs_total")}`;
      const ready = await until("Prometheus to answer", 20_000, async () =>
        prom.exitCode !== null
          ? "exited"
          : (await get(`http://127.0.0.1:${port}/-/ready`)) !== undefined
            ? "ready"
            : undefined,
      ).catch(() => "timeout");
      if (ready !== "ready") {
        console.log(
          `[metrics] Prometheus scrape skipped: Prometheus could not start here (${ready}): ${err.slice(0, 400)}`,
        );
        ctx.skip();
        return;
      }
      const result = await until("scoot_runs_total in Prometheus", 30_000, async () => {
        const body = await get(api);
        if (!body) return undefined;
        const parsed = JSON.parse(body) as {
          status: string;
          data: { result: { metric: Record<string, string>; value: [number, string] }[] };
        };
        const jobs = parsed.data.result.find(
          (r) => r.metric.status === "final" && r.metric.instance === `127.0.0.1:${metricsPort}`,
        );
        return parsed.status === "success" && jobs ? parsed.data.result : undefined;
      });
      const final = result.find(
        (r) => r.metric.status === "final" && r.metric.instance === `127.0.0.1:${metricsPort}`,
      );
      expect(final?.metric.job).toBe("scoot");
      expect(Number(final?.value[1])).toBeGreaterThanOrEqual(1);
      type Series = { metric: Record<string, string>; value: [number, string] }[];
      const query = async (q: string): Promise<Series> => {
        const body = await get(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`);
        return (JSON.parse(body!) as { data: { result: Series } }).data.result;
      };
      // Both daemons are up: the one with jobs and the one without [schedule].
      const up = await until("both targets up", 30_000, async () => {
        const r = await query("up");
        return r.length === 2 && r.every((x) => x.value[1] === "1") ? r : undefined;
      });
      expect(up.map((x) => x.metric.instance).sort()).toEqual(
        [`127.0.0.1:${metricsPort}`, `127.0.0.1:${shipperPort}`].sort(),
      );
      // Per-job series, summed by Scoot's own label: one per job, none under Prometheus' `job`.
      const perJob = await until("both jobs' firings in Prometheus", 30_000, async () => {
        const r = await query("sum by (scoot_job_name) (scoot_job_firings_total)");
        return r.length === 2 ? r : undefined;
      });
      expect(perJob.map((x) => x.metric.scoot_job_name).sort()).toEqual(["tick", "tock"]);
      for (const x of perJob) expect(Number(x.value[1])).toBeGreaterThanOrEqual(1);
      // No series was renamed to exported_job/exported_instance by a clash with the target labels.
      const firings = await query("scoot_job_firings_total");
      for (const x of firings) {
        expect(x.metric.job).toBe("scoot");
        expect(x.metric).not.toHaveProperty("exported_job");
        expect(x.metric).not.toHaveProperty("exported_instance");
      }
      expect(await query(`scoot_build_info{instance="127.0.0.1:${shipperPort}"}`)).toHaveLength(1);
    } finally {
      const exited = new Promise((r) => prom.once("exit", r));
      prom.kill("SIGTERM");
      await exited;
    }
  }, 90_000);
});
