import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { loadCaBundle } from "../../src/net/tls.js";
import { BODY_CAP_BYTES, httpRequestTool, MAX_REDIRECTS } from "../../src/tools/http_request.js";
import type { BoundGate, ToolContext } from "../../src/tools/types.js";
import { hasOpenssl } from "../helpers/procs.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

/** Long enough never to fire in a test that expects the request to finish by itself. */
const GENEROUS_MS = 30_000;

let tmp: string;
let server: http.Server;
let other: http.Server;
let base: string;
let otherBase: string;
let loopHits = 0;

function listen(s: http.Server | https.Server): Promise<string> {
  return new Promise((resolve) => {
    s.listen(0, "127.0.0.1", () => resolve(String((s.address() as AddressInfo).port)));
  });
}

function close(s: http.Server | https.Server): Promise<void> {
  s.closeAllConnections();
  return new Promise((resolve) => s.close(() => resolve()));
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => resolve(body));
  });
}

async function echo(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const body = await readBody(req);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ method: req.method, path: req.url, headers: req.headers, body }));
}

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? "/", base);
  const p = url.pathname;
  const chain = /^\/chain\/(\d+)$/.exec(p);
  if (p === "/hello") {
    res.writeHead(200, "Fine", {
      "content-type": "text/plain; charset=utf-8",
      "content-length": "11",
      "x-secret-header": "not shown",
    });
    res.end("hello world");
  } else if (p === "/echo") {
    void echo(req, res);
  } else if (chain) {
    const n = Number(chain[1]);
    if (n === 0) {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("arrived");
    } else {
      res.writeHead(302, { location: `/chain/${n - 1}` });
      res.end("moving on");
    }
  } else if (p === "/loop") {
    loopHits++;
    res.writeHead(302, { location: "/loop" });
    res.end();
  } else if (p === "/to-blocked") {
    res.writeHead(302, { location: "http://blocked.invalid/secret" });
    res.end();
  } else if (p === "/to-other") {
    res.writeHead(307, { location: `${otherBase}/echo` });
    res.end();
  } else if (p === "/see-other") {
    res.writeHead(303, { location: "/echo" });
    res.end();
  } else if (p === "/found") {
    res.writeHead(302, { location: "/echo" });
    res.end();
  } else if (p === "/temporary") {
    res.writeHead(307, { location: "/echo" });
    res.end();
  } else if (p === "/big") {
    const size = 2 * BODY_CAP_BYTES;
    res.writeHead(200, { "content-type": "text/plain", "content-length": String(size) });
    res.end("a".repeat(size));
  } else if (p === "/endless") {
    res.writeHead(200, { "content-type": "text/plain" });
    const chunk = "b".repeat(64 * 1024);
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) {
        // keep writing until the socket pushes back
      }
      if (!res.destroyed) res.once("drain", pump);
    };
    pump();
  } else if (p === "/binary") {
    res.writeHead(200, { "content-type": "image/png" });
    res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13, 1, 2, 3]));
  } else if (p === "/unlabelled-binary") {
    res.writeHead(200);
    res.end(Buffer.from([0xff, 0xfe, 0, 1, 2, 3, 0xc3]));
  } else if (p === "/empty") {
    res.writeHead(204);
    res.end();
  } else if (p === "/hang") {
    // never answers
  } else if (p === "/stall-body") {
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("partial ");
    // ...and never finishes
  } else {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("no such route");
  }
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-"));
  server = http.createServer(route);
  other = http.createServer((req, res) => void echo(req, res));
  base = `http://127.0.0.1:${await listen(server)}`;
  otherBase = `http://127.0.0.1:${await listen(other)}`;
});

afterAll(async () => {
  await close(server);
  await close(other);
  fs.rmSync(tmp, { recursive: true, force: true });
});

