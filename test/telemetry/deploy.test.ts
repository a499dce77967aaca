/**
 * The deployment files under deploy/ (docs/fleet.md): the systemd units pass
 * `systemd-analyze verify` where it can run, and the job unit ships its events whether the job
 * succeeded or failed; the Kubernetes CronJob passes the Pod Security "restricted" standard with
 * resource requests and limits; the Collector example says what the docs promise.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { REPO_ROOT, removeDir, runCli, tempDir } from "../helpers/cli.js";

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

/** A unit file's `[Section]` → key → values (a key may repeat; comments and blank lines dropped). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = new Map();
      sections.set(header[1]!, current);
      continue;
    }
    const eq = line.indexOf("=");
    if (!current || eq < 0) throw new Error(`not a unit line: ${line}`);
    const key = line.slice(0, eq).trim();
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return sections;
}

/**
 * Which of a service's commands run after its main command failed (systemd.service(5)):
 * `ExecStopPost=` runs once the service stopped, whatever the result; `ExecStartPost=` and
 * `ExecStop=` only after a successful start; `OnFailure=` starts other units (checked there).
 */
function commandsAfterFailure(service: Map<string, string[]>): string[] {
  return service.get("ExecStopPost") ?? [];
}

const EXPORT = /^-?\/usr\/bin\/scoot audit export$/;

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

describe("the job unit ships its events whether the job succeeded or not", () => {
  it("audit export is an ExecStopPost (runs after a failed job too), ignoring its own failure", () => {
    const unit = parseUnit(fs.readFileSync(path.join(DEPLOY, "systemd", "scoot-job@.service"), "utf8"));
    const service = unit.get("Service")!;
    expect(service.get("Type")).toEqual(["oneshot"]);
    const after = commandsAfterFailure(service);
    expect(after.filter((c) => EXPORT.test(c))).toHaveLength(1);
    // `-`: a collector that is down does not fail the unit (the cursor keeps the place).
    expect(after.find((c) => EXPORT.test(c))!.startsWith("-")).toBe(true);
    // And the export is not also run after a success only (it would ship twice).
    expect(service.get("ExecStartPost") ?? []).toEqual([]);
  });

  it("the control: the old ExecStartPost unit ships nothing after a failed job", () => {
    const old = fs
      .readFileSync(path.join(DEPLOY, "systemd", "scoot-job@.service"), "utf8")
      .replace("ExecStopPost=", "ExecStartPost=");
    const service = parseUnit(old).get("Service")!;
    expect(commandsAfterFailure(service).filter((c) => EXPORT.test(c))).toHaveLength(0);
  });
});

// biome-ignore lint/suspicious/noExplicitAny: a parsed manifest, walked by hand
type Manifest = Record<string, any>;

/** The volume types the Pod Security "restricted" profile allows. */
const RESTRICTED_VOLUMES = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
];

/**
 * Every rule of the Pod Security Standards' "restricted" profile (which includes "baseline")
 * that a pod spec can break, and each container's resource requests and limits: the list of
 * violations, empty when the pod passes. https://kubernetes.io/docs/concepts/security/pod-security-standards/
 */
