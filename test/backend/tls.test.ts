import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBackend } from "../../src/backend/client.js";
import { defaultConfig } from "../../src/config/schema.js";

const HAVE_OPENSSL = spawnSync("openssl", ["version"]).status === 0;
const STEP_SCHEMA = { type: "object" };

describe.skipIf(!HAVE_OPENSSL)("HTTPS backend with backend.ca_file", () => {
  let dir: string;
  let server: https.Server;
  let baseUrl: string;
  let caFile: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-"));
    caFile = path.join(dir, "ca.pem");
    const key = path.join(dir, "key.pem");
    // A self-signed certificate for 127.0.0.1 stands in for a private CA.
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        key,
        "-out",
        caFile,
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(caFile) }, (req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "over tls" } }] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("trusts the server when its CA is in backend.ca_file", async () => {
    const backend = createBackend({ ...defaultConfig().backend, base_url: baseUrl, ca_file: caFile });
    const r = await backend.complete({
      messages: [{ role: "user", content: "hi" }],
      stepSchema: STEP_SCHEMA,
    });
    expect(r.ok && r.value.text).toBe("over tls");
  });

  it("without it, fails at once and points at backend.ca_file", async () => {
    const backend = createBackend({ ...defaultConfig().backend, base_url: baseUrl, max_retries: 3 });
    const r = await backend.complete({
      messages: [{ role: "user", content: "hi" }],
      stepSchema: STEP_SCHEMA,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("network");
    expect(r.error.message).toContain("TLS");
    expect(r.error.message).toContain("backend.ca_file");
    expect(r.error.message).not.toContain("after");
  });

  it("an unreadable ca_file is a configuration error naming the file", async () => {
    const missing = path.join(dir, "missing.pem");
    const backend = createBackend({ ...defaultConfig().backend, base_url: baseUrl, ca_file: missing });
    const r = await backend.complete({
      messages: [{ role: "user", content: "hi" }],
      stepSchema: STEP_SCHEMA,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("config");
    expect(r.error.message).toContain(missing);
  });
});
