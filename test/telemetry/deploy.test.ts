/**
 * The deployment files under deploy/ (docs/fleet.md): the systemd units pass
 * `systemd-analyze verify` where it can run, and the Kubernetes and Collector examples parse
 * and say what the docs promise.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { REPO_ROOT, removeDir, tempDir } from "../helpers/cli.js";

const DEPLOY = path.join(REPO_ROOT, "deploy");
const ANALYZE = "/usr/bin/systemd-analyze";

/** Whether systemd-analyze runs here at all (it needs no running systemd for `verify`). */
function analyzeProblem(): string | undefined {
  if (!fs.existsSync(ANALYZE)) return `${ANALYZE} is not installed (.ci/run installs systemd)`;
  const r = spawnSync(ANALYZE, ["--version"], { encoding: "utf8" });
  return r.status === 0 ? undefined : `systemd-analyze cannot run here: ${r.stderr.trim()}`;
}
const SKIP = analyzeProblem();
if (SKIP) console.log(`[deploy] systemd-analyze verify skipped: ${SKIP}`);

let dir: string;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => removeDir(dir));

/** Copies a unit (as `name`) with the scoot binary replaced by an executable stand-in. */
function staged(unit: string, name: string): string {
  const bin = path.join(dir, "scoot");
  fs.writeFileSync(bin, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const text = fs.readFileSync(path.join(DEPLOY, "systemd", unit), "utf8").replaceAll("/usr/bin/scoot", bin);
  const out = path.join(dir, name);
  fs.writeFileSync(out, text);
  return out;
}

function verify(...units: string[]) {
  return spawnSync(ANALYZE, ["verify", "--man=no", ...units], { encoding: "utf8" });
}

describe.skipIf(SKIP !== undefined)("systemd units", () => {
  it("the daemon unit verifies cleanly and carries the hardening the docs name", () => {
    const r = verify(staged("scoot-daemon.service", "scoot-daemon.service"));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/Unknown|Failed|Invalid|not executable|ignoring/);
    const unit = fs.readFileSync(path.join(DEPLOY, "systemd", "scoot-daemon.service"), "utf8");
    for (const line of [
      "WorkingDirectory=",
      "User=scoot",
      "ProtectSystem=strict",
      "NoNewPrivileges=yes",
      "ExecStart=/usr/bin/scoot daemon run",
    ])
      expect(unit).toContain(line);
  });

  it("the one-shot job and its timer verify cleanly as an instance", () => {
    const r = verify(
      staged("scoot-job@.service", "scoot-job@nightly.service"),
      staged("scoot-job@.timer", "scoot-job@nightly.timer"),
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/Unknown|Failed|Invalid|not executable|ignoring/);
  });

  it("the control: verify does catch a broken unit", () => {
    const broken = path.join(dir, "broken.service");
    fs.writeFileSync(broken, "[Service]\nExecStart=/nonexistent/scoot daemon run\n");
    expect(verify(broken).status).not.toBe(0);
    const typo = staged("scoot-daemon.service", "typo.service");
    fs.appendFileSync(typo, "ProtectSytem=strict\n");
    expect(verify(typo).stderr).toMatch(/Unknown key/);
  });
});

describe("Kubernetes and Collector examples", () => {
  it("the CronJob runs an unattended goal with the home on a volume and exports to a collector", () => {
    const docs = parseAllDocuments(
      fs.readFileSync(path.join(DEPLOY, "kubernetes", "scoot-cronjob.yaml"), "utf8"),
      // biome-ignore lint/suspicious/noExplicitAny: a parsed manifest, walked by hand
    ).map((d) => d.toJS() as Record<string, any>);
    const cron = docs.find((d) => d.kind === "CronJob")!;
    const pod = cron.spec.jobTemplate.spec.template.spec;
    const c = pod.containers[0];
    const script = c.args.join("\n") as string;
    expect(script).toMatch(/scoot --unattended .*-e /s);
    expect(script).toContain("scoot audit export");
    const homeMount = c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/var/lib/scoot");
    const vol = pod.volumes.find((v: { name: string }) => v.name === homeMount.name);
    expect(vol.persistentVolumeClaim.claimName).toBe("scoot-home");
    expect(c.env.find((e: { name: string }) => e.name === "SCOOT_HOME").value).toBe("/var/lib/scoot");
    const config = docs.find((d) => d.kind === "ConfigMap")!.data["config.toml"] as string;
    expect(config).toMatch(/otlp_endpoint = "http:\/\/otel-collector[^"]*:4318"/);
    expect(config).toContain('value_env = "OTLP_TOKEN"');
    expect(cron.spec.concurrencyPolicy).toBe("Forbid");
  });

  it("the Collector config receives OTLP logs over HTTP on 4318 into a logs pipeline", () => {
    const cfg = parse(fs.readFileSync(path.join(DEPLOY, "otel-collector", "collector.yaml"), "utf8"));
    expect(cfg.receivers.otlp.protocols.http.endpoint).toMatch(/:4318$/);
    expect(cfg.service.pipelines.logs.receivers).toContain("otlp");
    for (const e of cfg.service.pipelines.logs.exporters) expect(cfg.exporters[e]).toBeDefined();
    for (const p of cfg.service.pipelines.logs.processors) expect(cfg.processors[p]).toBeDefined();
  });
});
