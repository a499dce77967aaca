/**
 * What a streamed reply may cost (docs/context.md "Streaming", docs/reliability.md "Endless
 * replies"): the real CLI against a loopback server whose reply never ends (about 200 MB offered,
 * long words and prose in turn, so the stream redactor both cuts and holds), begun as a final
 * answer, a Harmony analysis or a `<think>` block. The reply is cut at the cap on one reply with
 * one clear line and never asked for again, the process's memory stays bounded, and
 * `backend.timeout_ms` ends an endless stream on time. A plain reply past the cap fails the same.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_RESPONSE_BYTES } from "../../src/backend/transport.js";
import { needsBuiltCli, removeDir, spawnCli, tempDir } from "../helpers/cli.js";

/** What the server offers before it gives up: far past the cap on one reply. */
const OFFERED_BYTES = 200 * 1024 * 1024;
/** A generous bound on what the endless reply may add to the process's peak memory. */
const RSS_GROWTH_MAX_MB = 200;
/** The deadline of the timed case, and how late the stream may end (1.25x, as the bound asks). */
const DEADLINE_MS = 4_000;
const DEADLINE_SLACK = 1.25;

const PIECE = 8 * 1024;
/** Four events of one long word (longer than the redactor holds), then four of prose. */
const WORD = "a".repeat(PIECE);
const PROSE = "the answer goes on ".repeat(Math.floor(PIECE / 19));

function chunk(content: string): string {
  return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
}
/** How the endless reply begins: each shape is followed by a different reader on its way out. */
const HEADS: { name: string; head: string; shown: boolean }[] = [
  {
    name: "a final answer",
    head: chunk('{"thought":"answering","action":"final","action_input":"'),
    shown: true,
  },
  {
    name: "a Harmony analysis (never its final channel)",
    head: chunk("<|channel|>analysis<|message|>"),
    shown: false,
  },
  { name: "a <think> block that never closes", head: chunk("<think>"), shown: false },
];
const BODY = [WORD, WORD, WORD, WORD, PROSE, PROSE, PROSE, PROSE].map(chunk).join("");

interface Endless {
  url: string;
  /** Per request: ms from its arrival to the connection closing, and the bytes written. */
  done: Promise<{ ms: number; bytes: number }>;
  /** POST requests received (an over-cap or cut stream is never asked for again). */
  requests(): number;
  close(): Promise<void>;
}

/**
 * A chat-completions server that answers every POST with a stream that never ends (until
 * OFFERED_BYTES): as fast as the client reads, or about `bytesPerTick` every 16 ms.
 */
