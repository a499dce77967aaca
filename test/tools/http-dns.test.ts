/**
 * `http_request` checks the addresses a name resolves to, at connect time: a
 * public-looking name that /etc/hosts maps to 127.0.0.1 passes the literal-host gate but is
 * refused when connecting, directly and as a redirect hop. Through the loop in process
 * (test/helpers/loop.ts) with the real http_request tool, guarded mode: the model hears the
 * refusal in its next request.
 *
 * Needs root to add /etc/hosts entries (CI runs as root); the file is restored in afterAll,
 * which runs when a test fails too. The redirect case also needs an address of this machine
 * that the rules call public (the first hop must be allowed); it is skipped, with the reason
 * printed, when the machine has none.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { exitCodeFor } from "../../src/cli/run.js";
import type { PolicyMode } from "../../src/config/schema.js";
import { internalHost } from "../../src/policy/urls.js";
import { removeDir, tempDir } from "../helpers/cli.js";
import { addHostsLines } from "../helpers/etc-hosts.js";
import { type LoopHarness, loopHarness } from "../helpers/loop.js";
import type { ScriptItem } from "../helpers/scripted-server.js";
import { step } from "../helpers/scripted-server.js";

const IS_ROOT = process.getuid?.() === 0;
const suffix = `${process.pid}-${Date.now() % 100000}`;
const LOOP_NAME = `scoot-loop-${suffix}.example.com`;
const PUBLIC_NAME = `scoot-public-${suffix}.example.com`;
/** Two addresses, one public-looking and one loopback: any internal address refuses. */
const MIXED_NAME = `scoot-mixed-${suffix}.example.com`;

/** An address of this machine that the URL rules treat as public, if any. */
function publicLocalAddress(): string | undefined {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? [])
      if (a.family === "IPv4" && internalHost(a.address) === undefined) return a.address;
  }
  return undefined;
}
const PUBLIC_ADDR = publicLocalAddress();

if (!IS_ROOT) console.log("http dns e2e: skipped, adding /etc/hosts entries needs root");
else if (!PUBLIC_ADDR)
  console.log(
    "http dns e2e: redirect and control cases skipped, this machine has no address the rules call public",
  );

let removeHostsLines: (() => Promise<void>) | undefined;
let target: http.Server;
let targetPort = 0;
let hits: string[] = [];

