/**
 * `scoot audit export` as the OTLP exporter specification says an exporter behaves, against a
 * loopback receiver that answers as a collector does (test/helpers/otlp-receiver.ts):
 * - the environment: `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` alone works and is used as given, the
 *   base endpoint gets `/v1/logs`; protocol, headers and resource by their variables;
 *   `OTEL_SDK_DISABLED`, `OTEL_LOGS_EXPORTER=none`;
 * - the answers: a non-retryable status (400, 401, 403, 404, 413) is not retried, the batch is
 *   set aside with the collector's message and later events still arrive; a partial success is
 *   reported with its count and exit 3 (docs/telemetry.md "Telemetry and metrics").
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, cleanEnv, collect, REPO_ROOT, runCli, runInProcess } from "../helpers/cli.js";
import { type OtlpReceiver, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { useScene } from "../helpers/scene.js";

const WRITER = path.join(REPO_ROOT, "test", "helpers", "audit-writer.mjs");

const scene = useScene({ home: "scoot-otlp-spec-", nested: true });
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

function writeConfig(toml: string): void {
  fs.writeFileSync(path.join(scene.home, "config.toml"), toml);
}

function writeEvents(writer: string, count: number): void {
  fs.mkdirSync(path.join(scene.home, "logs"), { recursive: true, mode: 0o700 });
  execFileSync(process.execPath, [
    WRITER,
    path.join(scene.home, "logs", "audit.jsonl"),
    writer,
    String(count),
    String(1 << 20),
    "8",
  ]);
}

/**
 * One `scoot audit export` in this process (the routing main runs, with `env` as its whole
 * OTEL_* environment), or with `binary` the built CLI in a process of its own.
 */
function exportOnce(env: Record<string, string> = {}, binary = false) {
  return binary
    ? runCli(["audit", "export"], { home: scene.home, env, timeoutMs: 60_000 })
    : runInProcess(["audit", "export"], { home: scene.home, env });
}

const stateFile = (name: string) => path.join(scene.home, "state", name);

