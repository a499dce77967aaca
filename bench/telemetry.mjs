#!/usr/bin/env node
/**
 * Telemetry (docs/telemetry.md "Telemetry and metrics"), interleaved in one run:
 * - `scoot --version` and a trivial run with no [telemetry] section, against the same commands
 *   of a build of main when BENCH_MAIN_CLI names its dist/scoot.cjs (aim: within 10%), else
 *   against this build with [telemetry] configured (the run never touches the collector);
 * - the added cost per run on a host without the daemon: `-e` then `scoot audit export` to a
 *   loopback receiver, against `-e` alone;
 * - the exporter's throughput: events per second of `scoot audit export` to a loopback receiver
 *   that accepts everything, protobuf and JSON; against main's, interleaved, when BENCH_MAIN_CLI
 *   is set (aim: at least 0.90x of it).
 *
 *   npm run build && node bench/telemetry.mjs [runs]
 */
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createAuditLog } from "../dist/store/audit-writer.js";
import { iqr, median, publish, row } from "./lib/report.mjs";
import { startBenchServer } from "./lib/server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "..", "dist", "scoot.cjs");
const MAIN_CLI = process.env.BENCH_MAIN_CLI;
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 15);
const EVENTS = Number(process.env.BENCH_EXPORT_EVENTS ?? 20_000);

