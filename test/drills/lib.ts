/**
 * Shared parts of the reliability drills: seeded randomness (every drill prints its seed so a
 * failure can be replayed with `SCOOT_DRILL_SEED=<n>`), scripted steps, tolerant JSONL checks,
 * and process probes. The drills drive the built CLI (`dist/main.js`) through test/helpers.
 */
import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AuditEvent } from "../../src/store/audit-readers.js";

// ---------------------------------------------------------------------------------------
// Seeded randomness

export interface Rng {
  seed: number;
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [lo, hi] (both included). */
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  /** Picks a key by weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
}

/** mulberry32: tiny, fast, and good enough to spread test cases; not for anything secret. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A seeded generator for one drill. `SCOOT_DRILL_SEED` replays a run; otherwise the seed is
 * fresh each time (so CI explores) and printed (so any failure can be replayed).
 */
export function drillRng(drill: string): Rng {
  const fromEnv = process.env.SCOOT_DRILL_SEED;
  const seed = fromEnv && /^\d+$/.test(fromEnv) ? Number(fromEnv) >>> 0 : randomInt(1, 2 ** 31);
  console.log(
    `[drill ${drill}] seed=${seed} (replay: SCOOT_DRILL_SEED=${seed} npx vitest run test/drills/${drill}.test.ts)`,
  );
  const next = mulberry32(seed);
  const rng: Rng = {
    seed,
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    weighted(weights) {
      const entries = Object.entries(weights) as [keyof typeof weights, number][];
      const total = entries.reduce((s, [, w]) => s + w, 0);
      let r = next() * total;
      for (const [k, w] of entries) {
        r -= w;
        if (r < 0) return k;
      }
      return entries[entries.length - 1]![0];
    },
  };
  return rng;
}

// ---------------------------------------------------------------------------------------
// Steps and environment

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `check` holds; the timeout only guards against a hung drill. */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

// ---------------------------------------------------------------------------------------
// The home's files

export function auditLive(home: string): string {
  return path.join(home, "logs", "audit.jsonl");
}

export function sessionsDir(home: string): string {
  return path.join(home, "state", "sessions");
}

/** Every JSONL file Scoot keeps in a home: transcripts (and their `.1`), audit generations, gaps. */
export function jsonlFiles(home: string): string[] {
  const out: string[] = [];
  const logs = path.join(home, "logs");
  if (fs.existsSync(logs)) {
    for (const n of fs.readdirSync(logs)) {
      if (/^audit\.jsonl(\.\d+|\.gaps\.jsonl)?$/.test(n)) out.push(path.join(logs, n));
    }
  }
  const sessions = sessionsDir(home);
  if (fs.existsSync(sessions)) {
    for (const n of fs.readdirSync(sessions)) {
      if (/\.jsonl(\.1)?$/.test(n)) out.push(path.join(sessions, n));
    }
  }
  return out.sort();
}

export interface JsonlCheck {
  file: string;
  records: Record<string, unknown>[];
  /** The last line when the file does not end in a newline and that line is not JSON (a torn write). */
  torn?: string;
  /** Lines that are not JSON objects anywhere else: damage a reader must skip. */
  bad: { line: number; text: string }[];
}

/** Parses a JSONL file the way Scoot's readers do, telling a torn tail from damage in the middle. */
export function checkJsonl(file: string): JsonlCheck {
  const text = fs.readFileSync(file, "utf8");
  const lines = text.split("\n");
  const endsClean = text === "" || text.endsWith("\n");
  const out: JsonlCheck = { file, records: [], bad: [] };
  lines.forEach((line, i) => {
    if (line === "") return;
    const isLast = i === lines.length - 1 && !endsClean;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      v = undefined;
    }
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      out.records.push(v as Record<string, unknown>);
    } else if (isLast) {
      out.torn = line;
    } else {
      out.bad.push({ line: i + 1, text: line.slice(0, 200) });
    }
  });
  return out;
}

/** The drills read audit lines with the same shape Scoot writes. */
export type AuditRecord = AuditEvent;

/** All audit events on disk, oldest generation first, then the live file (torn lines skipped). */
export function allAuditEvents(home: string): AuditRecord[] {
  const live = auditLive(home);
  const dir = path.dirname(live);
  if (!fs.existsSync(dir)) return [];
  const gens = fs
    .readdirSync(dir)
    .map((n) => /^audit\.jsonl\.(\d+)$/.exec(n)?.[1])
    .filter((g): g is string => g !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const files = [...gens.map((g) => `${live}.${g}`), live].filter((f) => fs.existsSync(f));
  return files.flatMap((f) => checkJsonl(f).records as unknown as AuditRecord[]);
}

// ---------------------------------------------------------------------------------------
// Processes

/** `ps -o stat=` of a pid: "gone" when there is no such process. */
export function procState(pid: number): string {
  try {
    const s = execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).trim();
    return s === "" ? "gone" : s;
  } catch {
    return "gone";
  }
}

/** Gone, or a zombie nobody reaped yet (orphans in a container often stay that way): not running. */
export function notRunning(pid: number): boolean {
  const s = procState(pid);
  return s === "gone" || s.startsWith("Z");
}

/** The process group of a live pid, from /proc (undefined when it is gone). */
export function processGroupOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pgid = Number(fields[2]);
    return Number.isInteger(pgid) && pgid > 0 ? pgid : undefined;
  } catch {
    return undefined;
  }
}

/** SIGKILLs the whole process group `pid` belongs to (never our own group). */
export function killGroupOf(pid: number): void {
  const pgid = processGroupOf(pid);
  if (pgid === undefined || pgid === process.pid || pgid === processGroupOf(process.pid)) return;
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Resident set size of a live process in KiB, from /proc/<pid>/status (undefined when gone). */
export function rssKiB(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Runs async jobs with at most `limit` at a time (the machine has 2 shared cores). */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (t: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Why this process cannot mount a tmpfs (not root, or a sandbox that forbids it), or undefined
 * when it can: probed once with a real mount and umount. The drills that need one skip with it.
 */
export function whyNoTmpfs(): string | undefined {
  if (process.getuid?.() !== 0) return "not running as root: cannot mount a tmpfs";
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-drill-mount-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "pipe" });
    execFileSync("umount", [dir], { stdio: "pipe" });
    return undefined;
  } catch (e) {
    return `mount -t tmpfs failed: ${(e as Error).message.split("\n")[0]}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