function rejectedRecords(): Record<string, unknown>[] {
  const file = stateFile("telemetry-rejected.jsonl");
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("the endpoint, protocol, headers and resource from OTEL_EXPORTER_OTLP_*", () => {
  it("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT alone works, and is used as given (no /v1/logs appended)", async () => {
    receiver = await startOtlpReceiver();
    writeEvents("a", 4);
    const r = await exportOnce({ OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${receiver.url}/ingest/logs` }, true);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`exported 4 event(s) in 1 batch(es) to ${receiver.url}/ingest/logs`);
    expect(receiver.requests.map((q) => q.path)).toEqual(["/ingest/logs"]);
    expect(receiver.records).toHaveLength(4);
  });

  it("the logs endpoint wins over the base one; the base one alone gets /v1/logs after its path", async () => {
    receiver = await startOtlpReceiver();
    writeEvents("b", 2);
    const both = await exportOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/base`,
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${receiver.url}/only-logs`,
    });
    expect(both.code, both.stderr).toBe(0);
    writeEvents("c", 2);
    const base = await exportOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/base` });
    expect(base.code, base.stderr).toBe(0);
    expect(receiver.requests.map((q) => q.path)).toEqual(["/only-logs", "/base/v1/logs"]);
  });

  it("the logs protocol over the general one; the logs headers over the general ones, per key", async () => {
    receiver = await startOtlpReceiver();
    writeEvents("d", 3);
    const r = await exportOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=general,x-region=eu",
      OTEL_EXPORTER_OTLP_LOGS_HEADERS: "X-Tenant=logs",
    });
    expect(r.code, r.stderr).toBe(0);
    const q = receiver.requests[0]!;
    expect(q.encoding).toBe("json");
    expect(q.headers["x-tenant"]).toBe("logs");
    expect(q.headers["x-region"]).toBe("eu");
    writeEvents("e", 1);
    const proto = await exportOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    });
    expect(proto.code, proto.stderr).toBe(0);
    expect(receiver.requests[1]!.encoding).toBe("protobuf");
  });

  it("grpc is a clear error naming the variable (exit 2), and nothing is sent", async () => {
    receiver = await startOtlpReceiver();
    writeEvents("f", 1);
    const r = await exportOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "grpc",
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "grpc" is not supported');
    expect(r.stderr).toContain("http/protobuf or http/json");
    expect(receiver.requests).toHaveLength(0);
  });

  it("the operator's service.name and host.name win over Scoot's; a conflict between two of theirs is named", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(`[telemetry]\notlp_endpoint = "${receiver.url}"\nresource_attributes = { "team" = "ops" }\n`);
    writeEvents("g", 1);
    const r = await exportOnce({
      OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes,host.name=node-7,deployment.environment=prod",
      OTEL_SERVICE_NAME: "edge-agent",
    });
    expect(r.code, r.stderr).toBe(0);
    const res = receiver.records[0]!.resource;
    expect(res["service.name"]).toBe("edge-agent");
    expect(res["host.name"]).toBe("node-7");
    expect(res["deployment.environment"]).toBe("prod");
    expect(res.team).toBe("ops");
    expect(res["service.version"]).toBe("0.1.0");
    expect(r.stderr).toContain(
      'resource attribute service.name: OTEL_SERVICE_NAME ("edge-agent") wins over OTEL_RESOURCE_ATTRIBUTES ("from-attributes")',
    );
  });

  it("OTEL_SDK_DISABLED=true: nothing is sent, the cursor stays, exit 0 saying why", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(`[telemetry]\notlp_endpoint = "${receiver.url}"\n`);
    writeEvents("h", 2);
    const r = await exportOnce({ OTEL_SDK_DISABLED: "TRUE" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("OTEL_SDK_DISABLED=true turns OpenTelemetry export off");
    expect(receiver.requests).toHaveLength(0);
    expect(fs.existsSync(stateFile("telemetry-cursor.json"))).toBe(false);
    // The variable set to false is no switch: the events go.
    const on = await exportOnce({ OTEL_SDK_DISABLED: "false" });
    expect(on.code, on.stderr).toBe(0);
    expect(receiver.records).toHaveLength(2);
  });

  it("OTEL_LOGS_EXPORTER=none: the receiver sees nothing, the cursor stays, exit 0 saying why", async () => {
    receiver = await startOtlpReceiver();
    writeEvents("n", 2);
    const r = await exportOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_LOGS_EXPORTER: " None " });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("OTEL_LOGS_EXPORTER=none turns OTLP log export off");
    expect(receiver.requests).toHaveLength(0);
    expect(fs.existsSync(stateFile("telemetry-cursor.json"))).toBe(false);
    // otlp (the default) is no switch: the events go.
    const on = await exportOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_LOGS_EXPORTER: "otlp" });
    expect(on.code, on.stderr).toBe(0);
    expect(receiver.records).toHaveLength(2);
  });
});

