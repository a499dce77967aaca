/**
 * `[telemetry]`, the OTEL_* variables and `daemon.metrics_listen`: how they resolve, and the
 * clear error each bad value gets (docs/telemetry.md "Telemetry and metrics"); `doctor`'s one empty
 * export, OK / WARN / FAIL, against a loopback receiver. Reports run in this process
 * (`runInProcess`) but for the first of each kind and what is about processes (the daemon, a
 * second exporter while one ships), on the built CLI.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { parseListen, resolveTelemetry } from "../../src/telemetry/settings.js";
import { collect, runCli, runInProcess, spawnCli } from "../helpers/cli.js";
import { freePort, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { useScene } from "../helpers/scene.js";

function config(t: Partial<ReturnType<typeof defaultConfig>["telemetry"]> = {}) {
  const c = defaultConfig();
  Object.assign(c.telemetry, t);
  return c;
}

describe("resolveTelemetry", () => {
  it("is off when no endpoint is configured anywhere (nothing else is looked at)", () => {
    expect(resolveTelemetry(config({ otlp_headers: [{ name: "bad name" }] }), {}, "1")).toEqual({
      kind: "off",
    });
    expect(resolveTelemetry(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: "  " }, "1")).toEqual({ kind: "off" });
  });

  it("takes the file's keys first and fills the rest from OTEL_*", () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318",
      OTEL_SERVICE_NAME: "from-env",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,team=a%20b",
      OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=t1,authorization=Basic%20abc",
      TOKEN: "tok",
    };
    const fromEnv = resolveTelemetry(config(), env, "9.9.9");
    expect(fromEnv.kind).toBe("on");
    if (fromEnv.kind !== "on") return;
    expect(fromEnv.settings.logsUrl).toBe("http://env:4318/v1/logs");
    expect(fromEnv.settings.serviceName).toBe("from-env");
    expect(fromEnv.settings.resource).toMatchObject({
      "deployment.environment": "prod",
      team: "a b",
      "service.name": "from-env",
      "service.version": "9.9.9",
    });
    expect(fromEnv.settings.headers).toEqual({ "x-tenant": "t1", authorization: "Basic abc" });
    const fromFile = resolveTelemetry(
      config({
        otlp_endpoint: "https://collector.example:4318/",
        service_name: "edge",
        resource_attributes: { team: "ops", "host.name": "spoofed" },
        otlp_headers: [{ name: "authorization", value_env: "TOKEN", prefix: "Bearer " }],
      }),
      env,
      "9.9.9",
    );
    if (fromFile.kind !== "on") throw new Error(JSON.stringify(fromFile));
    expect(fromFile.settings.logsUrl).toBe("https://collector.example:4318/v1/logs");
    expect(fromFile.settings.serviceName).toBe("edge");
    expect(fromFile.settings.resource.team).toBe("ops");
    // What the operator gives wins over Scoot's defaults (a pod names its node, say).
    expect(fromFile.settings.resource["host.name"]).toBe("spoofed");
    expect(fromFile.settings.resource["service.name"]).toBe("edge");
    expect(fromFile.settings.resource["service.version"]).toBe("9.9.9");
    expect(fromFile.settings.headers.authorization).toBe("Bearer tok");
    expect(fromFile.settings.headers["x-tenant"]).toBe("t1");
    // ... and where two of the operator's sources disagree, the warning names both.
    expect(fromFile.settings.warnings).toEqual([
      'resource attribute team: telemetry.resource_attributes ("ops") wins over OTEL_RESOURCE_ATTRIBUTES ("a b")',
      'resource attribute service.name: telemetry.service_name ("edge") wins over OTEL_SERVICE_NAME ("from-env")',
    ]);
  });

  const on = (r: ReturnType<typeof resolveTelemetry>) => {
    if (r.kind !== "on") throw new Error(JSON.stringify(r));
    return r.settings;
  };

  it("the endpoint: the file's base URL, else the logs variable as given, else the base variable + v1/logs", () => {
    const logs = "http://logs.example:4318/custom/path";
    const base = "http://base.example:4318/prefix";
    expect(on(resolveTelemetry(config(), { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: logs }, "1")).logsUrl).toBe(
      logs,
    );
    expect(
      on(
        resolveTelemetry(
          config(),
          { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: logs, OTEL_EXPORTER_OTLP_ENDPOINT: base },
          "1",
        ),
      ).logsUrl,
    ).toBe(logs);
    expect(on(resolveTelemetry(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: base }, "1")).logsUrl).toBe(
      "http://base.example:4318/prefix/v1/logs",
    );
    expect(on(resolveTelemetry(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: `${base}/` }, "1")).logsUrl).toBe(
      "http://base.example:4318/prefix/v1/logs",
    );
    // A logs URL without a path gets the root path, nothing more.
    expect(
      on(resolveTelemetry(config(), { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "http://c:4318" }, "1")).logsUrl,
    ).toBe("http://c:4318/");
    const file = on(
      resolveTelemetry(
        config({ otlp_endpoint: "http://file:4318" }),
        { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: logs },
        "1",
      ),
    );
    expect(file.logsUrl).toBe("http://file:4318/v1/logs");
    expect(file.endpointFrom).toBe("telemetry.otlp_endpoint");
  });

  it("protocol and timeout: the file's key, else the logs variable, else the general one, else the default", () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_TIMEOUT: "7000",
      OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: "3000",
    };
    const fromEnv = on(resolveTelemetry(config(), env, "1"));
    expect([fromEnv.protocol, fromEnv.timeoutMs]).toEqual(["http/json", 3000]);
    const general = on(
      resolveTelemetry(
        config(),
        { ...env, OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "", OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: " " },
        "1",
      ),
    );
    expect([general.protocol, general.timeoutMs]).toEqual(["http/protobuf", 7000]);
    const file = on(resolveTelemetry(config({ otlp_protocol: "http/protobuf", timeout_ms: 500 }), env, "1"));
    expect([file.protocol, file.timeoutMs]).toEqual(["http/protobuf", 500]);
    const defaults = on(resolveTelemetry(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c" }, "1"));
    expect([defaults.protocol, defaults.timeoutMs]).toEqual(["http/protobuf", 10_000]);
    // A timeout that is not a number of milliseconds is ignored with a warning naming it, as the
    // specification asks of numeric variables; the next source is used.
    const bad = on(resolveTelemetry(config(), { ...env, OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: "3s" }, "1"));
    expect(bad.timeoutMs).toBe(7000);
    expect(bad.warnings.join("\n")).toContain('OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: "3s" is not a whole number');
  });

  it.each([
    ["grpc", 'OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "grpc" is not supported'],
    ["http/xml", 'OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/xml" is not one of http/protobuf, http/json'],
  ])("the protocol %s is refused: %s", (protocol, message) => {
    const r = resolveTelemetry(
      config(),
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: protocol },
      "1",
    );
    expect(r.kind).toBe("invalid");
    if (r.kind === "invalid") expect(r.problems.join("; ")).toContain(message);
  });

  it("headers: the logs variable over the general one per key (any case), the file's tables over both", () => {
    const s = on(
      resolveTelemetry(
        config({
          otlp_headers: [
            { name: "X-File", value: "f" },
            { name: "x-both", value: "file" },
          ],
        }),
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
          OTEL_EXPORTER_OTLP_HEADERS: "x-general=g,Authorization=general,x-both=general",
          OTEL_EXPORTER_OTLP_LOGS_HEADERS: "authorization=logs,x-both=logs",
        },
        "1",
      ),
    );
    expect(s.headers).toEqual({ "x-general": "g", authorization: "logs", "X-File": "f", "x-both": "file" });
  });

  it("OTEL_SDK_DISABLED=true (any case) turns export off, whatever is configured; another value is a warning", () => {
    const c = config({ otlp_endpoint: "http://c" });
    expect(resolveTelemetry(c, { OTEL_SDK_DISABLED: " True " }, "1").kind).toBe("disabled");
    expect(
      resolveTelemetry(
        config(),
        { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "http://c", OTEL_SDK_DISABLED: "true" },
        "1",
      ).kind,
    ).toBe("disabled");
    expect(resolveTelemetry(c, { OTEL_SDK_DISABLED: "false" }, "1").kind).toBe("on");
    const odd = on(resolveTelemetry(c, { OTEL_SDK_DISABLED: "yes" }, "1"));
    expect(odd.warnings.join("\n")).toContain('OTEL_SDK_DISABLED: "yes" is neither true nor false');
    // Nothing configured stays off (not "disabled": there was nothing to disable).
    expect(resolveTelemetry(config(), { OTEL_SDK_DISABLED: "true" }, "1").kind).toBe("off");
  });

  it("OTEL_LOGS_EXPORTER=none turns export off, whatever is configured; a value Scoot cannot ship to is a warning", () => {
    const c = config({ otlp_endpoint: "http://c" });
    const off = resolveTelemetry(c, { OTEL_LOGS_EXPORTER: " NONE " }, "1");
    expect(off).toEqual({ kind: "disabled", reason: "OTEL_LOGS_EXPORTER=none turns OTLP log export off" });
    expect(resolveTelemetry(c, { OTEL_LOGS_EXPORTER: "otlp" }, "1").kind).toBe("on");
    const console = on(resolveTelemetry(c, { OTEL_LOGS_EXPORTER: "console" }, "1"));
    expect(console.warnings.join("\n")).toContain(
      "OTEL_LOGS_EXPORTER: console ignored: Scoot exports logs over OTLP only",
    );
    // none beside another exporter is ignored, as the specification says.
    const both = on(resolveTelemetry(c, { OTEL_LOGS_EXPORTER: "otlp,none" }, "1"));
    expect(both.warnings.join("\n")).toContain("lists none beside another exporter; none is ignored");
    expect(resolveTelemetry(config(), { OTEL_LOGS_EXPORTER: "none" }, "1").kind).toBe("off");
  });

  it.each([
    [{ otlp_endpoint: "127.0.0.1:4318" }, {}, "does not parse as a URL"],
    [{ otlp_endpoint: "//no-scheme" }, {}, "does not parse as a URL"],
    [{ otlp_endpoint: "grpc://c:4317" }, {}, "must be an http or https URL"],
    [{ otlp_endpoint: "http://user:pw@c:4318" }, {}, "must not carry credentials"],
    // An empty port is read as the scheme's default (80) by the URL parser: a configuration error.
    [{ otlp_endpoint: "http://127.0.0.1:" }, {}, 'has a ":" but no port after it'],
    [{ otlp_endpoint: "http://collector:/v1/logs" }, {}, 'has a ":" but no port after it'],
    [{ otlp_endpoint: "https://[::1]:" }, {}, 'has a ":" but no port after it'],
    [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:" }, 'has a ":" but no port after it'],
    [
      { otlp_endpoint: "http://c", otlp_headers: [{ name: "a", value_env: "MISSING" }] },
      {},
      "needs environment variable MISSING",
    ],
    [
      { otlp_endpoint: "http://c", otlp_headers: [{ name: "a", value: "x\r\nInjected: 1" }] },
      {},
      "must not contain CR, LF or NUL",
    ],
    [
      { otlp_endpoint: "http://c", otlp_headers: [{ name: "a", value_env: "CRLF" }] },
      { CRLF: "v\nx" },
      "contains CR, LF or NUL",
    ],
    [
      { otlp_endpoint: "http://c", otlp_headers: [{ name: "a" }] },
      {},
      "needs exactly one of value or value_env",
    ],
    [
      { otlp_endpoint: "http://c", resource_attributes: { k: { nested: 1 } } },
      {},
      "must be a string, a number or true/false",
    ],
    [{ otlp_endpoint: "http://c", resource_attributes: { "bad key": "v" } }, {}, "the key must be"],
    [{ otlp_endpoint: "http://c" }, { OTEL_EXPORTER_OTLP_HEADERS: "novalue" }, "is not key=value"],
    [{ otlp_endpoint: "http://c" }, { OTEL_EXPORTER_OTLP_HEADERS: "a=%zz-secret" }, "malformed %-escape"],
    [
      { otlp_endpoint: "http://c" },
      { OTEL_EXPORTER_OTLP_LOGS_HEADERS: "a=%zz-secret" },
      "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
    ],
    [
      {},
      { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "collector:4318" },
      "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: must be an http",
    ],
    [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }, "OTEL_EXPORTER_OTLP_ENDPOINT: "],
    [
      { otlp_endpoint: "http://c" },
      { OTEL_RESOURCE_ATTRIBUTES: "bad key=v" },
      "OTEL_RESOURCE_ATTRIBUTES: the key",
    ],
  ] as const)("%j %j is refused: %s", (t, env, message) => {
    const r = resolveTelemetry(config(t as never), env, "1");
    expect(r.kind).toBe("invalid");
    if (r.kind === "invalid") {
      expect(r.problems.join("; ")).toContain(message);
      // A header value is never repeated in a problem.
      expect(r.problems.join("; ")).not.toContain("secret");
    }
  });
});

describe("parseListen", () => {
  it.each([
    ["9464", { host: "127.0.0.1", port: 9464 }],
    ["127.0.0.1:9464", { host: "127.0.0.1", port: 9464 }],
    ["0.0.0.0:80", { host: "0.0.0.0", port: 80 }],
    ["[::1]:9464", { host: "::1", port: 9464 }],
    ["localhost:1", { host: "localhost", port: 1 }],
  ])("%s → %j", (raw, want) => {
    expect(parseListen(raw)).toEqual({ ok: true, ...want });
  });
  it.each(["", "host:", ":9464", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:94a", "a b:1", "http://x:1"])(
    "%j is refused with an example",
    (raw) => {
      const r = parseListen(raw);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toContain('e.g. "127.0.0.1:9464"');
    },
  );
});

const scene = useScene({ home: "scoot-test-", nested: true });

const write = (toml: string) => fs.writeFileSync(path.join(scene.home, "config.toml"), toml);

describe("bad values through the real CLI", () => {
  it("a wrong otlp_protocol is a configuration error naming the key (exit 2)", async () => {
    write('[telemetry]\notlp_endpoint = "http://127.0.0.1:4318"\notlp_protocol = "grpc"\n');
    const r = await runCli(["audit", "export"], { home: scene.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('telemetry.otlp_protocol: "grpc" is not one of http/protobuf, http/json');
  });

  it("audit export without telemetry says how to configure it (exit 2)", async () => {
    const r = await runInProcess(["audit", "export"], { home: scene.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("set otlp_endpoint under [telemetry]");
  });

  it("a misconfigured exporter names every problem, and the daemon refuses to start with it", async () => {
    write(
      '[schedule]\nenabled = true\n\n[telemetry]\notlp_endpoint = "ftp://x"\n\n[[telemetry.otlp_headers]]\nname = "Authorization"\nvalue_env = "NOPE"\n',
    );
    const r = await runInProcess(["audit", "export"], { home: scene.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("telemetry.otlp_endpoint: must be an http or https URL");
    expect(r.stderr).toContain("needs environment variable NOPE");
    const d = await runCli(["daemon", "run", "--ticks", "1"], { home: scene.home });
    expect(d.code).toBe(2);
    expect(d.stderr).toContain("telemetry is misconfigured");
    // Nothing was started: no state written as running.
    expect(fs.existsSync(path.join(scene.home, "state", "daemon.pid"))).toBe(false);
  });

  it("a bad daemon.metrics_listen stops the daemon at start with the example", async () => {
    write('[schedule]\nenabled = true\n\n[daemon]\nmetrics_listen = "127.0.0.1:99999"\n');
    const d = await runCli(["daemon", "run", "--ticks", "1"], { home: scene.home });
    expect(d.code).toBe(2);
    expect(d.stderr).toContain("daemon.metrics_listen");
    expect(d.stderr).toContain("1..65535");
  });

  it("while one exporter ships (audit export --follow), a second is told who does, and sends nothing", async () => {
    const receiver = await startOtlpReceiver();
    write(`[telemetry]\notlp_endpoint = "${receiver.url}"\n`);
    const follower = spawnCli(["audit", "export", "--follow"], { home: scene.home });
    const done = collect(follower, { timeoutMs: 30_000 });
    try {
      const lock = path.join(scene.home, "state", "telemetry-export.lock");
      for (let i = 0; i < 200 && !fs.existsSync(lock); i++) await new Promise((r) => setTimeout(r, 50));
      const r = await runCli(["audit", "export"], { home: scene.home });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`another exporter (pid ${follower.pid})`);
    } finally {
      follower.kill("SIGTERM");
      expect((await done).code).toBe(0);
      await receiver.close();
    }
  });
});

describe("doctor checks the collector with one empty export", () => {
  it("OK when it accepts, FAIL on a 4xx (misconfigured), WARN when it is down", async () => {
    const receiver = await startOtlpReceiver();
    try {
      write(`[telemetry]\notlp_endpoint = "${receiver.url}"\notlp_protocol = "http/json"\n`);
      const ok = await runCli(["doctor", "--json"], { home: scene.home });
      const okCheck = (
        JSON.parse(ok.stdout) as { checks: { name: string; status: string; detail: string }[] }
      ).checks.find((c) => c.name === "telemetry");
      expect(okCheck?.status).toBe("OK");
      expect(okCheck?.detail).toContain("accepted an empty export");
      expect(receiver.requests).toHaveLength(1);
      expect(receiver.requests[0]!.records).toBe(0);

      receiver.answers.push({ status: 401 });
      const bad = await runInProcess(["doctor"], { home: scene.home });
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/FAIL\s+telemetry\s+the collector at .* refused an empty export/);
    } finally {
      await receiver.close();
    }
    write(`[telemetry]\notlp_endpoint = "http://127.0.0.1:${await freePort()}"\ntimeout_ms = 500\n`);
    const down = await runInProcess(["doctor"], { home: scene.home });
    expect(down.stdout).toMatch(/WARN\s+telemetry\s+the collector at .* did not answer/);
  });

  it("has no telemetry line when nothing is configured", async () => {
    const r = await runInProcess(["doctor", "--json"], { home: scene.home });
    const names = (JSON.parse(r.stdout) as { checks: { name: string }[] }).checks.map((c) => c.name);
    expect(names).not.toContain("telemetry");
    expect(names).not.toContain("metrics");
  });
});
