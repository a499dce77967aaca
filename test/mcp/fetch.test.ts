import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import type * as net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createNodeFetch, type NodeFetch } from "../../src/mcp/fetch.js";
import { hasOpenssl } from "../helpers/procs.js";
import { makeCert, tempDir, waitFor } from "./helpers.js";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let srv: http.Server;
let base: string;
const seen: Seen[] = [];
let streamClosed = false;

function route(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
  seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
  if (req.url === "/redirect") {
    res.writeHead(302, { location: "/elsewhere" });
    res.end("moved");
  } else if (req.url === "/empty") {
    res.writeHead(204);
    res.end();
  } else if (req.url === "/stream") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: first\n\n");
    res.on("close", () => {
      streamClosed = true;
    });
  } else if (req.url === "/never") {
    // No answer at all.
  } else {
    res.writeHead(201, { "content-type": "application/json", "x-reply": "yes" });
    res.end(JSON.stringify({ got: body }));
  }
}

beforeAll(async () => {
  srv = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => route(req, res, body));
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`;
});

afterAll(async () => {
  srv.closeAllConnections();
  await new Promise<void>((r) => srv.close(() => r()));
});

let nf: NodeFetch;
afterEach(() => {
  nf?.close();
  seen.length = 0;
  streamClosed = false;
});

describe("node fetch for the MCP transports", () => {
  it("sends method, headers and body; returns status, headers and body", async () => {
    nf = createNodeFetch();
    const res = await nf.fetch(new URL(`${base}/echo?q=1`), {
      method: "POST",
      headers: new Headers({ "content-type": "application/json", authorization: "Bearer abc" }),
      body: '{"a":1}',
    });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get("x-reply")).toBe("yes");
    expect(await res.json()).toEqual({ got: '{"a":1}' });
    expect(seen[0]).toMatchObject({ method: "POST", url: "/echo?q=1", body: '{"a":1}' });
    expect(seen[0]!.headers.authorization).toBe("Bearer abc");
    expect(seen[0]!.headers["content-length"]).toBe("7");
  });

  it("accepts plain-object headers", async () => {
    nf = createNodeFetch();
    await (await nf.fetch(`${base}/x`, { headers: { "X-One": "1" } })).text();
    expect(seen[0]!.headers["x-one"]).toBe("1");
  });

  it("does not follow redirects (the SDK decides which to follow)", async () => {
    nf = createNodeFetch();
    const res = await nf.fetch(`${base}/redirect`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/elsewhere");
    expect(seen.map((s) => s.url)).toEqual(["/redirect"]);
  });

  it("gives a 204 a null body", async () => {
    nf = createNodeFetch();
    const res = await nf.fetch(`${base}/empty`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it("streams a body as it arrives", async () => {
    nf = createNodeFetch();
    const res = await nf.fetch(`${base}/stream`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    await reader.cancel();
    expect(await waitFor(() => streamClosed, 5000)).toBe(true);
  });

  it("an abort before the answer rejects at once", async () => {
    nf = createNodeFetch();
    const ac = new AbortController();
    const pending = nf.fetch(`${base}/never`, { signal: ac.signal });
    await waitFor(() => seen.length === 1, 5000);
    ac.abort();
    await expect(pending).rejects.toThrow(/abort/i);
  });

  it("an abort during a streamed body ends the stream and the connection", async () => {
    nf = createNodeFetch();
    const ac = new AbortController();
    const res = await nf.fetch(`${base}/stream`, { signal: ac.signal });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await expect(reader.read()).rejects.toThrow();
    expect(await waitFor(() => streamClosed, 5000)).toBe(true);
  });

  it("close() drops open streams", async () => {
    nf = createNodeFetch();
    const res = await nf.fetch(`${base}/stream`);
    expect(res.status).toBe(200);
    nf.close();
    expect(await waitFor(() => streamClosed, 5000)).toBe(true);
  });

  it("an already-aborted signal never dials", async () => {
    nf = createNodeFetch();
    const ac = new AbortController();
    ac.abort();
    await expect(nf.fetch(`${base}/x`, { signal: ac.signal })).rejects.toThrow(/abort/i);
    expect(seen).toHaveLength(0);
  });

  it("refuses schemes other than http and https", async () => {
    nf = createNodeFetch();
    await expect(nf.fetch("file:///etc/passwd")).rejects.toThrow(/unsupported protocol file:/);
  });
});

describe.skipIf(!hasOpenssl())("extra CA roots", () => {
  let dir: string;
  let tls: https.Server;
  let url: string;
  beforeAll(async () => {
    dir = tempDir();
    const cert = makeCert(dir);
    tls = https.createServer({ key: cert.key, cert: cert.cert }, (_req, res) => res.end("secure"));
    await new Promise<void>((r) => tls.listen(0, "127.0.0.1", () => r()));
    url = `https://127.0.0.1:${(tls.address() as net.AddressInfo).port}/`;
  });
  afterAll(async () => {
    tls.closeAllConnections();
    await new Promise<void>((r) => tls.close(() => r()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("trusts a server signed by the added CA", async () => {
    nf = createNodeFetch({ ca: fs.readFileSync(`${dir}/cert.pem`, "utf8") });
    expect(await (await nf.fetch(url)).text()).toBe("secure");
  });

  it("without it, the self-signed server is refused", async () => {
    nf = createNodeFetch();
    await expect(nf.fetch(url)).rejects.toThrow(/self[- ]signed certificate/i);
  });
});
