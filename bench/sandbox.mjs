#!/usr/bin/env node
/**
 * Sandbox cost (issue 11): median wall time of one trivial `bash` tool call (`true`) under
 * bubblewrap (guarded, tools.sandbox = "bwrap") against the same call unsandboxed
 * (tools.sandbox = "off"), interleaved in one run. Aim: the sandbox adds at most 15 ms per
 * call. The first sandboxed call pays the once-per-process probe; it is run before timing.
 * The sandboxed call is the whole current one: /proc/sys read-only, runtime directories
 * hidden, the seccomp filter written to fd 3, inherited descriptors closed; the run stops
 * if the probe says seccomp is off, so the row always includes it.
 *
 *   npx tsc -p tsconfig.build.json && node bench/sandbox.mjs [runs]
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "..", "dist");
const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 41);
/** The aim: at most this many milliseconds added per call. */
const AIM_ADDED_MS = 15;

if (!fs.existsSync(path.join(dist, "tools", "bash.js"))) {
  console.error("dist/tools/bash.js not found: build first with `npm run build`");
  process.exit(1);
}
const probe = spawnSync("/usr/bin/bwrap", ["--ro-bind", "/", "/", "--unshare-all", "true"], {
  stdio: "ignore",
});
if (probe.status !== 0) {
  console.error("bench/sandbox.mjs: skipped, bwrap cannot run here (apt-get install bubblewrap)");
  process.exit(0);
}

const { bashTool } = await import(path.join(dist, "tools", "bash.js"));
const { defaultConfig } = await import(path.join(dist, "config", "schema.js"));

const project = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-sandbox-"));
const scootHome = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-sandbox-home-"));

function ctx(sandbox) {
  const config = defaultConfig();
  config.tools.sandbox = sandbox;
  return {
    cwd: project,
    config,
    mode: "guarded",
    signal: new AbortController().signal,
    timeoutMs: 30_000,
    gate: () => ({ allow: true }),
    childEnv: { ...process.env },
    services: { sandbox: { scootHome, tokenFile: path.join(scootHome, "token"), unattended: false } },
  };
}

async function call(sandbox) {
  const c = ctx(sandbox);
  const t0 = process.hrtime.bigint();
  const obs = await bashTool.run("true", c);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!obs.startsWith("exit code: 0")) throw new Error(`bash (sandbox ${sandbox}) failed: ${obs}`);
  return ms;
}

/** Context: bwrap's own cost, outside Scoot (same isolation flags, no per-call binds). */
const RAW_BWRAP = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
const RAW_FLAGS = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
function raw(file, args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(file, args, { stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${file} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const { probeSandbox } = await import(path.join(dist, "sandbox", "probe.js"));
const probed = await probeSandbox(undefined);
if (!probed.ok || !probed.seccomp.ok) {
  console.error(
    `bench/sandbox.mjs: the sandbox runs without seccomp here: ${probed.ok ? probed.seccomp.reason : probed.reason}`,
  );
  process.exit(1);
}

const times = { bwrap: [], off: [], rawBwrap: [], rawSh: [] };
await call("bwrap");
await call("off");
for (let i = 0; i < RUNS; i++) {
  times.bwrap.push(await call("bwrap"));
  times.off.push(await call("off"));
  times.rawBwrap.push(raw(probed.bwrap, [...RAW_BWRAP, ...RAW_FLAGS, "/bin/sh", "-c", "true"]));
  times.rawSh.push(raw("/bin/sh", ["-c", "true"]));
}
fs.rmSync(project, { recursive: true, force: true });
fs.rmSync(scootHome, { recursive: true, force: true });

const on = median(times.bwrap);
const off = median(times.off);
publish([
  row({
    bench: "sandbox",
    figure: `bash \`true\` under bwrap (seccomp on) vs unsandboxed (added ${(on - off).toFixed(1)} ms)`,
    value: on,
    valueSpread: iqr(times.bwrap),
    baseline: off,
    baselineSpread: iqr(times.off),
    unit: "ms",
    ratio: on / off,
    aim: `≤ +${AIM_ADDED_MS} ms per call`,
    met: on - off <= AIM_ADDED_MS,
  }),
  row({
    bench: "sandbox",
    figure: "context: bare `bwrap … /bin/sh -c true` vs `/bin/sh -c true` (no Scoot)",
    value: median(times.rawBwrap),
    valueSpread: iqr(times.rawBwrap),
    baseline: median(times.rawSh),
    baselineSpread: iqr(times.rawSh),
    unit: "ms",
    ratio: median(times.rawBwrap) / median(times.rawSh),
    aim: "(context)",
    met: undefined,
  }),
]);