beforeAll(async () => {
  target = http.createServer((req, res) => {
    hits.push(`${req.headers.host} ${req.url}`);
    if (req.url === "/bounce") {
      res.writeHead(302, { location: `http://${LOOP_NAME}:${targetPort}/inside` });
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("internal service body\n");
  });
  await new Promise<void>((resolve) => target.listen(0, "0.0.0.0", resolve));
  targetPort = (target.address() as AddressInfo).port;
  if (!IS_ROOT) return;
  removeHostsLines = await addHostsLines([
    `127.0.0.1 ${LOOP_NAME}`,
    `198.51.100.77 ${MIXED_NAME}`,
    `127.0.0.1 ${MIXED_NAME}`,
    ...(PUBLIC_ADDR ? [`${PUBLIC_ADDR} ${PUBLIC_NAME}`] : []),
  ]);
});
afterAll(async () => {
  await removeHostsLines?.();
  await new Promise<void>((resolve) => target.close(() => resolve()));
});

let project: string;
let h: LoopHarness | undefined;
beforeEach(() => {
  project = tempDir("scoot-dns-proj-");
  hits = [];
});
afterEach(async () => {
  await h?.backend.close();
  h = undefined;
  removeDir(project);
});

function get(url: string): ScriptItem {
  return step("http_request", { method: "GET", url }, "fetch");
}

/** One run that GETs `url` and then ends; the harness keeps what the model was sent. */
async function runThroughScoot(url: string, opts: { mode?: PolicyMode; caFile?: string } = {}) {
  h = loopHarness([get(url), { reply: { thought: "done", action: "final", action_input: "ok" } }], {
    cwd: project,
    ...(opts.mode ? { mode: opts.mode } : {}),
    configure: (c) => {
      if (opts.caFile) c.backend.ca_file = opts.caFile;
    },
  });
  return { r: await h.run("go"), h };
}

async function fetchThroughScoot(url: string): Promise<string> {
  const { r, h } = await runThroughScoot(url);
  expect(exitCodeFor(r), r.error).toBe(0);
  return JSON.parse(JSON.stringify(h.backend.completions()[1]!.body)).messages.at(-1).content as string;
}

describe.skipIf(!IS_ROOT)("connect-time address check", () => {
  it("a name that resolves to 127.0.0.1 passes the literal check but is refused at connect time", async () => {
    const seen = await fetchThroughScoot(`http://${LOOP_NAME}:${targetPort}/direct`);
    expect(seen).toContain(`connection to http://${LOOP_NAME}:${targetPort}/direct refused`);
    expect(seen).toContain(`resolves to 127.0.0.1, a loopback address`);
    expect(seen).not.toContain("internal service body");
    expect(hits).toEqual([]);
  });
  it("a name with a public and a loopback address is refused (every address is checked)", async () => {
    const seen = await fetchThroughScoot(`http://${MIXED_NAME}:${targetPort}/mixed`);
    expect(seen).toContain(`connection to http://${MIXED_NAME}:${targetPort}/mixed refused`);
    expect(seen).toContain("resolves to 127.0.0.1");
    expect(hits).toEqual([]);
  });
  it.skipIf(!PUBLIC_ADDR)("a public-resolving name is allowed (control)", async () => {
    const seen = await fetchThroughScoot(`http://${PUBLIC_NAME}:${targetPort}/control`);
    expect(seen).toContain("HTTP 200");
    expect(seen).toContain("internal service body");
  });
  it.skipIf(!PUBLIC_ADDR)("a redirect hop to a name that resolves to 127.0.0.1 is refused", async () => {
    const seen = await fetchThroughScoot(`http://${PUBLIC_ADDR}:${targetPort}/bounce`);
    expect(hits).toEqual([`${PUBLIC_ADDR}:${targetPort} /bounce`]);
    expect(seen).toContain(`connection to http://${LOOP_NAME}:${targetPort}/inside refused`);
    expect(seen).not.toContain("internal service body");
  });
  it.skipIf(!PUBLIC_ADDR)(
    "HTTPS through the checked address still verifies the certificate for the name",
    async () => {
      // The lookup only replaces the address; SNI, certificate check and Host stay the URL's name.
      const dir = tempDir("scoot-dns-tls-");
      const keyFile = path.join(dir, "key.pem");
      const certFile = path.join(dir, "cert.pem");
      execFileSync(
        "openssl",
        [
          ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", `/CN=${PUBLIC_NAME}`],
          ...["-addext", `subjectAltName=DNS:${PUBLIC_NAME}`, "-keyout", keyFile, "-out", certFile],
        ],
        { stdio: "ignore" },
      );
      let seenHost = "";
      let sni = "";
      const secure = https.createServer(
        { key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) },
        (req, res) => {
          seenHost = req.headers.host ?? "";
          sni = (req.socket as unknown as { servername?: string }).servername ?? "";
          res.writeHead(200, { "content-type": "text/plain" });
          res.end("secure named hello");
        },
      );
      await new Promise<void>((resolve) => secure.listen(0, "0.0.0.0", resolve));
      const port = (secure.address() as AddressInfo).port;
      try {
        const { r, h } = await runThroughScoot(`https://${PUBLIC_NAME}:${port}/tls`, { caFile: certFile });
        expect(exitCodeFor(r), r.error).toBe(0);
        expect(JSON.stringify(h.backend.completions()[1]!.body)).toContain("secure named hello");
        expect(sni).toBe(PUBLIC_NAME);
        expect(seenHost).toBe(`${PUBLIC_NAME}:${port}`);
      } finally {
        await new Promise<void>((resolve) => secure.close(() => resolve()));
        removeDir(dir);
      }
    },
  );
  it("unrestricted mode does not check (the operator's choice)", async () => {
    const { r, h } = await runThroughScoot(`http://${LOOP_NAME}:${targetPort}/free`, {
      mode: "unrestricted",
    });
    expect(exitCodeFor(r), r.error).toBe(0);
    expect(JSON.stringify(h.backend.completions()[1]!.body)).toContain("internal service body");
  });
});