function wallAsync(cli, args, env) {
  // spawnSync would block this process and with it the loopback servers: use a child and wait.
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    import("node:child_process").then(({ spawn }) => {
      const c = spawn(process.execPath, [cli, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
      let err = "";
      c.stderr.on("data", (d) => {
        err += d;
      });
      c.on("exit", (code) => {
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}: ${err}`));
        else resolve(ms);
      });
    });
  });
}

async function startReceiver() {
  let events = 0;
  const server = http.createServer((req, res) => {
    req.on("data", () => {});
    req.on("end", () => {
      events += 1;
      res.writeHead(200, { "content-type": String(req.headers["content-type"] ?? "application/json") });
      res.end(String(req.headers["content-type"]).includes("protobuf") ? "" : "{}");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests: () => events,
    close: () => server.close(),
  };
}

function home(name, toml) {
  const h = fs.mkdtempSync(path.join(os.tmpdir(), `scoot-bench-tel-${name}-`));
  fs.writeFileSync(path.join(h, "config.toml"), toml);
  return h;
}

const FINAL = JSON.stringify({ thought: "t", action: "final", action_input: "done" });
const model = await startBenchServer([FINAL]);
const receiver = await startReceiver();
const backend = `[backend]\nbase_url = "${model.url}"\n`;
const plain = home("plain", backend);
const configured = home("on", `${backend}\n[telemetry]\notlp_endpoint = "${receiver.url}"\n`);
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-tel-cwd-"));
const envOf = (h) => ({ ...process.env, SCOOT_HOME: h });

const cases = {
  version: [CLI, ["--version"], envOf(plain)],
  versionBase: [MAIN_CLI ?? CLI, ["--version"], envOf(MAIN_CLI ? plain : configured)],
  run: [CLI, ["-e", "go"], envOf(plain)],
  runBase: [MAIN_CLI ?? CLI, ["-e", "go"], envOf(MAIN_CLI ? plain : configured)],
  runOn: [CLI, ["-e", "go"], envOf(configured)],
  exportOn: [CLI, ["audit", "export"], envOf(configured)],
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
process.chdir(cwd);
for (const [cli, args, env] of Object.values(cases)) await wallAsync(cli, args, env);
for (let i = 0; i < RUNS; i++)
  for (const [k, [cli, args, env]] of Object.entries(cases)) times[k].push(await wallAsync(cli, args, env));
const perRunWithExport = times.runOn.map((t, i) => t + times.exportOn[i]);

// Throughput: EVENTS events written by the real audit writer, then one export.
async function throughput(cli, protocol) {
  const h = home(
    `tp-${protocol.replace("/", "-")}`,
    `[telemetry]\notlp_endpoint = "${receiver.url}"\notlp_protocol = "${protocol}"\n`,
  );
  fs.mkdirSync(path.join(h, "logs"), { recursive: true, mode: 0o700 });
  const log = createAuditLog({
    file: path.join(h, "logs", "audit.jsonl"),
    level: "info",
    toFile: true,
    maxRetained: 8,
    maxFileBytes: 16 * 1024 * 1024,
  });
  for (let i = 0; i < EVENTS; i++)
    log.emit(
      "bench-session",
      i % 3 === 0 ? "tool_call" : "observation",
      `glob {"pattern":"**/*.ts"} ${i} ${"x".repeat(120)}`,
    );
  log.close();
  const ms = await wallAsync(cli, ["audit", "export"], envOf(h));
  fs.rmSync(h, { recursive: true, force: true });
  return (EVENTS / ms) * 1000;
}
const TP_RUNS = Number(process.env.BENCH_TP_RUNS ?? 3);
const tpProto = [];
const tpJson = [];
const tpProtoBase = [];
const tpJsonBase = [];
for (let i = 0; i < TP_RUNS; i++) {
  tpProto.push(await throughput(CLI, "http/protobuf"));
  if (MAIN_CLI) tpProtoBase.push(await throughput(MAIN_CLI, "http/protobuf"));
  tpJson.push(await throughput(CLI, "http/json"));
  if (MAIN_CLI) tpJsonBase.push(await throughput(MAIN_CLI, "http/json"));
}
model.close();
receiver.close();
for (const h of [plain, configured, cwd]) fs.rmSync(h, { recursive: true, force: true });

const vs = MAIN_CLI ? "main, no [telemetry]" : "this build with [telemetry] set";
const ratio = (a, b) => median(a) / median(b);
publish([
  row({
    bench: "telemetry",
    figure: `scoot --version, no [telemetry] (baseline: ${vs})`,
    value: median(times.version),
    valueSpread: iqr(times.version),
    baseline: median(times.versionBase),
    baselineSpread: iqr(times.versionBase),
    unit: "ms",
    ratio: ratio(times.version, times.versionBase),
    aim: "≤ 1.10x",
    met: ratio(times.version, times.versionBase) <= 1.1,
  }),
  row({
    bench: "telemetry",
    figure: `trivial run, no [telemetry] (baseline: ${vs})`,
    value: median(times.run),
    valueSpread: iqr(times.run),
    baseline: median(times.runBase),
    baselineSpread: iqr(times.runBase),
    unit: "ms",
    ratio: ratio(times.run, times.runBase),
    aim: "≤ 1.10x",
    met: ratio(times.run, times.runBase) <= 1.1,
  }),
  row({
    bench: "telemetry",
    figure: "trivial run + scoot audit export (baseline: the run alone, no [telemetry])",
    value: median(perRunWithExport),
    valueSpread: iqr(perRunWithExport),
    baseline: median(times.run),
    baselineSpread: iqr(times.run),
    unit: "ms",
    ratio: median(perRunWithExport) / median(times.run),
    aim: "(informational: the added cost per run without the daemon)",
  }),
  throughputRow("http/protobuf", tpProto, tpProtoBase),
  throughputRow("http/json", tpJson, tpJsonBase),
]);

/** Events per second, beside main's when it was measured (higher is better: the aim is a floor). */
function throughputRow(protocol, mine, base) {
  const withBase = base.length > 0;
  return row({
    bench: "telemetry",
    figure: `exporter throughput, ${protocol}, ${EVENTS} events to loopback${withBase ? " (baseline: main)" : ""}`,
    value: median(mine),
    valueSpread: iqr(mine),
    ...(withBase
      ? {
          baseline: median(base),
          baselineSpread: iqr(base),
          ratio: ratio(mine, base),
          aim: "≥ 0.90x",
          met: ratio(mine, base) >= 0.9,
        }
      : { aim: "(informational)" }),
    unit: "ev/s",
  });
}
