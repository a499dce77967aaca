/**
 * Secrets in values (docs/safety.md "What is protected"): a variable whose value is a connection
 * string holding a password or a key is dropped from the sandbox's environment whatever its name.
 * Output redaction alone is not enough: `printenv X | rev` reads it reversed past the redactor.
 * The adversarial table goes through scrubEnv, the last case through the real sandboxed bash.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { ENV_SCRUB_RULES, scrubEnv } from "../../src/sandbox/env.js";
import { bashTool } from "../../src/tools/bash.js";
import { bwrapWorks } from "../helpers/procs.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

const dropped: [string, string][] = [
  ["APP_CONN", "Server=db;User Id=u;Password=p;"],
  ["X1", "Server=x;User Id=u;Password=p;"],
  ["X2", "PASSWORD=hunter2"],
  ["X3", "host=db; uid=app; pwd =hunter2"],
  ["X4", "host=db;pwd= hunter2; database=x"],
  ["X5", "  ;;Password=p"],
  ["X6", ";  pAsSwOrD=p"],
  ["X7", "Server=x;\tPassword\t=\tp"],
  ["X8", "Server=x;Passwd=p"],
  ["X9", 'Server=x;Password="a;b"'],
  [
    "AZ",
    "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zm9vYmFy==;EndpointSuffix=core.windows.net",
  ],
  ["SB", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=n;SharedAccessKey=k"],
  ["SAS", "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2020-08-04&sig=abc"],
  ["SIGNALR", "Endpoint=https://x.service.signalr.net;AccessKey=abc;Version=1.0;"],
  ["APPCONFIG", "Endpoint=https://x.azconfig.io;Id=abc;Secret=xyz"],
  ["AAD", "Server=x;Authentication=ActiveDirectoryServicePrincipal;User Id=app;ClientSecret=s"],
  ["ODBC", "Driver={ODBC Driver 18 for SQL Server};Server=x;UID=u;PWD=p;"],
  ["LINES", "user=u\npassword=p"],
  ["CRLF", "user=u\r\nPWD=p"],
  ["QUERY", "https://x/db?user=u;password=p"],
];

const kept: [string, string][] = [
  // The shell's working directory: the name PWD and a path are ordinary.
  ["PWD", "/home/u"],
  ["OLDPWD", "/srv"],
  // `pwd=` inside a path segment is no key: a key starts the value or follows `;` or a newline.
  ["P", "/srv/pwd=x"],
  ["P2", "cd /x && pwd=1"],
  ["NOTE", "the Password= field is required"],
  // An empty password holds nothing.
  ["EMPTY", "Server=x;Password=;Database=d"],
  ["BLANK", "Password= "],
  // Relatives of a secret key that are not one.
  ["SB_NAME", "Endpoint=sb://ns/;SharedAccessKeyName=RootManageSharedAccessKey"],
  ["MY_ACCT", "MyAccountKey=x"],
  ["TITLE", "Secretary=Jane;Office=3"],
  ["TRUSTED", "Server=db;Database=app;Trusted_Connection=True;"],
  ["LS_COLORS", "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33"],
  ["PATH", "/usr/bin:/bin"],
  ["LANG", "C.UTF-8"],
];

describe("a connection string holding a secret is dropped whatever the variable's name", () => {
  it.each(dropped)("drops %s = %j", (name, value) => {
    const r = scrubEnv({ [name]: value }, { passthrough: [] });
    expect(r.env[name]).toBeUndefined();
    expect(r.dropped).toEqual([name]);
  });
  it.each(kept)("keeps %s = %j", (name, value) => {
    const r = scrubEnv({ [name]: value }, { passthrough: [] });
    expect(r.env[name]).toBe(value);
    expect(r.dropped).toEqual([]);
  });
  it("is one row of the table, and only the value decides", () => {
    const rule = ENV_SCRUB_RULES.find((r) => /connection string/.test(r.shown));
    expect(rule).toBeDefined();
    expect(rule!.matches("X", "Server=x;Password=p")).toBe(true);
    expect(rule!.matches("DB_PASSWORD", "plain")).toBe(false);
  });
  it("tools.env_passthrough still keeps one by name", () => {
    const r = scrubEnv({ APP_CONN: "Server=db;Password=p" }, { passthrough: ["APP_CONN"] });
    expect(r.env.APP_CONN).toBe("Server=db;Password=p");
  });
});

const BWRAP = bwrapWorks();
let project: string;
let outside: string;
beforeAll(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-envv-"));
  outside = fs.mkdtempSync(path.join("/var/tmp", "scoot-envv-out-"));
});
afterAll(() => {
  fs.rmSync(project, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

describe.skipIf(!BWRAP)("inside the real sandbox", () => {
  it("a Password= value under a neutral name is absent, even read reversed; a plain one stays", async () => {
    const c = makeToolContext({
      cwd: project,
      config: defaultConfig(),
      timeoutMs: 20_000,
      childEnv: {
        ...process.env,
        APP_CONN: "Server=db.internal;User Id=app;Password=Hunter2Secret;",
        PLAIN_VAR: "plain",
      },
      services: {
        sandbox: {
          scootHome: path.join(outside, "scoot-home"),
          tokenFile: path.join(outside, "scoot-home", "token"),
          unattended: false,
        },
      },
    });
    const obs = await runTool(
      bashTool,
      'echo "[$APP_CONN][$PLAIN_VAR]"; printenv APP_CONN | rev; env | grep -c -e Hunter2 -e terceS2retnuH; echo end',
      c,
    );
    expect(obs).toContain("[][plain]");
    expect(obs).not.toContain("terceS2retnuH");
    expect(obs).not.toContain("Hunter2");
    expect(obs).toMatch(/\n0\nend/);
  });
});
