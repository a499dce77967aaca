/**
 * An unconfigured Scoot loads none of OpenTelemetry or prom-client (docs/telemetry.md "Telemetry and
 * metrics"): the real built CLI runs with a probe that lists, at exit, every CommonJS module
 * the process loaded. The configured commands are the control: the same probe sees the
 * exporter there, so an empty list is not the probe failing.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, REPO_ROOT, runCli } from "../helpers/cli.js";
import { freePort } from "../helpers/otlp-receiver.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const PROBE = path.join(REPO_ROOT, "test", "helpers", "module-probe.cjs");
/** The packages, from node_modules or as the build vendored them (dist/vendor/, scripts/bundle.mjs). */
const HEAVY =
  /[\\/]node_modules[\\/](@opentelemetry|prom-client)[\\/]|[\\/]vendor[\\/](telemetry|metrics)\.cjs$/;
const VENDORED_TELEMETRY = /[\\/]dist[\\/]vendor[\\/]telemetry\.cjs$/;
const VENDORED_METRICS = /[\\/]dist[\\/]vendor[\\/]metrics\.cjs$/;
/** Any of the packages read from node_modules: the build vendors them all. */
const FROM_NODE_MODULES = /[\\/]node_modules[\\/](@opentelemetry|prom-client)[\\/]/;

const scene = useScene({ home: "scoot-test-", nested: true });

/** The modules one CLI invocation loaded. */
async function loaded(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ modules: string[]; code: number | null; stderr: string }> {
  const out = path.join(scene.base, `probe-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`);
  const r = await runCli(args, {
    home: scene.home,
    cwd: scene.base,
    env: { NODE_OPTIONS: `--require ${PROBE}`, SCOOT_TEST_MODULE_PROBE: out, ...env },
    timeoutMs: 60_000,
  });
  const modules = fs.existsSync(out) ? fs.readFileSync(out, "utf8").split("\n").filter(Boolean) : [];
  return { modules, code: r.code, stderr: r.stderr };
}

describe("telemetry is loaded only when configured", () => {
  it("scoot --version, config, a trivial run and a daemon without telemetry load none of it", async () => {
    expect(fs.existsSync(CLI)).toBe(true);
    const model = await startScriptedServer([step("final", "done")]);
    try {
      fs.writeFileSync(
        path.join(scene.home, "config.toml"),
        `[backend]\nbase_url = "${model.url}"\n\n[schedule]\nenabled = true\npoll_ms = 10\n`,
      );
      const runs = [
        await loaded(["--version"]),
        await loaded(["config"]),
        await loaded(["-e", "say done"]),
        await loaded(["daemon", "run", "--ticks", "1"]),
      ];
      for (const r of runs) {
        expect(r.code, r.stderr).toBe(0);
        expect(r.modules.filter((m) => HEAVY.test(m))).toEqual([]);
      }
      // The run and the daemon did load CommonJS (smol-toml for the config): the probe saw them.
      expect(runs[2]!.modules.some((m) => m.includes("smol-toml"))).toBe(true);
    } finally {
      await model.close();
    }
  });

  it("the control: audit export loads the OTLP transport and serializers, a metrics daemon prom-client, each vendored", async () => {
    const port = await freePort();
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      `[telemetry]\notlp_endpoint = "http://127.0.0.1:${port}"\n\n[schedule]\nenabled = true\npoll_ms = 10\n`,
    );
    const exp = await loaded(["audit", "export"]);
    expect(exp.code, exp.stderr).toBe(0);
    // The OTLP transport and serializers, as the build vendored them, and nothing of metrics.
    expect(exp.modules.filter((m) => VENDORED_TELEMETRY.test(m))).toHaveLength(1);
    expect(exp.modules.filter((m) => VENDORED_METRICS.test(m))).toEqual([]);
    expect(exp.modules.filter((m) => FROM_NODE_MODULES.test(m))).toEqual([]);

    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      `[schedule]\nenabled = true\npoll_ms = 10\n\n[daemon]\nmetrics_listen = "${await freePort()}"\n`,
    );
    const d = await loaded(["daemon", "run", "--ticks", "1"]);
    expect(d.code, d.stderr).toBe(0);
    expect(d.modules.filter((m) => VENDORED_METRICS.test(m))).toHaveLength(1);
    expect(d.modules.filter((m) => VENDORED_TELEMETRY.test(m))).toEqual([]);
    expect(d.modules.filter((m) => FROM_NODE_MODULES.test(m))).toEqual([]);
  });

  it("the bundle imports them only dynamically", () => {
    const bundle = fs.readFileSync(path.join(REPO_ROOT, "dist", "scoot-app.cjs"), "utf8");
    const staticImports = bundle.split("\n").filter((l) => /^import .*(@opentelemetry|prom-client)/.test(l));
    expect(staticImports).toEqual([]);
    expect(bundle).toContain('__scootImport("prom-client")');
    expect(fs.readFileSync(path.join(REPO_ROOT, "dist", "scoot.cjs"), "utf8")).not.toMatch(
      /opentelemetry|prom-client/,
    );
  });
});