function restrictedViolations(pod: Manifest): string[] {
  const out: string[] = [];
  const podSc: Manifest = pod.securityContext ?? {};
  for (const host of ["hostNetwork", "hostPID", "hostIPC"]) if (pod[host] === true) out.push(`pod: ${host}`);
  for (const v of pod.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== "name");
    if (!type || !RESTRICTED_VOLUMES.includes(type)) out.push(`volume ${v.name}: type ${type}`);
  }
  if (podSc.sysctls?.length) out.push("pod: sysctls");
  if (podSc.runAsUser === 0) out.push("pod: runAsUser 0");
  const podSeccomp = podSc.seccompProfile?.type;
  if (podSeccomp !== undefined && !["RuntimeDefault", "Localhost"].includes(podSeccomp))
    out.push(`pod: seccompProfile ${podSeccomp}`);
  const containers: Manifest[] = [
    ...(pod.containers ?? []),
    ...(pod.initContainers ?? []),
    ...(pod.ephemeralContainers ?? []),
  ];
  if (containers.length === 0) out.push("pod: no containers");
  for (const c of containers) {
    const sc: Manifest = c.securityContext ?? {};
    const at = `container ${c.name}`;
    if (sc.privileged === true) out.push(`${at}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${at}: allowPrivilegeEscalation must be false`);
    if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) out.push(`${at}: runAsNonRoot must be true`);
    if ((sc.runAsUser ?? podSc.runAsUser) === 0) out.push(`${at}: runAsUser 0`);
    const seccomp = sc.seccompProfile?.type ?? podSeccomp;
    if (!["RuntimeDefault", "Localhost"].includes(seccomp))
      out.push(`${at}: seccompProfile must be RuntimeDefault or Localhost (is ${seccomp})`);
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) out.push(`${at}: capabilities.drop must include ALL`);
    for (const cap of sc.capabilities?.add ?? [])
      if (cap !== "NET_BIND_SERVICE") out.push(`${at}: capabilities.add ${cap}`);
    if (sc.procMount !== undefined && sc.procMount !== "Default")
      out.push(`${at}: procMount ${sc.procMount}`);
    for (const p of c.ports ?? []) if (p.hostPort) out.push(`${at}: hostPort ${p.hostPort}`);
    for (const kind of ["requests", "limits"])
      for (const r of ["cpu", "memory"])
        if (c.resources?.[kind]?.[r] === undefined) out.push(`${at}: resources.${kind}.${r} missing`);
  }
  return out;
}

function cronJobPod(text: string): Manifest {
  const docs = parseAllDocuments(text).map((d) => d.toJS() as Manifest);
  return docs.find((d) => d.kind === "CronJob")!.spec.jobTemplate.spec.template.spec;
}

describe('the CronJob passes Pod Security "restricted"', () => {
  const text = fs.readFileSync(path.join(DEPLOY, "kubernetes", "scoot-cronjob.yaml"), "utf8");

  it("every container: non-root, RuntimeDefault seccomp, no escalation, ALL capabilities dropped, requests and limits", () => {
    const pod = cronJobPod(text);
    expect(restrictedViolations(pod)).toEqual([]);
    for (const c of pod.containers) {
      expect(c.securityContext.seccompProfile ?? pod.securityContext.seccompProfile).toEqual({
        type: "RuntimeDefault",
      });
      expect(c.securityContext.runAsNonRoot ?? pod.securityContext.runAsNonRoot).toBe(true);
      expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
      expect(c.securityContext.capabilities.drop).toEqual(["ALL"]);
    }
  });

  it.each([
    [
      "no seccompProfile",
      (p: Manifest) => {
        delete p.securityContext.seccompProfile;
        for (const c of p.containers) delete c.securityContext.seccompProfile;
      },
      /seccompProfile must be RuntimeDefault/,
    ],
    [
      "Unconfined",
      (p: Manifest) => {
        p.securityContext.seccompProfile = { type: "Unconfined" };
      },
      /pod: seccompProfile Unconfined/,
    ],
    [
      "escalation allowed",
      (p: Manifest) => {
        p.containers[0].securityContext.allowPrivilegeEscalation = true;
      },
      /allowPrivilegeEscalation/,
    ],
    [
      "root",
      (p: Manifest) => {
        p.securityContext.runAsNonRoot = false;
        delete p.containers[0].securityContext.runAsNonRoot;
      },
      /runAsNonRoot/,
    ],
    [
      "a capability kept",
      (p: Manifest) => {
        p.containers[0].securityContext.capabilities = { drop: ["NET_RAW"], add: ["SYS_ADMIN"] };
      },
      /capabilities/,
    ],
    [
      "a hostPath volume",
      (p: Manifest) => {
        p.volumes.push({ name: "host", hostPath: { path: "/" } });
      },
      /volume host: type hostPath/,
    ],
    [
      "no limits",
      (p: Manifest) => {
        delete p.containers[0].resources.limits;
      },
      /resources\.limits\.cpu missing/,
    ],
    [
      "a privileged init container",
      (p: Manifest) => {
        p.initContainers = [{ name: "init", securityContext: { privileged: true } }];
      },
      /container init: privileged/,
    ],
  ])("the control: %s is caught", (_name, spoil, message) => {
    const pod = cronJobPod(text);
    spoil(pod);
    expect(restrictedViolations(pod).join("\n")).toMatch(message);
  });
});

