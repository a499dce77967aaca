/**
 * Hostile inputs round two, item 12: what crosses a redirect. A real origin that redirects, a
 * second origin that echoes every header and body it receives, and (with openssl) an https
 * origin redirecting to plain http. Each row is an attack that got through before.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { httpRequestTool } from "../../src/tools/http_request.js";
import { hasOpenssl } from "../helpers/procs.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

interface Seen {
  method?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
const seenByOther: Seen[] = [];
const seenBySame: Seen[] = [];
let origin: http.Server;
let other: http.Server;
let base: string;
let otherBase: string;
let tmp: string;

function record(into: Seen[]) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      into.push({ method: req.method, headers: req.headers, body });
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("echoed");
    });
  };
}

function listen(s: http.Server | https.Server): Promise<number> {
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve((s.address() as AddressInfo).port)));
}
function close(s: http.Server | https.Server): Promise<void> {
  s.closeAllConnections();
  return new Promise((resolve) => s.close(() => resolve()));
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-h2-redir-"));
  other = http.createServer(record(seenByOther));
  otherBase = `http://127.0.0.1:${await listen(other)}`;
  const echoSame = record(seenBySame);
  origin = http.createServer((req, res) => {
    const m = /^\/(\d{3})\/(other|same)$/.exec(req.url ?? "");
    if (m) {
      req.resume();
      res.writeHead(Number(m[1]), { location: m[2] === "other" ? `${otherBase}/landing` : "/landing" });
      res.end();
    } else echoSame(req, res);
  });
  base = `http://127.0.0.1:${await listen(origin)}`;
});
afterAll(async () => {
  await close(origin);
  await close(other);
  fs.rmSync(tmp, { recursive: true, force: true });
});

const CREDENTIALS = {
  Authorization: "Bearer aaaaaaaaaaaaaaaa",
  Cookie: "session=bbbbbbbb",
  "Proxy-Authorization": "Basic cccccccc",
  "X-Api-Key": "dddddddddddd",
  "Private-Token": "eeeeeeeeeeee",
  "X-Auth-Whatever": "ffffffffffff",
};

async function call(method: string, url: string, extra: Record<string, unknown> = {}, ca?: string) {
  const parsed = httpRequestTool.parse(JSON.stringify({ method, url, ...extra }));
  if (!parsed.ok) throw new Error(parsed.error);
  const config = defaultConfig();
  if (ca) config.backend.ca_file = ca;
  return runTool(httpRequestTool, parsed.value, makeToolContext({ timeoutMs: 20_000, config }));
}

describe("item 12: a redirect that leaves the origin carries no credential and no body", () => {
  it.each([301, 302, 303, 307, 308])(
    "GET %d to another origin: only the safe headers arrive",
    async (status) => {
      seenByOther.length = 0;
      const obs = await call("GET", `${base}/${status}/other`, {
        headers: { ...CREDENTIALS, Accept: "text/plain", "Accept-Language": "en" },
      });
      expect(obs).toMatch(/^HTTP 200/);
      expect(seenByOther).toHaveLength(1);
      const h = seenByOther[0]!.headers;
      for (const name of Object.keys(CREDENTIALS)) expect(h[name.toLowerCase()], name).toBeUndefined();
      expect(h.accept).toBe("text/plain");
      expect(h["accept-language"]).toBe("en");
    },
  );

  it.each([307, 308])("POST %d to another origin is not followed; the body never leaves", async (status) => {
    seenByOther.length = 0;
    const obs = await call("POST", `${base}/${status}/other`, {
      body: "secret-body",
      headers: { "X-Api-Key": "dddddddddddd", "Content-Type": "text/plain" },
    });
    expect(obs).toMatch(
      /^http_request: redirect 1 \(HTTP \d+ .*\) not followed: it would resend the request body to another origin/,
    );
    expect(seenByOther).toHaveLength(0);
  });

  it.each([301, 302, 303])("POST %d to another origin arrives as a bare GET", async (status) => {
    seenByOther.length = 0;
    await call("POST", `${base}/${status}/other`, {
      body: "secret-body",
      headers: { ...CREDENTIALS, "Content-Type": "text/plain" },
    });
    expect(seenByOther).toHaveLength(1);
    const s = seenByOther[0]!;
    expect(s.method).toBe("GET");
    expect(s.body).toBe("");
    expect(s.headers["content-type"]).toBeUndefined();
    expect(s.headers["x-api-key"]).toBeUndefined();
  });

  it.each([307, 308])("POST %d to the same origin keeps its body and headers", async (status) => {
    seenBySame.length = 0;
    await call("POST", `${base}/${status}/same`, {
      body: "payload",
      headers: { "X-Api-Key": "dddddddddddd", "Content-Type": "text/plain" },
    });
    expect(seenBySame).toHaveLength(1);
    expect(seenBySame[0]!.body).toBe("payload");
    expect(seenBySame[0]!.headers["x-api-key"]).toBe("dddddddddddd");
    expect(seenBySame[0]!.headers["content-type"]).toBe("text/plain");
  });

  it("PUT 302 to the same origin is not followed (it would send the PUT without its body)", async () => {
    seenBySame.length = 0;
    const obs = await call("PUT", `${base}/302/same`, { body: "payload" });
    expect(obs).toMatch(/not followed/);
    expect(seenBySame).toHaveLength(0);
  });
});

const haveOpenssl = hasOpenssl();

describe.skipIf(!haveOpenssl)("item 12: https never redirects to http (needs openssl)", () => {
  it("a 302 from https to http is refused and the http origin hears nothing", async () => {
    const key = path.join(tmp, "key.pem");
    const cert = path.join(tmp, "cert.pem");
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"],
        ...["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
      ],
      { stdio: "ignore" },
    );
    const secure = https.createServer(
      { key: fs.readFileSync(key), cert: fs.readFileSync(cert) },
      (_req, res) => {
        res.writeHead(302, { location: `${otherBase}/plain` });
        res.end();
      },
    );
    const port = await listen(secure);
    try {
      seenByOther.length = 0;
      const obs = await call("GET", `https://127.0.0.1:${port}/x`, { headers: { Accept: "*/*" } }, cert);
      expect(obs).toMatch(/redirect 1 \(HTTP 302 .*\) not followed: it leaves https for plain http/);
      expect(seenByOther).toHaveLength(0);
    } finally {
      await close(secure);
    }
  });
});