function input(method: string, url: string, extra: Record<string, unknown> = {}) {
  const parsed = httpRequestTool.parse(JSON.stringify({ method, url, ...extra }));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

function call(
  method: string,
  url: string,
  extra: Record<string, unknown> = {},
  ctx: Partial<ToolContext> = {},
) {
  return runTool(
    httpRequestTool,
    input(method, url, extra),
    makeToolContext({ timeoutMs: GENEROUS_MS, ...ctx }),
  );
}

function bodyOf(obs: string): string {
  return obs.slice(obs.indexOf("\n\n") + 2);
}

describe("http_request parse", () => {
  it.each([
    ["not json", "must be a JSON object"],
    ['["GET"]', "must be a JSON object"],
    ['{"url":"http://a.example/"}', 'http_request: "method" is required'],
    [
      '{"method":"FETCH","url":"http://a.example/"}',
      '"method" must be one of GET, POST, PUT, DELETE, HEAD, PATCH, got a string ("FETCH")',
    ],
    ['{"method":"GET"}', 'http_request: "url" is required'],
    ['{"method":"GET","url":" "}', 'http_request: "url" must be a non-empty string'],
    ['{"method":"GET","url":"/relative"}', "not an absolute URL"],
    ['{"method":"GET","url":"file:///etc/passwd"}', "only http and https"],
    ['{"method":"GET","url":"http://a.example/","body":"x"}', "a GET request cannot carry a body"],
    ['{"method":"HEAD","url":"http://a.example/","body":"x"}', "a HEAD request cannot carry a body"],
    ['{"method":"POST","url":"http://a.example/","body":{"a":1}}', '"body" must be a string'],
    [
      '{"method":"GET","url":"http://a.example/","headers":["a"]}',
      '"headers" must be a JSON object of name to string value, got an array',
    ],
    [
      '{"method":"GET","url":"http://a.example/","headers":{"x":1}}',
      '"headers" entry "x" must be a string, got the number 1',
    ],
    ['{"method":"GET","url":"http://a.example/","headers":{"Host":"evil"}}', 'header "Host" is set by Scoot'],
    ['{"method":"GET","url":"http://a.example/","headers":{"content-length":"1"}}', "cannot be overridden"],
    [
      '{"method":"GET","url":"http://a.example/","headers":{"Transfer-Encoding":"x"}}',
      "cannot be overridden",
    ],
    ['{"method":"GET","url":"http://a.example/","headers":{"Connection":"close"}}', "cannot be overridden"],
    ['{"method":"GET","url":"http://a.example/","headers":{"X-A":"1","x-a":"2"}}', "given twice"],
    [
      '{"method":"GET","url":"http://a.example/","headers":{"x":"a\\r\\nInjected: 1"}}',
      "invalid name or value",
    ],
    [
      '{"method":"GET","url":"http://a.example/","timeout":5}',
      'unknown field "timeout"; allowed: method, url, body, headers',
    ],
  ])("rejects %s", (raw, message) => {
    const r = httpRequestTool.parse(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });

  it("normalises the method and keeps body and headers", () => {
    const r = httpRequestTool.parse(
      '{"method":"post","url":"http://a.example/x","body":"hi","headers":{"X-Token":"t"}}',
    );
    expect(r).toEqual({
      ok: true,
      value: { method: "POST", url: "http://a.example/x", body: "hi", headers: { "x-token": "t" } },
    });
  });

  it("treats null body and headers as absent", () => {
    const r = httpRequestTool.parse('{"method":"GET","url":"http://a.example/","body":null,"headers":null}');
    expect(r).toEqual({ ok: true, value: { method: "GET", url: "http://a.example/", headers: {} } });
  });
});

describe("http_request effects", () => {
  it.each([
    ["GET", "net_read"],
    ["HEAD", "net_read"],
    ["POST", "net_write"],
    ["PUT", "net_write"],
    ["DELETE", "net_write"],
    ["PATCH", "net_write"],
  ])("%s is %s", (method, capability) => {
    expect(httpRequestTool.effects(input(method, "https://a.example/p"))).toEqual({
      capability,
      url: { method, url: "https://a.example/p" },
    });
  });
});

describe("http_request responses", () => {
  it("GET shows status, key headers only, and the body", async () => {
    const obs = await call("GET", `${base}/hello`);
    expect(obs).toMatch(
      /^HTTP 200 Fine\ncontent-type: text\/plain; charset=utf-8\ncontent-length: 11\ndate: /,
    );
    expect(obs).not.toContain("x-secret-header");
    expect(bodyOf(obs)).toBe("hello world");
  });

  it("POST sends the body, custom headers and a JSON content type for a JSON body", async () => {
    const obs = await call("POST", `${base}/echo`, { body: '{"a":1}', headers: { "X-Custom": "yes" } });
    const seen = JSON.parse(bodyOf(obs));
    expect(seen.method).toBe("POST");
    expect(seen.body).toBe('{"a":1}');
    expect(seen.headers["x-custom"]).toBe("yes");
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(seen.headers["user-agent"]).toBe("scoot");
  });

  it("keeps a content type the caller chose", async () => {
    const obs = await call("PUT", `${base}/echo`, {
      body: "a=1",
      headers: { "content-type": "text/x-custom" },
    });
    expect(JSON.parse(bodyOf(obs)).headers["content-type"]).toBe("text/x-custom");
  });

  it("HEAD reports status and headers without a body", async () => {
    const obs = await call("HEAD", `${base}/hello`);
    expect(obs).toMatch(/^HTTP 200 Fine\n/);
    expect(bodyOf(obs)).toBe("(no body: HEAD request)");
  });

  it("shows error statuses as ordinary observations", async () => {
    const obs = await call("DELETE", `${base}/nowhere`);
    expect(obs).toMatch(/^HTTP 404 Not Found\n/);
    expect(bodyOf(obs)).toBe("no such route");
  });

  it("says when the body is empty", async () => {
    expect(bodyOf(await call("GET", `${base}/empty`))).toBe("(empty body)");
  });

  it.each([
    ["/binary", "[binary body: 11 bytes, content-type image/png; not shown]"],
    ["/unlabelled-binary", "[binary body: 7 bytes, content-type unknown; not shown]"],
  ])("summarises a binary body (%s) instead of dumping it", async (route, summary) => {
    expect(bodyOf(await call("GET", `${base}${route}`))).toBe(summary);
  });

  it("caps the body at 1 MiB and names the declared length", async () => {
    const obs = await call("GET", `${base}/big`);
    const body = bodyOf(obs);
    expect(
      body.endsWith(
        `[body truncated: first ${BODY_CAP_BYTES} bytes kept of ${2 * BODY_CAP_BYTES}; the rest was not read]`,
      ),
    ).toBe(true);
    expect(body.indexOf("\n[body truncated")).toBe(BODY_CAP_BYTES);
  });

  it("stops reading an endless body at the cap, before the deadline", async () => {
    const obs = await call("GET", `${base}/endless`);
    expect(obs).toContain(`[body truncated: first ${BODY_CAP_BYTES} bytes kept; the rest was not read]`);
    expect(obs).not.toContain("timed out");
  });
});

describe("http_request deadline and errors", () => {
  it("times out on a server that never answers", async () => {
    const obs = await call("GET", `${base}/hang`, {}, { timeoutMs: 300 });
    expect(obs).toBe(`http_request: timed out after 300 ms waiting for response headers from ${base}/hang`);
  });

  it("times out while the body trickles, keeping what arrived", async () => {
    const obs = await call("GET", `${base}/stall-body`, {}, { timeoutMs: 300 });
    expect(obs).toMatch(/^HTTP 200 OK\n/);
    expect(bodyOf(obs)).toBe("partial \n[body incomplete: timed out after 300 ms while reading the body]");
  });

  it("stops when the caller's signal is aborted", async () => {
    const ac = new AbortController();
    const pending = call("GET", `${base}/hang`, {}, { signal: ac.signal });
    setTimeout(() => ac.abort(), 200);
    expect(await pending).toBe(`http_request: interrupted waiting for response headers from ${base}/hang`);
  });

  it("reports a refused connection clearly", async () => {
    const closed = http.createServer();
    const port = await listen(closed);
    await close(closed);
    const obs = await call("GET", `http://127.0.0.1:${port}/x`);
    expect(obs).toBe(`http_request: connection refused to http://127.0.0.1:${port}/x`);
  });
});

describe("http_request redirects", () => {
  it("follows a chain of redirects and names the final URL", async () => {
    const obs = await call("GET", `${base}/chain/3`);
    expect(obs).toMatch(new RegExp(`^HTTP 200 OK\\nfinal-url: ${base}/chain/0 \\(after 3 redirects\\)\\n`));
    expect(bodyOf(obs)).toBe("arrived");
  });

  it(`follows exactly ${MAX_REDIRECTS} redirects`, async () => {
    const obs = await call("GET", `${base}/chain/${MAX_REDIRECTS}`);
    expect(bodyOf(obs)).toBe("arrived");
  });

  it(`stops at redirect ${MAX_REDIRECTS + 1}`, async () => {
    loopHits = 0;
    const obs = await call("GET", `${base}/chain/${MAX_REDIRECTS + 1}`);
    expect(obs).toBe(
      `http_request: stopped after ${MAX_REDIRECTS} redirects; redirect ${MAX_REDIRECTS + 1} ` +
        `(HTTP 302 from ${base}/chain/1 to /chain/0) not followed`,
    );
    const loop = await call("GET", `${base}/loop`);
    expect(loop).toMatch(/^http_request: stopped after 5 redirects/);
    expect(loopHits).toBe(MAX_REDIRECTS + 1);
  });

  it("re-checks every hop with the gate and stops at a denied one", async () => {
    const asked: string[] = [];
    const gate: BoundGate = (action, raw) => {
      asked.push(`${action} ${raw}`);
      const { url } = JSON.parse(raw) as { url: string };
      return new URL(url).hostname === "blocked.invalid"
        ? { allow: false, reason: "internal host blocked" }
        : { allow: true };
    };
    const obs = await call("GET", `${base}/to-blocked`, {}, { gate });
    expect(obs).toBe(
      `http_request: redirect 1 (302 from ${base}/to-blocked to http://blocked.invalid/secret) ` +
        "denied by policy: internal host blocked",
    );
    expect(asked).toEqual(['http_request {"method":"GET","url":"http://blocked.invalid/secret"}']);

    asked.length = 0;
    await call("GET", `${base}/chain/2`, {}, { gate });
    expect(asked).toEqual([
      `http_request {"method":"GET","url":"${base}/chain/1"}`,
      `http_request {"method":"GET","url":"${base}/chain/0"}`,
    ]);
  });

  it.each([
    ["/see-other", "POST", "GET", ""],
    ["/found", "POST", "GET", ""],
    ["/temporary", "POST", "POST", "payload"],
    ["/see-other", "PUT", "GET", ""],
  ])("%s after %s continues as %s", async (route, method, expected, body) => {
    const obs = await call(method, `${base}${route}`, { body: "payload" });
    const seen = JSON.parse(bodyOf(obs));
    expect(seen.method).toBe(expected);
    expect(seen.body).toBe(body);
  });

  it("drops credentials when a redirect leaves the origin", async () => {
    const obs = await call("GET", `${base}/to-other`, {
      headers: { Authorization: "Bearer abcdefgh12345678", "X-Plain": "kept" },
    });
    const seen = JSON.parse(bodyOf(obs));
    expect(seen.headers.authorization).toBeUndefined();
    // Any header may be a credential: only the safe list crosses origins.
    expect(seen.headers["x-plain"]).toBeUndefined();
  });
});

const haveOpenssl = hasOpenssl();

describe.skipIf(!haveOpenssl)("http_request over https with backend.ca_file (needs openssl)", () => {
  let secure: https.Server;
  let secureBase: string;
  let certFile: string;

  beforeAll(async () => {
    const keyFile = path.join(tmp, "key.pem");
    certFile = path.join(tmp, "cert.pem");
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"],
        ...["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyFile, "-out", certFile],
      ],
      { stdio: "ignore" },
    );
    secure = https.createServer(
      { key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) },
      (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("secure hello");
      },
    );
    secureBase = `https://127.0.0.1:${await listen(secure)}`;
  });

  afterAll(async () => {
    await close(secure);
  });

  function withCa(caFile: string | undefined): Partial<ToolContext> {
    const config = defaultConfig();
    if (caFile !== undefined) config.backend.ca_file = caFile;
    return { config };
  }

  it("trusts a server whose certificate is in backend.ca_file", async () => {
    const obs = await call("GET", `${secureBase}/`, {}, withCa(certFile));
    expect(obs).toMatch(/^HTTP 200 OK\n/);
    expect(bodyOf(obs)).toBe("secure hello");
  });

  it("refuses the same server without backend.ca_file, with a clear reason", async () => {
    const obs = await call("GET", `${secureBase}/`, {}, withCa(undefined));
    expect(obs).toMatch(
      /^http_request: TLS certificate of 127\.0\.0\.1:\d+ is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT\)/,
    );
    expect(obs).toContain("backend.ca_file");
  });

  it("reports an unreadable backend.ca_file instead of connecting", async () => {
    const obs = await call("GET", `${secureBase}/`, {}, withCa(path.join(tmp, "missing.pem")));
    expect(obs).toMatch(/^http_request: backend\.ca_file .*missing\.pem: cannot read: no such file$/);
  });

  it("loadCaBundle adds the file's certificates to the bundled roots", () => {
    const r = loadCaBundle(certFile);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value).toHaveLength(tls.rootCertificates.length + 1);
      expect(r.value?.at(-1)).toContain("BEGIN CERTIFICATE");
    }
  });
});

describe("loadCaBundle errors", () => {
  it("returns undefined (Node defaults) when no file is configured", () => {
    expect(loadCaBundle(undefined)).toEqual({ ok: true, value: undefined });
  });

  it.each([
    ["no PEM certificate", "just some text\n", "no PEM certificate"],
    [
      "a broken certificate",
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
      "certificate 1 is not a valid PEM certificate",
    ],
  ])("refuses a file with %s", (_what, content, message) => {
    const file = path.join(tmp, `ca-${message.length}.pem`);
    fs.writeFileSync(file, content);
    const r = loadCaBundle(file);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });
});
