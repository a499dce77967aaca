import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readAuditEvents } from "../../src/store/audit-readers.js";
import { readGaps, retiredGenerations } from "../../src/store/audit-rotation.js";
import { verifyAudit } from "../../src/store/audit-verify.js";
import { REPO_ROOT, removeDir, runCli, tempDir } from "../helpers/cli.js";

const WRITER = path.join(REPO_ROOT, "test", "helpers", "audit-writer.mjs");
const WRITERS = 4;
const EVENTS_EACH = 2500;

let dir: string;
let file: string;
beforeEach(() => {
  dir = tempDir();
  // A Scoot home layout, so the built CLI's `audit verify` can read the same log.
  fs.mkdirSync(path.join(dir, "logs"));
  file = path.join(dir, "logs", "audit.jsonl");
});
afterEach(() => removeDir(dir));

function writer(id: number, count: number, maxBytes: number, retained: number, pad = 0) {
  return spawn(
    process.execPath,
    [WRITER, file, String(id), String(count), String(maxBytes), String(retained), String(pad)],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
}
function exit(child: ReturnType<typeof writer>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    let stderr = "";
    child.stderr!.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

function allLinesParse(): void {
  for (const f of [...retiredGenerations(file).map((g) => `${file}.${g}`), file]) {
    if (!fs.existsSync(f)) continue;
    for (const line of fs.readFileSync(f, "utf8").split("\n")) {
      if (line) expect(() => JSON.parse(line), `${f}: ${line.slice(0, 80)}`).not.toThrow();
    }
  }
}

describe("several processes writing and rotating at once", () => {
  it("four writers with a tiny max_file_bytes and a reader running audit verify throughout: one valid chain", async () => {
    const each = 600;
    const writers = Array.from({ length: WRITERS }, (_, i) => exit(writer(i, each, 2048, 100_000)));
    let done = false;
    const all = Promise.all(writers).finally(() => {
      done = true;
    });
    const verdicts: { code: number | null; out: string }[] = [];
    while (!done || verdicts.length === 0) {
      const r = await runCli(["audit", "verify", "--json"], { home: dir });
      verdicts.push({ code: r.code, out: (r.stdout || r.stderr).slice(-600) });
    }
    for (const r of await all) expect(r.code, r.stderr).toBe(0);
    // Every walk taken while they wrote and rotated saw one intact chain.
    for (const v of verdicts) expect(v.code, v.out).toBe(0);
    const final = verifyAudit(file);
    expect(final.ok, JSON.stringify(final.break)).toBe(true);
    expect(final.events).toBe(WRITERS * each);
    const gens = retiredGenerations(file);
    expect(gens.length).toBeGreaterThan(20);
    expect(gens).toEqual(gens.map((_, i) => i + 1));
    const msgs = readAuditEvents(file).events.map((e) => e.msg);
    expect(new Set(msgs).size).toBe(WRITERS * each);
    console.log(
      `[audit concurrency] ${verdicts.length} verify walks during the writes, ${gens.length} generations`,
    );
  });

  it("lose nothing and never reuse a generation when everything is retained", async () => {
    const results = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) => exit(writer(i, EVENTS_EACH, 4096, 100_000))),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    allLinesParse();
    const gens = retiredGenerations(file);
    expect(gens.length).toBeGreaterThan(20);
    expect(gens).toEqual(gens.map((_, i) => i + 1)); // unique, increasing, no holes
    const { events, warnings } = readAuditEvents(file);
    expect(warnings).toEqual([]);
    const seen = new Map<string, number>();
    for (const e of events) seen.set(e.msg, (seen.get(e.msg) ?? 0) + 1);
    expect(seen.size).toBe(WRITERS * EVENTS_EACH);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // Each writer's own events stay in order (seq increases along the read order).
    for (let w = 0; w < WRITERS; w++) {
      const seqs = events.filter((e) => e.session_id === `w${w}`).map((e) => e.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i));
    }
  });

  it("with bounded retention every event is present exactly once or inside a recorded gap", async () => {
    const retained = 4;
    const results = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) => exit(writer(i, EVENTS_EACH, 4096, retained))),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    allLinesParse();
    const gens = retiredGenerations(file);
    const { gaps } = readGaps(file);
    expect(gens.length).toBeLessThanOrEqual(retained);
    const evicted = gaps.map((g) => g.gap_from);
    // Generation numbers: each used once, on disk or evicted, with no holes.
    const all = [...evicted, ...gens].sort((a, b) => a - b);
    expect(all).toEqual(all.map((_, i) => i + 1));
    // Events: none duplicated; what is missing fits in the evicted generations.
    const { events } = readAuditEvents(file);
    const msgs = events.map((e) => e.msg);
    expect(new Set(msgs).size).toBe(msgs.length);
    const missing = WRITERS * EVENTS_EACH - msgs.length;
    expect(missing).toBeGreaterThan(0);
    // A 4096-byte generation holds a bounded number of these ~90-byte lines.
    const perGenMax = Math.ceil(4096 / 80);
    expect(missing).toBeLessThanOrEqual(evicted.length * perGenMax);
    // Eviction only removes older generations: whatever survives of a writer is its newest events.
    for (let w = 0; w < WRITERS; w++) {
      const idx = events.filter((e) => e.session_id === `w${w}`).map((e) => Number(e.msg.split(":")[1]));
      if (idx.length > 0) expect(idx[idx.length - 1]).toBe(EVENTS_EACH - 1);
    }
  });

  it("a writer killed with SIGKILL mid-stream leaves every reader working", async () => {
    const victim = writer(9, 1_000_000, 8192, 100_000, 200);
    const steady = exit(writer(1, 2000, 8192, 100_000));
    await new Promise((r) => setTimeout(r, 300));
    victim.kill("SIGKILL");
    await exit(victim);
    expect((await steady).code).toBe(0);
    // Simulate the worst case as well: a torn line left at the end of the live file.
    fs.appendFileSync(file, '{"seq":99,"ts":1,"session_id":"w9","kind":"obs');
    const { events, warnings } = readAuditEvents(file);
    expect(events.filter((e) => e.session_id === "w1")).toHaveLength(2000);
    expect(warnings.length).toBeLessThanOrEqual(1);
    // The next writer repairs the tear by starting on a new line.
    expect((await exit(writer(2, 10, 8192, 100_000))).code).toBe(0);
    const after = readAuditEvents(file);
    expect(after.events.filter((e) => e.session_id === "w2")).toHaveLength(10);
  });
});
