/**
 * The hidden set grows by rule: the files that credential-pointing variables name, the words
 * of the token command after the shell's own expansions, the secret-named variables, and the
 * passwords inside connection strings. Each table is what an attacker would try first: a
 * credential reached by a name the old lists did not spell out.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { tokenCommandFiles } from "../../src/config/token-command-files.js";
import { REDACTED, redact, registerSecretEnv, resetSecretsForTest } from "../../src/core/redact.js";
import { safeCut } from "../../src/core/stream-redact.js";
import { judgeReadPath } from "../../src/policy/paths.js";
import {
  CREDENTIAL_POINTERS,
  CREDENTIAL_STORES,
  credentialPointerPaths,
} from "../../src/policy/protected-places.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import { scrubEnv } from "../../src/sandbox/env.js";

let tmp: string;
let project: string;
let scootHome: string;
let userHome: string;
let pointerEnv: Record<string, string>;
let pointed: string[];

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-hidden-set-")));
  project = path.join(tmp, "project");
  scootHome = path.join(tmp, "scoot-home");
  userHome = path.join(tmp, "user-home");
  for (const d of [project, scootHome, userHome, path.join(tmp, "docker"), path.join(tmp, "azure")])
    fs.mkdirSync(d, { recursive: true });
  fs.mkdirSync(path.join(tmp, "gcloud"));
  for (const f of ["gcp.json", "kube-a.yaml", "kube-b.yaml", "aws-creds", "aws-config"])
    fs.writeFileSync(path.join(tmp, f), "secret\n");
  fs.writeFileSync(path.join(tmp, "docker", "config.json"), "{}\n");
  fs.writeFileSync(path.join(tmp, "azure", "accessTokens.json"), "[]\n");
  fs.writeFileSync(path.join(tmp, "gcloud", "credentials.db"), "x\n");
  fs.writeFileSync(path.join(project, "ordinary.txt"), "o\n");
  pointerEnv = {
    GOOGLE_APPLICATION_CREDENTIALS: path.join(tmp, "gcp.json"),
    KUBECONFIG: `${path.join(tmp, "kube-a.yaml")}:${path.join(tmp, "kube-b.yaml")}`,
    AWS_SHARED_CREDENTIALS_FILE: path.join(tmp, "aws-creds"),
    AWS_CONFIG_FILE: path.join(tmp, "aws-config"),
    DOCKER_CONFIG: path.join(tmp, "docker"),
    AZURE_CONFIG_DIR: path.join(tmp, "azure"),
    CLOUDSDK_CONFIG: path.join(tmp, "gcloud"),
  };
  pointed = [
    path.join(tmp, "gcp.json"),
    path.join(tmp, "kube-a.yaml"),
    path.join(tmp, "kube-b.yaml"),
    path.join(tmp, "aws-creds"),
    path.join(tmp, "aws-config"),
    path.join(tmp, "docker", "config.json"),
    path.join(tmp, "azure", "accessTokens.json"),
    path.join(tmp, "gcloud", "credentials.db"),
  ];
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function settings(mode: "readonly" | "guarded", env: NodeJS.ProcessEnv) {
  return buildGateSettings(defaultConfig(), project, { mode, scootHome, env });
}

describe("files named by credential-pointing variables", () => {
  it("each is refused to file_read in guarded and readonly", () => {
    for (const mode of ["readonly", "guarded"] as const) {
      const s = settings(mode, pointerEnv);
      for (const p of pointed) {
        const r = judgeReadPath(p, s);
        expect(r.allow, `${mode} ${p}`).toBe(false);
      }
      expect(judgeReadPath("ordinary.txt", s).allow).toBe(true);
    }
  });
  it("without the variables the same files are ordinary (the rule, not the place, hides them)", () => {
    const s = settings("guarded", {});
    expect(judgeReadPath(path.join(tmp, "gcp.json"), s).allow).toBe(true);
  });
  it("KUBECONFIG is a list; empty entries and relative ones resolve like kubectl's", () => {
    expect(credentialPointerPaths({ KUBECONFIG: "::/a/k1:/b/k2:" }, "/p")).toEqual(["/a/k1", "/b/k2"]);
    expect(credentialPointerPaths({ GOOGLE_APPLICATION_CREDENTIALS: "keys/sa.json" }, "/p")).toEqual([
      "/p/keys/sa.json",
    ]);
  });
  it("a pointer at /, the user's home or the project itself is not hidden (it would hide the work)", () => {
    const env = { DOCKER_CONFIG: "/", AZURE_CONFIG_DIR: userHome, CLOUDSDK_CONFIG: tmp };
    expect(credentialPointerPaths(env, project, { userHome, projectRoot: project })).toEqual([]);
  });
  it("every table row names a variable once and says what it is", () => {
    const names = CREDENTIAL_POINTERS.map((p) => p.variable);
    expect(new Set(names).size).toBe(names.length);
    for (const v of Object.keys(pointerEnv)) expect(names).toContain(v);
    for (const p of CREDENTIAL_POINTERS) expect(p.what).not.toBe("");
  });
});

describe("the listed stores are in the table", () => {
  it.each([".cache/huggingface/token", ".config/op", ".config/github-copilot"])("%s", (p) => {
    expect(CREDENTIAL_STORES.map((e) => e.path)).toContain(p);
  });
});

describe("the token command's words, expanded as its shell would", () => {
  let x: string;
  beforeAll(() => {
    x = path.join(userHome, "x");
    fs.writeFileSync(x, "t\n");
    fs.mkdirSync(path.join(userHome, ".config"), { recursive: true });
    fs.writeFileSync(path.join(userHome, ".config", "tok"), "t\n");
    fs.mkdirSync(path.join(tmp, "xdg-data"), { recursive: true });
    fs.writeFileSync(path.join(tmp, "xdg-data", "tok"), "t\n");
    fs.mkdirSync(path.join(scootHome, "rel"), { recursive: true });
    fs.writeFileSync(path.join(scootHome, "rel", "x"), "t\n");
    fs.mkdirSync(path.join(project, "prel"), { recursive: true });
    fs.writeFileSync(path.join(project, "prel", "x"), "t\n");
  });
  const where = () => ({
    env: { XDG_DATA_HOME: path.join(tmp, "xdg-data") },
    scootHome,
    projectRoot: project,
  });
  it.each([
    ["cat $HOME/x", () => [path.join(userHome, "x")]],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax under test, not a template
    ["cat ${HOME}/x", () => [path.join(userHome, "x")]],
    ['cat "$HOME/x"', () => [path.join(userHome, "x")]],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax under test, not a template
    ["cat '${HOME}/x' | tr -d '\\n'", () => [path.join(userHome, "x")]],
    ["tr -d x <$HOME/x", () => [path.join(userHome, "x")]],
    ["tr -d x < ~/x", () => [path.join(userHome, "x")]],
    ['cat "$XDG_CONFIG_HOME/tok"', () => [path.join(userHome, ".config", "tok")]],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax under test, not a template
    ["cat ${XDG_DATA_HOME}/tok", () => [path.join(tmp, "xdg-data", "tok")]],
    ["cat rel/x", () => [path.join(scootHome, "rel", "x")]],
    ["cat ./prel/x", () => [path.join(project, "prel", "x")]],
    ["TOKEN_FILE=$HOME/x sh -c 'cat $TOKEN_FILE'", () => [path.join(userHome, "x")]],
  ])("%s", (cmd, want) => {
    expect(tokenCommandFiles(cmd, userHome, where())).toEqual(want());
  });
  it("an unset XDG variable takes its default; an unknown variable is not guessed", () => {
    expect(tokenCommandFiles("cat $XDG_CONFIG_HOME/tok", userHome, { env: {} })).toEqual([
      path.join(userHome, ".config", "tok"),
    ]);
    expect(tokenCommandFiles("cat $NOPE/x", userHome, { env: {} })).toEqual([]);
  });
});

describe("the environment scrub's name words", () => {
  const dropped: [string, string][] = [
    ["BW_SESSION", "abcdefghij=="],
    ["OP_SESSION_my", "abcdefghij"],
    ["OP_SESSION_team_account", "abcdefghij"],
    ["SSHPASS", "hunter2"],
    ["BORG_PASSPHRASE", "correct horse"],
    ["GPG_PASSPHRASE", "correct horse"],
    ["LDAP_BIND_PW", "hunter2"],
    ["AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=https;AccountKey=abc=="],
    ["SQL_CONNECTION", "Server=db;Password=p"],
    ["SESSION_MANAGER", "local/host:@/tmp/.ICE-unix/1,unix/host:/tmp/.ICE-unix/1"],
    ["DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"],
  ];
  const kept: [string, string][] = [
    ["PWD", "/p"],
    ["OLDPWD", "/q"],
    ["XDG_SESSION_TYPE", "wayland"],
    ["XDG_SESSION_CLASS", "user"],
    ["XDG_SESSION_DESKTOP", "gnome"],
    ["DESKTOP_SESSION", "gnome"],
    ["SSH_CONNECTION", "10.0.0.1 5000 10.0.0.2 22"],
    ["PWNED_COUNT", "1"],
    ["SESSIONS_DIR", "/x"],
  ];
  it.each(dropped)("drops %s", (name, value) => {
    expect(scrubEnv({ [name]: value }, { passthrough: [] }).dropped).toEqual([name]);
  });
  it.each(kept)("keeps %s", (name, value) => {
    expect(scrubEnv({ [name]: value }, { passthrough: [] }).env[name]).toBe(value);
  });
});

describe("the redactor", () => {
  beforeEach(() => resetSecretsForTest());
  it.each([
    [
      "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4==;EndpointSuffix=core.windows.net",
      `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${REDACTED};EndpointSuffix=core.windows.net`,
    ],
    [
      "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=c2VjcmV0a2V5dmFsdWU=",
      `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=${REDACTED}`,
    ],
    [
      "Server=db.local;Database=app;User Id=sa;Password=Hunter2Hunter2;",
      `Server=db.local;Database=app;User Id=sa;${"Password="}${REDACTED};`,
    ],
    ["Password=s3cr3tvalue;Server=db", `Password=${REDACTED};Server=db`],
    ["host=db; uid=app; pwd=s3cr3tvalue; database=x", `host=db; uid=app; pwd=${REDACTED}; database=x`],
    [
      "Endpoint=https://cfg.io;Id=abc;Secret=c2VjcmV0dmFsdWU=",
      `Endpoint=https://cfg.io;Id=abc;Secret=${REDACTED}`,
    ],
    [
      "TenantId=t;ClientId=c;ClientSecret=Zz9~secretvalue;",
      `TenantId=t;ClientId=c;ClientSecret=${REDACTED};`,
    ],
    [
      "Endpoint=https://x.service.signalr.net;AccessKey=a2V5dmFsdWU=;",
      `Endpoint=https://x.service.signalr.net;AccessKey=${REDACTED};`,
    ],
    ["user=u;passwd=hunter2hunter2", `user=u;passwd=${REDACTED}`],
    // Text is searched for these shapes only when it holds a ";": one far from the key, or on the
    // next line, still counts.
    [`${"x".repeat(2_000)};Password=s3cr3tvalue`, `${"x".repeat(2_000)};Password=${REDACTED}`],
    ["Password=s3cr3tvalue\n;", `Password=${REDACTED}\n;`],
  ])("%j", (input, expected) => {
    expect(redact(input)).toBe(expected);
  });
  it.each([
    "pwd=$(pwd)",
    "the Password= field is required",
    "echo AccountKey",
    "SharedAccessKeyName=root",
    "secret=1 is a word",
  ])("leaves ordinary text alone: %j", (input) => {
    expect(redact(input)).toBe(input);
  });
  it("a stream is not cut where the rest of a connection string would lose its `;`", () => {
    for (const text of ["host=db; uid=app; pwd=s3cr3tvalue", "Server=db;Password= s3cr3tvalue;"]) {
      for (let end = 1; end <= text.length; end++) {
        const cut = safeCut(text.slice(0, end));
        const rest = text.slice(cut);
        const whole = redact(text.slice(0, cut)) + redact(rest);
        expect(whole, `${text} cut at ${cut} of ${end}`).not.toContain("s3cr3tvalue");
      }
    }
  });
  it("registers the values of the new secret-named variables", () => {
    registerSecretEnv({
      BW_SESSION: "bw-session-value-1",
      OP_SESSION_my: "op-session-value-2",
      SSHPASS: "sshpass-value-3",
      BORG_PASSPHRASE: "borg-phrase-value-4",
      LDAP_BIND_PW: "ldap-bind-value-5",
      AZURE_STORAGE_CONNECTION_STRING: "conn-string-value-6",
      XDG_SESSION_TYPE: "wayland",
      PWD: "/work/project-dir",
    });
    expect(
      redact(
        "bw-session-value-1 op-session-value-2 sshpass-value-3 borg-phrase-value-4 ldap-bind-value-5 conn-string-value-6 wayland /work/project-dir",
      ),
    ).toBe(`${Array(6).fill(REDACTED).join(" ")} wayland /work/project-dir`);
  });
});
