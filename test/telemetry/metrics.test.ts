/**
 * `scoot daemon run` with `daemon.metrics_listen` and `[telemetry]`: /metrics in the Prometheus
 * text format (checked by a parser here, and by promtool where installed), scraped by a real
 * Prometheus from Debian whose HTTP API then returns Scoot's series; and the daemon ships the
 * job runs' audit events to the OTLP receiver continuously (docs/telemetry.md "Telemetry and metrics").
 * Everything listens on 127.0.0.1.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, cleanEnv, removeDir, tempDir } from "../helpers/cli.js";
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

beforeAll(async () => {
  base = tempDir();
  home = path.join(base, "home");
  fs.mkdirSync(home, { mode: 0o700 });
  const script = [];
  for (let i = 0; i < 60; i++) script.push(step("glob", { pattern: "*" }), step("final", `tick ${i}`));
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

[daemon]
metrics_listen = "${metricsPort}"

[telemetry]
otlp_endpoint = "${receiver.url}"
otlp_protocol = "http/protobuf"
`,
  );
  daemon = spawn(process.execPath, [CLI, "daemon", "run"], {
    cwd: base,
    env: cleanEnv({ SCOOT_HOME: home }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  daemon.stderr?.setEncoding("utf8").on("data", (d: string) => {
    daemonErr += d;
  });
  await until("a finished job run in /metrics", 30_000, async () => {
    const text = await get(metricsUrl);
    if (!text) return undefined;
    const { samples } = parseExposition(text);
    const runs = value(samples, "scoot_runs_total", { status: "final" }) ?? 0;
    // The audit-log counters follow the log within a poll of the daemon's reader.
    const finals = value(samples, "scoot_audit_events_total", { kind: "final" }) ?? 0;
    return runs >= 1 && finals >= 1 ? true : undefined;
  }).catch((e: Error) => {
    throw new Error(`${e.message}\ndaemon stderr:\n${daemonErr}`);
  });
}, 60_000);

afterAll(async () => {
  if (daemon && daemon.exitCode === null) {
    const exited = new Promise((r) => daemon.once("exit", r));
    daemon.kill("SIGTERM");
    await exited;
  }
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
      value(samples, "scoot_job_firings_total", { job: "tick", status: "final" }),
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
    // Only GET /metrics is served.
    const other = await fetch(`http://127.0.0.1:${metricsPort}/`);
    expect(other.status).toBe(404);
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

describe("Prometheus from Debian", () => {
  it("scrapes the daemon on loopback and its HTTP API returns scoot_runs_total", async (ctx) => {
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
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: scoot\n    static_configs:\n      - targets: ["127.0.0.1:${metricsPort}"]\n`,
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
        return parsed.status === "success" && parsed.data.result.length > 0 ? parsed.data.result : undefined;
      });
      const final = result.find((r) => r.metric.status === "final");
      expect(final?.metric.job).toBe("scoot");
      expect(final?.metric.instance).toBe(`127.0.0.1:${metricsPort}`);
      expect(Number(final?.value[1])).toBeGreaterThanOrEqual(1);
      const up = JSON.parse((await get(`http://127.0.0.1:${port}/api/v1/query?query=up`))!) as {
        data: { result: { value: [number, string] }[] };
      };
      expect(up.data.result[0]?.value[1]).toBe("1");
    } finally {
      const exited = new Promise((r) => prom.once("exit", r));
      prom.kill("SIGTERM");
      await exited;
    }
  }, 90_000);
});
