/**
 * `scoot audit export` against a loopback OTLP/HTTP receiver that decodes what the official
 * exporter sends (protobuf and JSON): every audit event arrives once with its attributes; a
 * collector that is down loses nothing; a SIGKILLed exporter resumes from its cursor; a
 * generation evicted before export arrives as one `gap` record; header credentials appear in
 * no log (docs/telemetry.md "Telemetry and metrics").
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, cleanEnv, collect, REPO_ROOT, runCli, runInProcess } from "../helpers/cli.js";
import {
  freePort,
  type OtlpReceiver,
  type ReceivedRecord,
  startOtlpReceiver,
} from "../helpers/otlp-receiver.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const SECRET = "otlp-bearer-s3cr3t-value-0123456789";
const WRITER = path.join(REPO_ROOT, "test", "helpers", "audit-writer.mjs");

const scene = useScene({ home: "scoot-test-", nested: true });
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

function writeConfig(endpoint: string, protocol: string, extra = "", timeoutMs = 1500): void {
  fs.writeFileSync(
    path.join(scene.home, "config.toml"),
    `[telemetry]
otlp_endpoint = "${endpoint}"
otlp_protocol = "${protocol}"
timeout_ms = ${timeoutMs}
resource_attributes = { "deployment.environment" = "test" }
${extra}
[[telemetry.otlp_headers]]
name = "Authorization"
value_env = "OTLP_TOKEN"
prefix = "Bearer "
`,
  );
}

const env = { OTLP_TOKEN: SECRET };

interface AuditLine {
  seq: number;
  session_id: string;
  run_id?: string;
  kind: string;
  msg: string;
  call?: { tool: string; outcome?: string; decision?: string };
}

function auditLines(): AuditLine[] {
  const dir = path.join(scene.home, "logs");
  const names = fs
    .readdirSync(dir)
    .filter((n) => /^audit\.jsonl(\.\d+)?$/.test(n))
    .sort((a, b) => Number(a.split(".")[2] ?? Infinity) - Number(b.split(".")[2] ?? Infinity));
  return names.flatMap((n) =>
    fs
      .readFileSync(path.join(dir, n), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditLine),
  );
}

function identity(r: ReceivedRecord): string {
  return `${r.attributes["scoot.session_id"]}/${r.attributes["scoot.seq"]}/${r.attributes["scoot.chain"]}`;
}

/**
 * One `scoot audit export`: in this process (the routing main runs), or with `binary` the built
 * CLI in a process of its own, as the first case of each protocol does.
 */
function exportOnce(extraEnv: Record<string, string> = {}, binary = false) {
  const opts = { home: scene.home, env: { ...env, ...extraEnv } };
  return binary
    ? runCli(["audit", "export"], { ...opts, timeoutMs: 60_000 })
    : runInProcess(["audit", "export"], opts);
}

/** Writes `count` events through the real audit writer (rotating at `maxBytes`). */
function writeEvents(writer: string, count: number, maxBytes: number, retained: number, pad = 0): void {
  fs.mkdirSync(path.join(scene.home, "logs"), { recursive: true, mode: 0o700 });
  execFileSync(process.execPath, [
    WRITER,
    path.join(scene.home, "logs", "audit.jsonl"),
    writer,
    String(count),
    String(maxBytes),
    String(retained),
    String(pad),
  ]);
}

