/**
 * Hostile inputs round two, item 6, through the built CLI: `scoot serve` bounds a request
 * line while reading it. A 100 MB line is discarded as it streams (the process never holds
 * it: its peak memory stays far below the line's size), answered with `invalid_request`, and
 * the requests around it are answered normally.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { MAX_REQUEST_BYTES } from "../../src/serve/protocol.js";
import { spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";

const scene = useScene({ home: "scoot-h2-serve-" });

function peakRssBytes(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function write(stream: NodeJS.WritableStream, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stream.write(data)) resolve();
    else stream.once("drain", resolve);
    stream.once("error", reject);
  });
}

/**
 * The peak memory of `scoot serve` doing the same small work without the long line, measured in
 * the same run: Node's own footprint differs between versions and machines (about 60 MiB on
 * Node 20, more on Node 24), so the limit is this baseline plus a share of the line.
 */
async function baselinePeakRss(): Promise<number | undefined> {
  const child = spawnCli(["serve"], { home: scene.home });
  let answered = 0;
  const two = new Promise<void>((resolve) => {
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      answered += d.split("\n").length - 1;
      if (answered >= 2) resolve();
    });
  });
  child.stderr!.resume();
  const done = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  await write(child.stdin!, `${JSON.stringify({ id: 1, method: "session.list" })}\n`);
  await write(child.stdin!, `${JSON.stringify({ id: 3, method: "session.list" })}\n`);
  await two;
  const peak = peakRssBytes(child.pid!);
  child.stdin!.end();
  expect(await done).toBe(0);
  return peak;
}

describe("item 6: serve caps a request line while reading it", () => {
  it("a 100 MB line is answered invalid_request and serving goes on", async () => {
    const baseline = await baselinePeakRss();
    const child = spawnCli(["serve"], { home: scene.home });
    let stdout = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr!.resume();
    const done = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const stdin = child.stdin!;
    await write(stdin, `${JSON.stringify({ id: 1, method: "session.list" })}\n`);
    const chunk = Buffer.alloc(1024 * 1024, "x");
    await write(stdin, '{"id":2,"method":"run","params":{"goal":"');
    const total = 100;
    for (let i = 0; i < total; i++) await write(stdin, chunk);
    await write(stdin, '"}}\n');
    await write(stdin, `${JSON.stringify({ id: 3, method: "session.list" })}\n`);
    const peak = peakRssBytes(child.pid!);
    stdin.end();
    expect(await done).toBe(0);
    const responses = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: unknown; ok: boolean; error?: { code: string; message: string } });
    expect(responses.map((x) => x.id)).toEqual([1, null, 3]);
    expect(responses[0]!.ok).toBe(true);
    expect(responses[2]!.ok).toBe(true);
    expect(responses[1]!.error?.code).toBe("invalid_request");
    expect(responses[1]!.error?.message).toContain(`larger than ${MAX_REQUEST_BYTES} bytes`);
    if (peak === undefined || baseline === undefined)
      console.log("[serve-line] no /proc here: peak memory not checked");
    else {
      console.log(
        `[serve-line] peak RSS ${Math.round(peak / 1048576)} MiB after a 100 MiB line, ` +
          `${Math.round(baseline / 1048576)} MiB without it`,
      );
      // Holding the line costs its 100 MiB on top of the baseline and of the buffers that carry
      // it (146 MiB over the baseline measured before the fix); discarding it as it streams costs
      // those buffers only (about 40 MiB over on Node 20, 65 MiB on Node 24).
      expect(peak - baseline).toBeLessThan(total * 1024 * 1024);
    }
  }, 150_000);
});
