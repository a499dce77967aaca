#!/usr/bin/env node
/**
 * Packages loaded on demand (docs/benchmarks.md "Packages loaded on demand"): this build, whose
 * lazy npm packages are vendored beside the app (dist/vendor/, loaded with kept code), against
 * the same build with dist/vendor/ left out, which imports them from node_modules through
 * Node's ES loader (as every build did before), interleaved in one run:
 * - `scoot acp` until its answer to `initialize` (the ACP SDK);
 * - a run whose one call is `read_graph` of the MCP memory server from npm (the MCP client
 *   SDK; the server's own start and CPU are in both);
 * - `scoot audit export` of one run's events to a loopback OTLP receiver (the exporters).
 * Wall time, and CPU time of the whole process tree (user + system, /usr/bin/time). Each build
 * has its own home, made and warmed (its kept code written) before the timed runs. The copy
 * without the vendored files lives under the repository while the bench runs (its imports
 * resolve node_modules from there) and is removed at the end.
 *
 *   npm run build && node bench/vendored.mjs [runs]
 *   (another Node: /path/to/node bench/vendored.mjs)
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TIME } from "./lib/measure.mjs";
import { publish, ratioRow } from "./lib/report.mjs";
import { scootEnv } from "./lib/scale-fixtures.mjs";
import { startBenchServer } from "./lib/server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 10);
const MEMORY_SERVER = path.join(root, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const FINAL = JSON.stringify({ thought: "done", action: "final", action_input: "done" });
const READ_GRAPH = JSON.stringify({
  thought: "look",
  action: "mcp_call",
  action_input: JSON.stringify({ server: "memory", tool: "read_graph", args: {} }),
});
const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;
if (!fs.existsSync(path.join(root, "dist", "vendor", "map.json"))) {
  console.error("dist/vendor/map.json not found: run npm run build first");
  process.exit(1);
}
if (!TIME) {
  console.error("/usr/bin/time not found: it measures the CPU time");
  process.exit(1);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-vendored-"));
const copy = fs.mkdtempSync(path.join(root, ".bench-vendored-"));
fs.cpSync(path.join(root, "dist"), path.join(copy, "dist"), {
  recursive: true,
  filter: (src) => !src.startsWith(path.join(root, "dist", "vendor")),
});
const builds = {
  vendored: path.join(root, "dist", "scoot.cjs"),
  packages: path.join(copy, "dist", "scoot.cjs"),
};
const model = await startBenchServer([FINAL]);
let exported = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    exported += 1;
    res.writeHead(200, { "content-type": String(req.headers["content-type"] ?? "application/json") });
    res.end(String(req.headers["content-type"]).includes("protobuf") ? "" : "{}");
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const project = path.join(work, "project");
fs.mkdirSync(project);

/** A home per build and case, its config written. */
function home(build, name, toml) {
  const h = path.join(work, `${build}-${name}`);
  fs.mkdirSync(path.join(h, "state"), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(h, "config.toml"), toml);
  return h;
}

const q = JSON.stringify;
const backend = `[backend]\nbase_url = ${q(model.url)}\n`;
const mcp = [
  backend,
  "[[mcp.servers]]",
  'name = "memory"',
  `command = ${q(process.execPath)}`,
  `args = [${q(MEMORY_SERVER)}]`,
  `env = [{ name = "MEMORY_FILE_PATH", value = ${q(path.join(work, "memory.jsonl"))} }]`,
  'allowed_tools = ["read_graph"]',
  "",
].join("\n");
const telemetry = `${backend}\n[telemetry]\notlp_endpoint = "http://127.0.0.1:${receiver.address().port}"\n`;

/** Wall ms (to `until` in its stdout, or to its exit) and CPU ms of the process tree of one run. */
function timed(cli, args, env, { input, until } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(TIME, ["-f", "%U %S", process.execPath, cli, ...args], {
      cwd: project,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let wall;
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (until && wall === undefined && out.includes(until)) {
        wall = performance.now() - t0;
        child.stdin.end();
      }
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => {
      wall ??= performance.now() - t0;
      const [user, sys] = (err.trim().split("\n").at(-1) ?? "").split(" ").map(Number);
      if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}: ${err}`));
      else resolve({ ms: wall, cpuMs: (user + sys) * 1000 });
    });
    if (input) child.stdin.write(input);
    else child.stdin.end();
  });
}

const cases = {
  "`scoot acp` until `initialize` is answered": {
    toml: backend,
    run: (cli, env) => timed(cli, ["acp"], env, { input: INITIALIZE, until: '"result"' }),
  },
  "a run of one `read_graph` call to the MCP memory server": {
    toml: mcp,
    audited: /"kind":"observation","msg":"\{\\n {2}\\"entities\\"[^\n]*"outcome":"ran"/,
    run: (cli, env) => {
      model.reset([READ_GRAPH, FINAL]);
      return timed(cli, ["-e", "read the graph"], env);
    },
  },
  "`scoot audit export` of one run to a loopback OTLP receiver": {
    toml: telemetry,
    run: async (cli, env) => {
      model.reset([FINAL]);
      await timed(cli, ["-e", "say done"], env);
      return timed(cli, ["audit", "export"], env);
    },
  },
};

const samples = {};
try {
  for (const [name, c] of Object.entries(cases))
    for (const [build, cli] of Object.entries(builds)) {
      const env = scootEnv(home(build, name.replace(/\W+/g, "-"), c.toml));
      // As bench/startup.mjs: on Node 20 extra certificates cost every process 40 ms of CPU.
      delete env.NODE_OPTIONS;
      delete env.NODE_EXTRA_CA_CERTS;
      // Two warm-up runs: the first may write the app's kept code, the second the package's.
      await c.run(cli, env);
      await c.run(cli, env);
      // Each case did its work: a refused or failed call would measure nothing of the package.
      const log = path.join(env.SCOOT_HOME, "logs", "audit.jsonl");
      const audit = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
      if (c.audited && !c.audited.test(audit))
        throw new Error(`${name} (${build}): ${c.audited} not in ${log}`);
      if (/"kind":"(policy_deny|system_error)"|"outcome":"(denied|failed)"/.test(audit))
        throw new Error(
          `${name} (${build}): a call was refused or failed; see ${env.SCOOT_HOME}/logs/audit.jsonl`,
        );
      samples[`${name}/${build}`] = { env, ms: [], cpuMs: [] };
    }
  for (let i = 0; i < RUNS; i++)
    for (const [name, c] of Object.entries(cases))
      for (const [build, cli] of Object.entries(builds)) {
        const s = samples[`${name}/${build}`];
        const r = await c.run(cli, s.env);
        s.ms.push(r.ms);
        s.cpuMs.push(r.cpuMs);
      }
} finally {
  fs.rmSync(copy, { recursive: true, force: true });
  await model.close();
  receiver.close();
}
if (exported === 0) throw new Error("the receiver got no export: the telemetry case measured nothing");

const rows = [];
for (const name of Object.keys(cases)) {
  const v = samples[`${name}/vendored`];
  const p = samples[`${name}/packages`];
  const bench = `vendored.mjs (Node ${process.versions.node})`;
  const aim = "below the packages from node_modules";
  rows.push(
    ratioRow({ bench, figure: `${name}, wall`, values: v.ms, baselines: p.ms, unit: "ms", aim, limit: 1 }),
  );
  rows.push(
    ratioRow({
      bench,
      figure: `${name}, CPU`,
      values: v.cpuMs,
      baselines: p.cpuMs,
      unit: "ms",
      aim,
      limit: 1,
    }),
  );
}
publish(rows);
fs.rmSync(work, { recursive: true, force: true });