describe.each(["http/protobuf", "http/json"])("audit export over %s", (protocol) => {
  it("ships every audit event of real runs exactly once, with its attributes, resource and severity", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(receiver.url, protocol);
    const model = await startScriptedServer([
      step("glob", { pattern: "*" }),
      step("final", "first done"),
      step("final", "second done"),
      step("file_read", { path: "/etc/shadow" }),
      step("final", "third done"),
    ]);
    try {
      for (const goal of ["one", "two", "three"]) {
        const r = await runCli(["-e", goal], {
          home: scene.home,
          cwd: scene.base,
          env: { ...env, SCOOT_BACKEND_BASE_URL: model.url },
        });
        expect(r.code, r.stderr).toBe(0);
      }
    } finally {
      await model.close();
    }
    // A run never talks to the collector: only the exporter does.
    expect(receiver.requests).toHaveLength(0);
    const written = auditLines();
    expect(written.length).toBeGreaterThan(6);
    const r = await exportOnce({}, true);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`exported ${written.length} event(s)`);
    expect(receiver.records).toHaveLength(written.length);
    expect(new Set(receiver.requests.map((q) => q.encoding))).toEqual(
      new Set([protocol === "http/json" ? "json" : "protobuf"]),
    );
    expect(written.some((a) => a.kind === "tool_call")).toBe(true);
    // The denied read of /etc/shadow and each observation carry an outcome.
    expect(written.filter((a) => a.call !== undefined).map((a) => a.call?.outcome)).toContain("denied");
    receiver.records.forEach((rec, i) => {
      const a = written[i]!;
      expect(rec.body).toBe(a.msg);
      expect(rec.attributes["scoot.session_id"]).toBe(a.session_id);
      expect(rec.attributes["scoot.seq"]).toBe(a.seq);
      expect(rec.attributes["scoot.kind"]).toBe(a.kind);
      expect(rec.attributes["scoot.run_id"]).toBe(a.run_id);
      expect(String(rec.attributes["scoot.chain"])).toMatch(/^[0-9a-f]{64}$/);
      // A tool call names its tool and the title the tool presents itself with; every record of
      // a call carries its fields (tool, decision, outcome, rule, exit code) as attributes.
      const call = a.call;
      if (a.kind === "tool_call") {
        expect(rec.attributes["scoot.tool"]).toBe(a.msg.split(" ")[0]);
        expect(String(rec.attributes["scoot.tool_title"])).not.toBe("");
      }
      if (call) {
        expect(rec.attributes["scoot.tool"]).toBe(call.tool);
        expect(rec.attributes["scoot.outcome"]).toBe(call.outcome);
        expect(rec.attributes["scoot.decision"]).toBe(call.decision);
      } else expect(rec.attributes["scoot.tool"]).toBeUndefined();
      expect(rec.resource["service.name"]).toBe("scoot");
      expect(rec.resource["service.version"]).toBe("0.1.0");
      expect(rec.resource["deployment.environment"]).toBe("test");
      expect(typeof rec.resource["host.name"]).toBe("string");
      expect(rec.scope).toBe("scoot.audit");
    });
    // The chain attribute is the hash the next line's `prev` holds: the identity is the log's own.
    const prevs = auditLines().map((l) => (l as unknown as { prev: string }).prev);
    expect(receiver.records.slice(0, -1).map((r) => r.attributes["scoot.chain"])).toEqual(prevs.slice(1));
    const deny = receiver.records.find((x) => x.attributes["scoot.kind"] === "policy_deny");
    expect(deny?.severityText).toBe("WARN");
    expect(deny?.severityNumber).toBe(13);
    expect(receiver.records.find((x) => x.attributes["scoot.kind"] === "run")?.severityText).toBe("INFO");
    // The credential went in the header, and nowhere else.
    expect(receiver.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);

    // A second export has nothing new to send.
    const again = await exportOnce();
    expect(again.code, again.stderr).toBe(0);
    expect(receiver.records).toHaveLength(written.length);
    expect(again.stdout).toContain("exported 0 event(s)");
  });
});