async function endlessServer(head: string, bytesPerTick?: number): Promise<Endless> {
  let resolveDone!: (v: { ms: number; bytes: number }) => void;
  const done = new Promise<{ ms: number; bytes: number }>((r) => {
    resolveDone = r;
  });
  let posts = 0;
  const server = http.createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    posts++;
    req.resume();
    req.on("end", () => {
      const started = performance.now();
      let bytes = 0;
      let timer: NodeJS.Timeout | undefined;
      res.on("close", () => {
        clearTimeout(timer);
        resolveDone({ ms: performance.now() - started, bytes });
      });
      res.writeHead(200, { "content-type": "text/event-stream" });
      bytes += head.length;
      res.write(head);
      const pump = () => {
        if (bytesPerTick !== undefined) {
          // Paced: the same amount every tick, whatever the client has read.
          for (let sent = 0; sent < bytesPerTick && !res.destroyed; sent += BODY.length) {
            bytes += BODY.length;
            res.write(BODY);
          }
          if (bytes < OFFERED_BYTES) timer = setTimeout(pump, 16);
          else res.end();
          return;
        }
        while (bytes < OFFERED_BYTES && !res.destroyed) {
          bytes += BODY.length;
          if (!res.write(BODY)) {
            res.once("drain", pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    done,
    requests: () => posts,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Peak resident memory of a running process, in MB, as the kernel counts it (VmHWM). */
function peakRssMb(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `scoot -e` and samples its peak memory until it exits; stdout is counted, not kept. */
async function runMeasured(
  url: string,
  env: Record<string, string>,
  home: string,
  project: string,
): Promise<{ code: number | null; stderr: string; stdoutBytes: number; peakMb: number; ms: number }> {
  const started = performance.now();
  const child: ChildProcess = spawnCli(["-e", "answer"], {
    home,
    cwd: project,
    env: { SCOOT_BACKEND_BASE_URL: url, SCOOT_BACKEND_MAX_RETRIES: "2", ...env },
  });
  let peakMb = 0;
  let stdoutBytes = 0;
  const sample = setInterval(() => {
    const mb = child.pid ? peakRssMb(child.pid) : undefined;
    if (mb !== undefined) peakMb = Math.max(peakMb, mb);
    // Far past the bound: stop early instead of letting the machine swap.
    if (peakMb > 4 * RSS_GROWTH_MAX_MB + 200) child.kill("SIGKILL");
  }, 20);
  child.stdout?.on("data", (d: Buffer) => {
    stdoutBytes += d.length;
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  child.stdin?.end();
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`scoot did not exit within 60 s\nstderr: ${stderr}`));
    }, 60_000);
    child.on("close", (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  clearInterval(sample);
  return { code, stderr, stdoutBytes, peakMb, ms: performance.now() - started };
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

function homeAndProject(): { home: string; project: string } {
  const home = tempDir("scoot-bounds-home-");
  const project = tempDir("scoot-bounds-proj-");
  fs.writeFileSync(path.join(project, "README.md"), "# p\n");
  dirs.push(home, project);
  return { home, project };
}

describe.skipIf(process.platform !== "linux")(
  "an endless streamed reply (Linux: /proc memory counters)",
  () => {
    let baseMb = 0;
    beforeAll(async () => {
      needsBuiltCli();
      // Baseline: the same CLI, a short streamed answer.
      const small = http.createServer((req, res) => {
        if (req.method !== "POST") return void res.writeHead(404).end();
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end(
            `${chunk('{"thought":"t","action":"final","action_input":"short answer"}')}${`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`}data: [DONE]\n\n`,
          );
        });
      });
      await new Promise<void>((r) => small.listen(0, "127.0.0.1", r));
      const { home, project } = homeAndProject();
      const base = await runMeasured(
        `http://127.0.0.1:${(small.address() as AddressInfo).port}/v1`,
        {},
        home,
        project,
      );
      await new Promise<void>((r) => small.close(() => r()));
      expect(base.code, base.stderr).toBe(0);
      baseMb = base.peakMb;
    }, 60_000);

    it.each(HEADS)(
      "$name: cut at the cap on one reply with one clear line, memory bounded",
      async ({ head, shown }) => {
        const { home, project } = homeAndProject();
        const server = await endlessServer(head);
        try {
          const r = await runMeasured(server.url, { SCOOT_BACKEND_TIMEOUT_MS: "120000" }, home, project);
          const served = await server.done;
          const growth = r.peakMb - baseMb;
          console.error(
            `endless reply: peak RSS ${r.peakMb.toFixed(0)} MB (baseline ${baseMb.toFixed(0)} MB, +${growth.toFixed(0)} MB), ${r.ms.toFixed(0)} ms, ${served.bytes} bytes written, ${r.stdoutBytes} bytes on stdout`,
          );
          expect(growth).toBeLessThan(RSS_GROWTH_MAX_MB);
          expect(r.code).toBe(1);
          const last = r.stderr.trim().split("\n").at(-1) ?? "";
          expect(last).toContain(`larger than ${MAX_RESPONSE_BYTES} bytes`);
          expect(last).toContain("not retried");
          expect(server.requests()).toBe(1);
          // The connection closed at the cap, long before the 200 MB on offer.
          expect(served.bytes).toBeLessThan(OFFERED_BYTES / 2);
          // An answer was shown as it came (the long words included), not held to the end.
          if (shown) expect(r.stdoutBytes).toBeGreaterThan(MAX_RESPONSE_BYTES / 2);
        } finally {
          await server.close();
        }
      },
      90_000,
    );

    it("a plain reply past the same cap fails with the same words, asked for once", async () => {
      const { home, project } = homeAndProject();
      let posts = 0;
      const big = Buffer.alloc(MAX_RESPONSE_BYTES + 1024, "a");
      const server = http.createServer((req, res) => {
        if (req.method !== "POST") return void res.writeHead(404).end();
        posts++;
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(big);
        });
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      try {
        const r = await runMeasured(
          `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
          { SCOOT_BACKEND_STREAM: "false" },
          home,
          project,
        );
        expect(r.code).toBe(1);
        expect(r.stderr.trim().split("\n").at(-1)).toContain(`larger than ${MAX_RESPONSE_BYTES} bytes`);
        expect(posts).toBe(1);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
    }, 60_000);

    it(`ends a stream that never ends within ${DEADLINE_SLACK}x backend.timeout_ms`, async () => {
      needsBuiltCli();
      const { home, project } = homeAndProject();
      // Slow enough that the cap is not reached before the deadline (64 KB every 16 ms, 4 MB/s).
      const server = await endlessServer(HEADS[0]!.head, BODY.length);
      try {
        const r = await runMeasured(
          server.url,
          { SCOOT_BACKEND_TIMEOUT_MS: String(DEADLINE_MS) },
          home,
          project,
        );
        const served = await server.done;
        console.error(
          `deadline ${DEADLINE_MS} ms: the stream ended after ${served.ms.toFixed(0)} ms (${served.bytes} bytes), the run after ${r.ms.toFixed(0)} ms`,
        );
        expect(served.bytes).toBeLessThan(MAX_RESPONSE_BYTES);
        expect(served.ms).toBeLessThanOrEqual(DEADLINE_MS * DEADLINE_SLACK);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`no end within ${DEADLINE_MS} ms`);
        expect(server.requests()).toBe(1);
      } finally {
        await server.close();
      }
    }, 90_000);
  },
);
