/**
 * The hidden set by rule, through the real loop (built CLI, scripted server): the files that
 * Scoot's credential-pointing variables name are refused to file_read in guarded and readonly
 * and absent inside the sandbox, and the secret-named variables do not reach a sandboxed
 * command while ordinary ones do.
 *
 * Everything lives under /var/tmp: the sandbox's private /tmp would hide anything under /tmp
 * anyway, so putting the files there would not test the hiding rules.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli } from "../helpers/cli.js";
import { bwrapWorks } from "../helpers/procs.js";
import {
  type ScriptedServer,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";

const OUTSIDE_ROOT = "/var/tmp";
const BWRAP = bwrapWorks();
if (!BWRAP)
  console.log(
    "sandbox-hidden e2e: sandbox cases skipped, bwrap cannot run here (apt-get install bubblewrap)",
  );

let outside: string;
let home: string;
let userHome: string;
let project: string;
let server: ScriptedServer | undefined;

/** Each pointed file, with the mark it holds; the variables that name them. */
let files: Record<string, string>;
let pointerEnv: Record<string, string>;

beforeEach(() => {
  outside = fs.realpathSync(fs.mkdtempSync(path.join(OUTSIDE_ROOT, "scoot-hidden-")));
  home = path.join(outside, "scoot-home");
  userHome = path.join(outside, "user-home");
  project = path.join(outside, "project");
  fs.mkdirSync(home, { mode: 0o700 });
  for (const d of [userHome, project, "docker", "azure", "gcloud"].map((d) => path.resolve(outside, d)))
    fs.mkdirSync(d, { recursive: true });
  files = {
    [path.join(outside, "gcp.json")]: "gcp key mark 5101",
    [path.join(outside, "kube-a.yaml")]: "kube a mark 5102",
    [path.join(outside, "kube-b.yaml")]: "kube b mark 5103",
    [path.join(outside, "aws-creds")]: "aws creds mark 5104",
    [path.join(outside, "aws-config")]: "aws config mark 5105",
    [path.join(outside, "docker", "config.json")]: "docker auth mark 5106",
    [path.join(outside, "azure", "msal_token_cache.json")]: "azure token mark 5107",
    [path.join(outside, "gcloud", "credentials.db")]: "gcloud creds mark 5108",
    // Inside the project, where readonly reads relative paths: only the rule refuses it there.
    [path.join(project, "ops", "cluster.yaml")]: "in-project kube mark 5109",
  };
  fs.mkdirSync(path.join(project, "ops"));
  for (const [f, mark] of Object.entries(files)) fs.writeFileSync(f, `${mark}\n`, { mode: 0o600 });
  pointerEnv = {
    GOOGLE_APPLICATION_CREDENTIALS: path.join(outside, "gcp.json"),
    KUBECONFIG: [
      path.join(outside, "kube-a.yaml"),
      path.join(outside, "kube-b.yaml"),
      path.join(project, "ops", "cluster.yaml"),
    ].join(":"),
    AWS_SHARED_CREDENTIALS_FILE: path.join(outside, "aws-creds"),
    AWS_CONFIG_FILE: path.join(outside, "aws-config"),
    DOCKER_CONFIG: path.join(outside, "docker"),
    AZURE_CONFIG_DIR: path.join(outside, "azure"),
    CLOUDSDK_CONFIG: path.join(outside, "gcloud"),
  };
  execFileSync("git", ["init", "-q"], { cwd: project });
  fs.writeFileSync(path.join(project, "ops", "other.yaml"), "ordinary ops file\n");
  fs.writeFileSync(path.join(project, "README.md"), "# ordinary\n");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(outside);
});

async function scoot(steps: ScriptItem[], env: Record<string, string>, args: string[]) {
  server = await startScriptedServer([...steps, step("final", "done")]);
  return runCli(["-e", "go", ...args], {
    home,
    cwd: project,
    env: { SCOOT_BACKEND_BASE_URL: server.url, HOME: userHome, ...env },
    timeoutMs: 60_000,
  });
}

/** What the model saw after the n-th (0-based) step: the last message of the next request. */
function seen(n: number): string {
  const body = server!.completions()[n + 1]!.body as { messages: unknown[] };
  return JSON.stringify(body.messages.at(-1));
}

describe("files named by credential-pointing variables", () => {
  it.each(["readonly", "guarded"])("are refused to file_read in %s", async (mode) => {
    const targets = [...Object.keys(files), "ops/cluster.yaml"];
    files["ops/cluster.yaml"] = files[path.join(project, "ops", "cluster.yaml")]!;
    const r = await scoot(
      targets.map((f) => step("file_read", { path: f })),
      pointerEnv,
      ["--policy", mode],
    );
    expect(r.code, r.stderr).toBe(0);
    targets.forEach((f, i) => {
      expect(seen(i), f).not.toContain(files[f]!);
      expect(seen(i), f).toMatch(/denied|refused|secret/i);
    });
  });

  it("an ordinary file beside an in-project pointed one stays readable", async () => {
    const r = await scoot([step("file_read", { path: "ops/other.yaml" })], pointerEnv, [
      "--policy",
      "readonly",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(seen(0)).toContain("ordinary ops file");
  });

  it.skipIf(!BWRAP)("are absent inside the sandbox (bash, real bwrap)", async () => {
    const targets = Object.keys(files);
    const r = await scoot(
      [
        ...targets.map((f) => step("bash", `cat ${f}; echo rc=$?`)),
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax under test, not a template
        step("bash", 'cat "$GOOGLE_APPLICATION_CREDENTIALS" ${KUBECONFIG//:/ } "$DOCKER_CONFIG/config.json"'),
        step("bash", "cat README.md"),
      ],
      pointerEnv,
      ["--policy", "guarded"],
    );
    expect(r.code, r.stderr).toBe(0);
    for (const [i, f] of targets.entries()) expect(seen(i), f).not.toContain(files[f]!);
    for (const mark of Object.values(files)) expect(seen(targets.length)).not.toContain(mark);
    expect(seen(targets.length + 1)).toContain("# ordinary");
  });
});

describe.skipIf(!BWRAP)("secret-named variables in the sandbox's environment", () => {
  const secretVars: Record<string, string> = {
    BW_SESSION: "bwsession-mark-5201",
    OP_SESSION_my: "opsession-mark-5202",
    SSHPASS: "sshpass-mark-5203",
    BORG_PASSPHRASE: "borgphrase-mark-5204",
    AZURE_STORAGE_CONNECTION_STRING:
      "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=acctkey-mark-5205==",
    LDAP_BIND_PW: "ldapbind-mark-5206",
  };
  const ordinary: Record<string, string> = {
    XDG_SESSION_TYPE: "ordinary-session-type-5301",
    SSH_CONNECTION: "10.9.8.7 5302 10.9.8.6 22",
  };
  it("are dropped; ordinary ones (and PWD) are kept", async () => {
    // Only the names under test: the whole environment would be clipped in the observation.
    const names = [...Object.keys(secretVars), ...Object.keys(ordinary), "PWD"].join("|");
    const r = await scoot(
      [step("bash", `env | grep -E '^(${names})=' | sort`)],
      { ...secretVars, ...ordinary },
      ["--policy", "guarded"],
    );
    expect(r.code, r.stderr).toBe(0);
    const out = seen(0);
    for (const [name, value] of Object.entries(secretVars)) {
      expect(out, name).not.toContain(`${name}=`);
      expect(out, name).not.toContain(value);
    }
    for (const [name, value] of Object.entries(ordinary)) expect(out, name).toContain(`${name}=${value}`);
    expect(out).toContain(`PWD=${project}`);
  });
});