describe("a collector that is down", () => {
  it("loses nothing and sends nothing twice: the first export fails, the second ships everything", async () => {
    const port = await freePort();
    writeConfig(`http://127.0.0.1:${port}`, "http/protobuf", "max_batch_records = 7");
    writeEvents("a", 20, 1 << 20, 8);
    const down = await exportOnce();
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("did not acknowledge");
    expect(down.stderr).toContain("20 wait");
    expect(fs.existsSync(path.join(scene.home, "state", "telemetry-cursor.json"))).toBe(false);

    writeEvents("b", 15, 1 << 20, 8);
    receiver = await startOtlpReceiver(port);
    const up = await exportOnce();
    expect(up.code, up.stderr).toBe(0);
    const ids = receiver.records.map(identity);
    expect(ids).toHaveLength(35);
    expect(new Set(ids).size).toBe(35);
    expect(receiver.records.map((r) => r.body)).toEqual(auditLines().map((l) => l.msg));
    expect(receiver.requests.map((q) => q.records)).toEqual([7, 7, 7, 7, 7]);
  });

  it("a collector that answers 503 for a while: --follow retries with backoff and then ships it all", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(receiver.url, "http/json");
    writeEvents("f", 12, 1 << 20, 8);
    // The exporter's own short retries and ours: several refusals in a row.
    receiver.answers.push({ status: 503 }, { status: 503 }, { status: 503 });
    const child = spawn(process.execPath, [CLI, "audit", "export", "--follow"], {
      cwd: scene.base,
      env: cleanEnv({ SCOOT_HOME: scene.home, ...env }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const done = collect(child, { timeoutMs: 60_000 });
    const deadline = Date.now() + 45_000;
    while (receiver.records.length < 12 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    writeEvents("g", 3, 1 << 20, 8);
    while (receiver.records.length < 15 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    child.kill("SIGTERM");
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(receiver.records.map(identity)).toHaveLength(15);
    expect(new Set(receiver.records.map(identity)).size).toBe(15);
    expect(receiver.requests.length).toBeGreaterThanOrEqual(4);
  });
});

describe("a killed exporter", () => {
  it("SIGKILLed while a batch is in flight, resumes from its cursor: nothing lost, at most that batch again", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(receiver.url, "http/protobuf", "max_batch_records = 10", 30_000);
    writeEvents("k", 50, 1 << 20, 8);
    // Batches 1 and 2 are acknowledged; batch 3 is never answered.
    receiver.answers.push("accept", "accept", "hang");
    const child = spawn(process.execPath, [CLI, "audit", "export"], {
      cwd: scene.base,
      env: cleanEnv({ SCOOT_HOME: scene.home, ...env }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const done = collect(child, { timeoutMs: 60_000 });
    await receiver.waitForRequests(3);
    child.kill("SIGKILL");
    const killed = await done;
    expect(killed.signal).toBe("SIGKILL");
    const cursor = JSON.parse(
      fs.readFileSync(path.join(scene.home, "state", "telemetry-cursor.json"), "utf8"),
    );
    expect(cursor.generation).toBe(1);
    expect(cursor.offset).toBeGreaterThan(0);
    expect(receiver.records).toHaveLength(20);

    const resumed = await exportOnce();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("exported 30 event(s)");
    const ids = receiver.records.map(identity);
    expect(ids).toHaveLength(50);
    expect(new Set(ids).size).toBe(50);
    expect(receiver.records.map((r) => r.body)).toEqual(auditLines().map((l) => l.msg));
  });
});

describe("retention", () => {
  it("a generation evicted before it was exported arrives as exactly one gap record with its range", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(receiver.url, "http/protobuf");
    // Export what there is, then let retention evict generations the exporter never read.
    writeEvents("r", 5, 1 << 20, 1);
    expect((await exportOnce()).code).toBe(0);
    expect(receiver.records).toHaveLength(5);
    // ~600-byte events, rotation at 2 KB, one retired generation kept: several are evicted.
    writeEvents("s", 30, 2048, 1, 500);
    const gapsFile = fs.readFileSync(path.join(scene.home, "logs", "audit.jsonl.gaps.jsonl"), "utf8");
    const gaps = gapsFile
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { gap_from: number; gap_to: number });
    expect(gaps.length).toBeGreaterThan(1);
    const r = await exportOnce();
    expect(r.code, r.stderr).toBe(0);
    const gapRecords = receiver.records.filter((x) => x.attributes["scoot.kind"] === "gap");
    expect(gapRecords).toHaveLength(1);
    expect(gapRecords[0]!.attributes["scoot.gap_from"]).toBe(gaps[0]!.gap_from);
    expect(gapRecords[0]!.attributes["scoot.gap_to"]).toBe(gaps.at(-1)!.gap_to);
    expect(gapRecords[0]!.severityText).toBe("WARN");
    // Everything still on disk arrived, after the gap, in order.
    const events = receiver.records.filter((x) => x.attributes["scoot.kind"] !== "gap");
    const onDisk = auditLines().filter((l) => l.session_id === "ws");
    expect(events.slice(-onDisk.length).map((e) => e.body)).toEqual(onDisk.map((l) => l.msg));
    expect(new Set(receiver.records.map(identity)).size).toBe(receiver.records.length);
    // And a later export does not repeat the gap.
    expect((await exportOnce()).code).toBe(0);
    expect(receiver.records.filter((x) => x.attributes["scoot.kind"] === "gap")).toHaveLength(1);
  });
});

describe("credentials", () => {
  it("header credentials never appear in any log, output or file of the home", async () => {
    const port = await freePort();
    writeConfig(`http://127.0.0.1:${port}`, "http/json");
    fs.appendFileSync(
      path.join(scene.home, "config.toml"),
      '\n[[telemetry.otlp_headers]]\nname = "X-Inline"\nvalue = "inline-secret-0123456789abcdef"\n',
    );
    writeEvents("c", 3, 1 << 20, 8);
    const outputs: string[] = [];
    const down = await exportOnce({ OTEL_EXPORTER_OTLP_HEADERS: "x-env-key=env-s3cret-abcdef0123456789" });
    outputs.push(down.stdout, down.stderr);
    receiver = await startOtlpReceiver(port);
    const up = await exportOnce({ OTEL_EXPORTER_OTLP_HEADERS: "x-env-key=env-s3cret-abcdef0123456789" });
    expect(up.code, up.stderr).toBe(0);
    outputs.push(up.stdout, up.stderr);
    expect(receiver.requests[0]!.headers["x-env-key"]).toBe("env-s3cret-abcdef0123456789");
    expect(receiver.requests[0]!.headers["x-inline"]).toBe("inline-secret-0123456789abcdef");
    const shown = await runCli(["config"], { home: scene.home, env });
    const doctor = await runCli(["doctor"], { home: scene.home, env });
    outputs.push(shown.stdout, shown.stderr, doctor.stdout, doctor.stderr);
    const files: string[] = [];
    const walk = (d: string) => {
      for (const n of fs.readdirSync(d)) {
        const p = path.join(d, n);
        if (fs.statSync(p).isDirectory()) walk(p);
        else if (n !== "config.toml") files.push(fs.readFileSync(p, "utf8"));
      }
    };
    walk(scene.home);
    for (const text of [...outputs, ...files]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain("inline-secret-0123456789abcdef");
      expect(text).not.toContain("env-s3cret-abcdef0123456789");
    }
    // Records carry no header either.
    for (const rec of receiver.records) expect(JSON.stringify(rec)).not.toContain(SECRET);
  });
});

describe("the cursor and the live file", () => {
  it("a damaged cursor is a clear error naming the file and the fix, and nothing is sent", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(receiver.url, "http/json");
    writeEvents("d", 3, 1 << 20, 8);
    fs.mkdirSync(path.join(scene.home, "state"), { recursive: true });
    const cursor = path.join(scene.home, "state", "telemetry-cursor.json");
    for (const bad of [
      "{not json",
      '{"generation":0,"offset":0}',
      '{"generation":1,"offset":-5}',
      '{"generation":1,"offset":10}',
      '{"generation":1.5,"offset":0}',
    ]) {
      fs.writeFileSync(cursor, bad);
      const r = await exportOnce();
      expect(r.code, bad).toBe(1);
      expect(r.stderr).toContain(cursor);
      expect(r.stderr).toContain(`delete ${cursor}`);
      expect(fs.readFileSync(cursor, "utf8")).toBe(bad);
    }
    expect(receiver.requests).toHaveLength(0);
  });

  it("a torn last line waits until it is complete; a cursor past the log starts over", async () => {
    receiver = await startOtlpReceiver();
    writeConfig(receiver.url, "http/protobuf");
    writeEvents("t", 4, 1 << 20, 8);
    const live = path.join(scene.home, "logs", "audit.jsonl");
    fs.appendFileSync(live, '{"seq":99,"ts":1,"session_id":"torn","kind":"run","msg":"half');
    const r = await exportOnce();
    expect(r.code, r.stderr).toBe(0);
    expect(receiver.records.map((x) => x.attributes["scoot.session_id"])).toEqual(["wt", "wt", "wt", "wt"]);
    // The next writer starts on a fresh line: the fragment is skipped with a warning, the event ships.
    writeEvents("u", 1, 1 << 20, 8);
    const next = await exportOnce();
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain("skipped a line that is not an audit event");
    expect(receiver.records.map((x) => x.attributes["scoot.session_id"])).toEqual([
      "wt",
      "wt",
      "wt",
      "wt",
      "wu",
    ]);
    // A cursor pointing past the log (the home was reset): the log is sent again from its start.
    fs.writeFileSync(
      path.join(scene.home, "state", "telemetry-cursor.json"),
      JSON.stringify({ generation: 40, offset: 0 }),
    );
    const reset = await exportOnce();
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stderr).toContain("the log was replaced");
    expect(receiver.records).toHaveLength(10);
  });
});