describe("the CronJob's script", () => {
  it("runs the export after a failed goal too, and ends with the goal's status", () => {
    const pod = cronJobPod(fs.readFileSync(path.join(DEPLOY, "kubernetes", "scoot-cronjob.yaml"), "utf8"));
    const script = (pod.containers[0].args as string[]).join("\n");
    // A stand-in scoot on PATH: the goal fails (exit 7), the export succeeds; each call is logged.
    const bin = path.join(dir, "bin");
    fs.mkdirSync(bin);
    const calls = path.join(dir, "calls.log");
    fs.writeFileSync(
      path.join(bin, "scoot"),
      `#!/bin/sh\necho "$*" >> "${calls}"\ncase "$1" in --unattended) exit 7;; esac\nexit 0\n`,
      { mode: 0o755 },
    );
    const r = spawnSync("/bin/sh", ["-c", script], {
      env: { PATH: `${bin}:/usr/bin:/bin`, SCOOT_HOME: dir },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(7);
    const lines = fs.readFileSync(calls, "utf8").trim().split("\n");
    expect(lines[0]).toMatch(/^--unattended /);
    expect(lines[1]).toBe("audit export");
  });
});

describe("the CronJob's goal", () => {
  it("asks only for what its readonly mode allows: relative reads in the project, no shell", async () => {
    const text = fs.readFileSync(path.join(DEPLOY, "kubernetes", "scoot-cronjob.yaml"), "utf8");
    // biome-ignore lint/suspicious/noExplicitAny: a parsed manifest, walked by hand
    const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, any>);
    const pod = cronJobPod(text);
    const c = pod.containers[0];
    const script = (c.args as string[]).join("\n");
    const goal = /-e "([^"]+)"/.exec(script)?.[1];
    expect(goal, script).toBeDefined();
    // The mode the job runs in, from the shipped config: the --unattended clamp gives readonly.
    const home = path.join(dir, "home");
    fs.mkdirSync(home, { mode: 0o700 });
    fs.writeFileSync(
      path.join(home, "config.toml"),
      docs.find((d) => d.kind === "ConfigMap")!.data["config.toml"] as string,
    );
    const project = path.join(dir, "work");
    fs.mkdirSync(path.join(project, "logs"), { recursive: true });
    fs.writeFileSync(path.join(project, "logs", "app.log"), "ERROR one\n");
    const check = (action: string, input: unknown) =>
      runCli(["policy", "check", "--unattended", action, JSON.stringify(input)], { home, cwd: project });
    // Every path the goal names is relative (readonly refuses absolute ones) and readable there.
    const named = goal!.split(/\s+/).filter((w) => w.includes("/"));
    expect(named.length, goal).toBeGreaterThan(0);
    for (const p of named) {
      expect(p.startsWith("/") || p.startsWith("~"), `${p} in the goal is absolute`).toBe(false);
      const dirName = p.replace(/\/+$/, "");
      for (const [action, input] of [
        ["glob", { pattern: `${dirName}/**/*` }],
        ["grep", { pattern: "ERROR", path: dirName }],
        ["file_read", { path: `${dirName}/app.log` }],
      ] as const) {
        const r = await check(action, input);
        expect(r.stdout, `${action} ${JSON.stringify(input)}: ${r.stderr}`).toContain("mode=readonly");
        expect(r.stdout, `${action} ${JSON.stringify(input)}`).toContain("decision=allow");
      }
    }
    // What the goal used to ask for is what readonly refuses: an absolute path, a shell command.
    const absolute = await check("file_read", { path: "/work/logs/app.log" });
    expect(absolute.stdout).toContain("decision=deny");
    const shell = await check("bash", { command: "find logs -mmin -60" });
    expect(shell.stdout).toContain("decision=deny");
    // So the goal asks for nothing that needs the shell: no time window to compute.
    expect(goal).not.toMatch(/since|last hour|new errors/i);
    // The logs it reads are mounted at logs/ in the project, read-only.
    const logs = c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/work/logs");
    expect(logs?.readOnly).toBe(true);
    expect(c.workingDir).toBe("/work");
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
