/**
 * The inspection commands stream (issue 16), checked on the real built CLI:
 *  - `audit show` and `session show` print the first records before the file has ended: the
 *    file is a named pipe the test keeps open until the first record has been printed, so a
 *    reader that read to the end before printing would never print it (the test would time out);
 *  - `audit show` on a log larger than Node's longest string prints every event of the session
 *    with a peak RSS far below the file size.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanEnv, collect, removeDir, runCli, spawnCli, tempDir } from "../helpers/cli.js";

let home: string;
beforeEach(() => {
  home = tempDir();
  fs.mkdirSync(path.join(home, "logs"), { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.join(home, "state", "sessions"), { recursive: true, mode: 0o700 });
});
afterEach(() => removeDir(home));

const event = (seq: number, sid: string) =>
  JSON.stringify({ seq, ts: 1, session_id: sid, kind: "tool_call", msg: `event ${seq}` });

function mkfifo(file: string): void {
  const r = spawnSync("mkfifo", [file]);
  if (r.status !== 0) throw new Error(`mkfifo failed: ${r.stderr}`);
}

/**
 * Runs the CLI on a named pipe: writes `first`, waits until stdout shows `expect`, then writes
 * `rest` and closes the pipe.
 */
async function printsBeforeTheEnd(args: string[], fifo: string, first: string, shows: string, rest: string) {
  mkfifo(fifo);
  const child = spawnCli(args, { home });
  const done = collect(child, { timeoutMs: 20_000 });
  const writer = await fs.promises.open(fifo, "w");
  await writer.write(first);
  let seen = "";
  const shown = new Promise<void>((resolve) => {
    child.stdout?.on("data", (d: Buffer | string) => {
      seen += d.toString();
      if (seen.includes(shows)) resolve();
    });
  });
  // A reader that waits for the end never prints: `done` then rejects on its timeout.
  await Promise.race([
    shown,
    done.then((r) => {
      throw new Error(`scoot exited (${r.code}) before printing ${shows}: ${r.stderr}`);
    }),
  ]);
  await writer.write(rest);
  await writer.close();
  return done;
}

describe("printing while reading", () => {
  it("audit show prints the first event before the log has ended", async () => {
    const fifo = path.join(home, "logs", "audit.jsonl");
    const r = await printsBeforeTheEnd(
      ["audit", "show", "s1"],
      fifo,
      `${event(0, "s1")}\n${event(1, "other")}\n`,
      '"msg":"event 0"',
      `${event(2, "s1")}\nnot json\n`,
    );
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).seq),
    ).toEqual([0, 2]);
    expect(r.stderr).toContain(`${fifo}:4: skipped a line that is not valid JSON`);
  });

  it("session show prints the first message before the transcript has ended", async () => {
    const fifo = path.join(home, "state", "sessions", "s1.jsonl");
    const r = await printsBeforeTheEnd(
      ["session", "show", "s1"],
      fifo,
      `${JSON.stringify({ role: "user", content: "first" })}\n`,
      '"content":"first"',
      `${JSON.stringify({ role: "assistant", content: "second" })}\n{"role":"user","cont`,
    );
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).content),
    ).toEqual(["first", "second"]);
    expect(r.stderr).toContain(`${fifo}:3: skipped a torn last line`);
  });
});

describe("a reader that stops early", () => {
  it("session show stops quietly when its reader closes the pipe (| head)", async () => {
    const file = path.join(home, "state", "sessions", "big.jsonl");
    const line = (i: number) => JSON.stringify({ role: "user", content: `${"x".repeat(500)} ${i}` });
    fs.writeFileSync(file, `${Array.from({ length: 20_000 }, (_, i) => line(i)).join("\n")}\n`);
    const child = spawnCli(["session", "show", "big"], { home });
    const done = collect(child, { timeoutMs: 20_000 });
    // Like `| head -c 1`: take the first chunk, then close the pipe.
    await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));
    child.stdout?.destroy();
    const r = await done;
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled|internal error/);
    expect(r.code).toBe(0);
  });
});

describe("audit show on a log larger than Node's longest string", () => {
  const MAX_STRING = 0x1fffffe8;
  const TIME = "/usr/bin/time";
  const haveTime = fs.existsSync(TIME);
  if (!haveTime)
    console.log(`skipping the peak-RSS check: ${TIME} is missing (Debian: apt-get install time)`);

  it("prints every event of the session with memory far below the file size", async () => {
    const log = path.join(home, "logs", "audit.jsonl");
    // Events, a sparse hole (one ~576 MB line of zeros: no disk, no write time), events.
    const head = Array.from({ length: 400 }, (_, i) => event(i, i % 4 === 0 ? "s1" : "other"));
    fs.writeFileSync(log, `${head.join("\n")}\n`);
    const hole = MAX_STRING + 64 * 1024 * 1024;
    fs.truncateSync(log, fs.statSync(log).size + hole);
    const tail = Array.from({ length: 400 }, (_, i) => event(1000 + i, i % 4 === 0 ? "s1" : "other"));
    fs.appendFileSync(log, `\n${tail.join("\n")}\n`);
    expect(fs.statSync(log).size).toBeGreaterThan(MAX_STRING);
    try {
      let code: number | null;
      let stdout: string;
      let stderr: string;
      let peakKb = Number.NaN;
      if (haveTime) {
        const r = spawnSync(
          TIME,
          ["-f", "%M", process.execPath, path.resolve("dist/scoot.mjs"), "audit", "show", "s1"],
          {
            env: cleanEnv({ SCOOT_HOME: home }),
            encoding: "utf8",
            maxBuffer: 1 << 24,
            timeout: 60_000,
          },
        );
        code = r.status;
        stdout = r.stdout;
        const errLines = r.stderr.trim().split("\n");
        peakKb = Number(errLines.pop());
        stderr = errLines.join("\n");
      } else {
        ({ code, stdout, stderr } = await runCli(["audit", "show", "s1"], { home, timeoutMs: 60_000 }));
      }
      expect(code).toBe(0);
      const seqs = stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).seq as number);
      expect(seqs).toEqual(
        [...head, ...tail]
          .map((l) => JSON.parse(l))
          .filter((e) => e.session_id === "s1")
          .map((e) => e.seq),
      );
      expect(stderr).toContain(
        `${log}:401: skipped a line of ${hole} bytes, longer than the 32 MiB a record may have`,
      );
      if (haveTime) expect(peakKb * 1024).toBeLessThan(200 * 1024 * 1024);
    } finally {
      fs.rmSync(log, { force: true });
    }
  }, 90_000);
});
