/**
 * Shared pieces for the MCP tests: the reference server launched over HTTP, a recording
 * proxy (plain or TLS) to see exactly which headers arrive, free ports, a throwaway CA
 * and process-table checks. Everything started here has a matching stop.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import type * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import type { McpServerConfig } from "../../src/config/schema.js";

export const EVERYTHING = path.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
export const FIXTURES = path.resolve("test/mcp/fixtures");
const START_WAIT_MS = 20_000;

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "scoot-mcp-"));
}

export function server(partial: Partial<McpServerConfig> & { name: string }): McpServerConfig {
  return { transport: "stdio", args: [], env: [], headers: [], allowed_tools: [], ...partial };
}

/** The everything server over stdio through the pid-recording wrapper. */
export function everythingStdio(name: string, marker: string, allowed: string[]): McpServerConfig {
  return server({
    name,
    command: process.execPath,
    args: [path.join(FIXTURES, "everything-stdio.mjs")],
    env: [{ name: "MARKER", value: marker }],
    allowed_tools: allowed,
  });
}

/**
 * How many times a fixture server started: each start appends a line to $MARKER. (The pid it
 * writes is the one it sees: inside its PID namespace, not the host's; see `pidsIn`.)
 */
export function spawnsIn(marker: string): number {
  if (!fs.existsSync(marker)) return 0;
  return fs
    .readFileSync(marker, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "").length;
}

/**
 * Host pids of the live (not zombie) processes started with `MARKER=<marker>` in their
 * environment: the fixture server and whatever it started, bubblewrap's own processes left out.
 * Read from /proc, so they are the host's pids even when the server runs in a PID namespace.
 */
export function pidsIn(marker: string): number[] {
  const needle = `\0MARKER=${marker}\0`;
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!`\0${fs.readFileSync(`/proc/${entry}/environ`, "latin1")}`.includes(needle)) continue;
      const argv0 = fs.readFileSync(`/proc/${entry}/cmdline`, "latin1").split("\0")[0] ?? "";
      if (path.basename(argv0) === "bwrap") continue;
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      if (state !== "Z" && state !== "X") found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found.sort((a, b) => a - b);
}

/** True once the pid is out of the process table: a zombie still counts as present. */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

export async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = http.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RunningServer {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

function startOnce(kind: "sse" | "streamableHttp", port: number): Promise<RunningServer | undefined> {
  const proc = spawn(process.execPath, [EVERYTHING, kind], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => proc.once("exit", () => r()));
    proc.kill("SIGKILL");
    await exited;
  };
  return new Promise((resolve) => {
    let text = "";
    const timer = setTimeout(() => {
      void stop().then(() => resolve(undefined));
    }, START_WAIT_MS);
    proc.stderr!.on("data", (d: Buffer) => {
      text += d.toString();
      if (/listening on port|running on port/i.test(text)) {
        clearTimeout(timer);
        const route = kind === "sse" ? "/sse" : "/mcp";
        resolve({ url: `http://127.0.0.1:${port}${route}`, proc, stop });
      }
    });
    proc.once("exit", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}

/** Starts the everything server over HTTP on a free port (retrying if the port was taken meanwhile). */
export async function startEverythingHttp(kind: "sse" | "streamableHttp"): Promise<RunningServer> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = await startOnce(kind, await freePort());
    if (started) return started;
  }
  throw new Error(`could not start the everything server (${kind})`);
}

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

export interface RecordingProxy {
  url: string;
  requests: Recorded[];
  stop(): Promise<void>;
}

/** A proxy in front of `target` (http) that records every request; TLS when `tls` is given. */
export async function startProxy(
  target: string,
  tls?: { key: string; cert: string },
): Promise<RecordingProxy> {
  const t = new URL(target);
  const requests: Recorded[] = [];
  const handler: http.RequestListener = (req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    const upstream = http.request(
      {
        hostname: t.hostname,
        port: t.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: t.host },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  };
  const srv = tls ? https.createServer(tls, handler) : http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}${t.pathname}`,
    requests,
    stop: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

/** A self-signed certificate for 127.0.0.1, written into `dir`; the cert doubles as its own CA. */
export function makeCert(dir: string): { key: string; cert: string; certFile: string } {
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "2",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  return { key: fs.readFileSync(keyFile, "utf8"), cert: fs.readFileSync(certFile, "utf8"), certFile };
}