describe.each(["http/protobuf", "http/json"])("answers a collector gives, over %s", (protocol) => {
  it("a 400 is not retried: the batch is set aside with the collector's message, the rest still arrives, exit 3", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(
      `[telemetry]\notlp_endpoint = "${receiver.url}"\notlp_protocol = "${protocol}"\nmax_batch_records = 5\n`,
    );
    writeEvents("r", 12);
    const message = "log record 3: body too deeply nested; ".repeat(5);
    receiver.answers.push({ status: 400, message });
    const r = await exportOnce();
    expect(r.code, r.stderr).toBe(3);
    // Three batches (5, 5, 2), each sent once: the refused one was not sent again.
    expect(receiver.requests.map((q) => q.records)).toEqual([5, 5, 2]);
    expect(receiver.records).toHaveLength(7);
    expect(r.stderr).toContain(
      "the collector refused a batch of 5 record(s) (HTTP 400 Bad Request: log record 3",
    );
    expect(r.stdout).toContain("exported 7 event(s)");
    expect(r.stdout).toContain("the collector rejected 5 record(s)");
    const [record] = rejectedRecords();
    expect(record).toMatchObject({ reason: "refused", status: 400, rejected: 5, events: 5, from: null });
    expect(String(record!.message)).toContain("log record 3: body too deeply nested");
    expect(record!.first).toEqual({ session_id: "wr", seq: 0 });
    expect(record!.last).toEqual({ session_id: "wr", seq: 4 });
    // The cursor moved past everything: the next export has nothing to send.
    const again = await exportOnce();
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("exported 0 event(s)");
    expect(receiver.requests).toHaveLength(3);
    // Its `from` says where to send it again from once the collector is fixed (null: the start,
    // which deleting the cursor gives).
    fs.rmSync(stateFile("telemetry-cursor.json"));
    const replay = await exportOnce();
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain("exported 12 event(s)");
  });

  it("a partial success is reported with the rejected count, recorded, and exits 3", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(`[telemetry]\notlp_endpoint = "${receiver.url}"\notlp_protocol = "${protocol}"\n`);
    writeEvents("p", 12);
    receiver.answers.push({ partial: { rejected: 3, message: "3 records exceed the attribute limit" } });
    const r = await exportOnce();
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain("exported 9 event(s) in 1 batch(es)");
    expect(r.stdout).toContain("the collector rejected 3 record(s)");
    expect(r.stderr).toContain(
      "the collector rejected 3 of 12 record(s) of a batch (3 records exceed the attribute limit)",
    );
    expect(receiver.requests).toHaveLength(1);
    expect(rejectedRecords()).toEqual([
      expect.objectContaining({ reason: "partial", rejected: 3, events: 12, gaps: 0 }),
    ]);
  });
});

describe("which answers are final", () => {
  it.each([401, 403, 404, 413])("HTTP %i is not retried either: set aside, exit 3", async (status) => {
    receiver = await startOtlpReceiver();
    writeConfig(`[telemetry]\notlp_endpoint = "${receiver.url}"\n`);
    writeEvents("s", 2);
    receiver.answers.push({ status, message: `status ${status}` });
    const r = await exportOnce();
    expect(r.code, r.stderr).toBe(3);
    expect(receiver.requests).toHaveLength(1);
    expect(rejectedRecords()).toEqual([expect.objectContaining({ reason: "refused", status, rejected: 2 })]);
  });

  it("the control: a 429 is retried (by the exporter, within the timeout) and nothing is set aside", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(`[telemetry]\notlp_endpoint = "${receiver.url}"\ntimeout_ms = 20000\n`);
    writeEvents("t", 2);
    receiver.answers.push({ status: 429 });
    const r = await exportOnce();
    expect(r.code, r.stderr).toBe(0);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.records).toHaveLength(2);
    expect(rejectedRecords()).toEqual([]);
  });
});

describe("a follower (what the daemon runs) after a 400", () => {
  it("does not resend the refused batch, and the events written after it still arrive", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(`[telemetry]\notlp_endpoint = "${receiver.url}"\nmax_batch_records = 4\n`);
    writeEvents("u", 4);
    receiver.answers.push({ status: 400, message: "unsupported attribute type" });
    const child = spawn(process.execPath, [CLI, "audit", "export", "--follow"], {
      cwd: scene.base,
      env: cleanEnv({ SCOOT_HOME: scene.home }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const done = collect(child, { timeoutMs: 60_000 });
    await receiver.waitForRequests(1);
    writeEvents("v", 3);
    const deadline = Date.now() + 30_000;
    while (receiver.records.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    child.kill("SIGTERM");
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(receiver.records.map((x) => x.attributes["scoot.session_id"])).toEqual(["wv", "wv", "wv"]);
    // The refused batch went out once.
    expect(receiver.requests.map((q) => q.records)).toEqual([4, 3]);
    expect(r.stderr).toContain("error: telemetry: the collector refused a batch of 4 record(s)");
    expect(r.stderr).toContain("unsupported attribute type");
    expect(rejectedRecords()).toHaveLength(1);
  });
});
