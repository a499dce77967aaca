/**
 * Audit log rotation: the generation files around the live `logs/audit.jsonl`.
 *
 * Rotation retires the live file as `audit.jsonl.<gen>`. The next generation number and the
 * chain head (hash of the retired file's last line) live in `audit.jsonl.gen`, written
 * durably *before* the retirement, and retirement uses link() (which refuses to overwrite),
 * so a number is never reused even across crashes. At most `max_retained_generations`
 * retired files stay; each eviction is first recorded (and flushed) in
 * `audit.jsonl.gaps.jsonl`, and only then is the file deleted.
 */
import fs from "node:fs";
import path from "node:path";
import { openStoreFileSync } from "../core/safe-open.js";
import { gapMac, linkHash } from "./audit-chain.js";
import { clipAuditMessage } from "./audit-clip.js";
import { gapBoundsProblem, isGenerationNumber, MAX_GENERATION, MAX_LINK_ATTEMPTS } from "./audit-numbers.js";
import { lastLineOf, needsLeadingNewline, numberedSiblings, readTextIfExists } from "./jsonl.js";
import { readJsonlSync, readLinesSync } from "./lines.js";

export interface GapRecord {
  gap_from: number;
  gap_to: number;
  ts: number;
  /** Chain hash of the evicted generation's last line: where the next retained file picks up. */
  last?: string;
  /** The `prev` of its first line: lets verify prove a skipped number was never used. */
  first?: string;
  /** With an HMAC key: the record cannot be forged without it. */
  mac?: string;
}

export interface AuditFiles {
  live: string;
  genSidecar: string;
  gaps: string;
  lock: string;
}

export function auditFiles(live: string): AuditFiles {
  return { live, genSidecar: `${live}.gen`, gaps: `${live}.gaps.jsonl`, lock: `${live}.lock` };
}

/** Points inside a rotation, for the crash drill (test/drills/crash.test.ts) to die at. */
export type RotationStep = "sidecar" | "link" | "unlink" | "gap" | "evict";

export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function writeAll(fd: number, buf: Buffer): void {
  // Appends happen under the lock, so finishing a short write cannot interleave with another
  // writer. When the disk is full the next write throws ENOSPC, which names the cause; the
  // torn line it leaves is repaired by the next append (docs/sessions.md "Sessions and audit").
  let done = 0;
  while (done < buf.length) {
    const n = fs.writeSync(fd, buf, done, buf.length - done);
    if (n === 0) throw new Error(`short write (${done} of ${buf.length} bytes): is the disk full?`);
    done += n;
  }
}

/** Chain hash of a file's last line (the fragment when torn); undefined for an empty or missing file. */
export function lastHashOfFile(file: string, key: Buffer | undefined): string | undefined {
  let fd: number | undefined;
  try {
    // A FIFO or symlink planted as a generation must not block or be followed.
    fd = openStoreFileSync(file);
  } catch {
    return undefined;
  }
  if (fd === undefined) return undefined;
  try {
    const last = lastLineOf(fd, fs.fstatSync(fd).size);
    return last ? linkHash(last.bytes, key) : undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** The `prev` of a file's first line, when it has one. */
function firstPrevOfFile(file: string): string | undefined {
  for (const l of readLinesSync(file)) {
    try {
      const prev = (JSON.parse(l.text ?? "") as { prev?: unknown }).prev;
      return typeof prev === "string" ? prev : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface Sidecar {
  next?: number;
  head?: string;
  /** HMAC logs: the key's mac over next and head. */
  mac?: string;
  /** Set when the file holds something Scoot never writes: reported by verify, ignored here. */
  problem?: string;
}

/** `audit.jsonl.gen`, range-checked: a number outside 1..MAX_GENERATION+1 is not obeyed. */
export function readSidecar(files: AuditFiles): Sidecar {
  const text = readTextIfExists(files.genSidecar);
  if (text === undefined) return {};
  const [n, h, m] = text.split("\n").map((l) => l.trim());
  const next = /^\d{1,16}$/.test(n ?? "") ? Number(n) : Number.NaN;
  const head = h && /^[0-9a-f]{64}$/.test(h) ? h : undefined;
  const mac = m && /^[0-9a-f]{64}$/.test(m) ? m : undefined;
  if (!(Number.isSafeInteger(next) && next >= 1 && next <= MAX_GENERATION + 1))
    return {
      problem: `${files.genSidecar}: next generation "${clipAuditMessage(n ?? "").slice(0, 40)}" is outside 1..${MAX_GENERATION + 1}`,
    };
  return { next, ...(head ? { head } : {}), ...(mac ? { mac } : {}) };
}

/** What the sidecar's mac covers. */
export function sidecarMac(next: number, head: string, key: Buffer): string {
  return linkHash(Buffer.from(`gen ${next} ${head}`), key);
}

/**
 * Retired generation numbers present on disk, ascending: only names in range (a planted
 * `audit.jsonl.99999999999999` is reported by verify, never walked up to).
 */
export function retiredGenerations(live: string): number[] {
  return numberedSiblings(live).filter(isGenerationNumber);
}

/** Gap records the writer may act on: in range and, with a key, authentic. */
function trustedGaps(live: string, key: Buffer | undefined): GapRecord[] {
  return readGaps(live).gaps.filter((g) => !key || g.mac === gapMac(g, key));
}

/** The next number: the sidecar, but never at or below anything already on disk or in a gap. */
function nextGeneration(files: AuditFiles, key: Buffer | undefined): number {
  let next = 1;
  const sidecar = readSidecar(files).next;
  if (sidecar !== undefined && sidecar > next) next = sidecar;
  const onDisk = retiredGenerations(files.live);
  const maxOnDisk = onDisk[onDisk.length - 1];
  if (maxOnDisk !== undefined && maxOnDisk + 1 > next) next = maxOnDisk + 1;
  for (const gap of trustedGaps(files.live, key)) if (gap.gap_to + 1 > next) next = gap.gap_to + 1;
  return next;
}

/**
 * `audit.jsonl.gen`: the next generation number, then the chain head of the file being
 * retired, then (HMAC logs) a mac over both so the head cannot be moved without the key.
 */
function writeSidecar(files: AuditFiles, next: number, head: string, key: Buffer | undefined): void {
  // A unique temp name: a writer killed here leaves litter, never a file another writer
  // could rename into place half-written.
  const tmp = `${files.genSidecar}.tmp-${process.pid}-${Date.now().toString(36)}`;
  const fd = fs.openSync(tmp, "wx", 0o600);
  try {
    try {
      fs.writeSync(fd, `${next}\n${head}\n${key ? `${sidecarMac(next, head, key)}\n` : ""}`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, files.genSidecar);
  } catch (e) {
    // A failed write (a full disk) leaves no temp file behind; the caller reports the failure.
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

/** Appends one line and flushes it before returning. */
function appendDurable(file: string, line: string): void {
  const created = !fs.existsSync(file);
  const prefix = !created && needsLeadingNewline(file) ? "\n" : "";
  const fd = fs.openSync(file, "a", 0o600);
  try {
    writeAll(fd, Buffer.from(`${prefix}${line}\n`));
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (created) fsyncDir(path.dirname(file));
}

/**
 * Under the lock, the live file's content already durable: records the next number and
 * `head` (the chain hash of its last line) in the sidecar, links the file to its generation
 * name and unlinks the live name. The caller closes its descriptor, then evicts.
 */
export function retireLive(
  files: AuditFiles,
  head: string,
  key: Buffer | undefined,
  onStep?: (step: RotationStep) => void,
): void {
  const dir = path.dirname(files.live);
  let gen = nextGeneration(files, key);
  for (let attempt = 0; ; attempt++) {
    if (attempt >= MAX_LINK_ATTEMPTS || gen > MAX_GENERATION)
      throw new Error(
        `cannot retire ${files.live}: generation names up to ${gen} are taken. Fix: run scoot audit verify and move unexpected audit.jsonl.<n> files aside`,
      );
    onStep?.("sidecar");
    writeSidecar(files, gen + 1, head, key);
    onStep?.("link");
    try {
      fs.linkSync(files.live, `${files.live}.${gen}`);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      gen += 1;
    }
  }
  fsyncDir(dir);
  onStep?.("unlink");
  fs.unlinkSync(files.live);
  fsyncDir(dir);
}

/**
 * Removes the oldest retired generations beyond `maxRetained`. The gap record is on disk
 * before the file goes, so a crash in between leaves a recorded gap for a file that still
 * exists (harmless, and not recorded twice), never a silent loss.
 */
export function evict(
  files: AuditFiles,
  maxRetained: number,
  key: Buffer | undefined,
  onStep?: (step: RotationStep) => void,
): void {
  // Only records the writer can trust (in range; authentic with a key) may delete a file.
  const gapsNow = trustedGaps(files.live, key);
  const recorded = { has: (n: number) => gapsNow.some((g) => g.gap_from <= n && n <= g.gap_to) };
  // A generation whose gap record is written but whose file is still here is an eviction a
  // killed writer did not finish (the record goes first, by design): finish it now, whatever
  // the count, so no generation is both retained and recorded as removed.
  const gens: number[] = [];
  for (const g of retiredGenerations(files.live)) {
    if (!recorded.has(g)) gens.push(g);
    else {
      onStep?.("evict");
      fs.rmSync(`${files.live}.${g}`, { force: true });
    }
  }
  while (gens.length > maxRetained) {
    const oldest = gens.shift()!;
    const file = `${files.live}.${oldest}`;
    if (!recorded.has(oldest)) {
      const last = lastHashOfFile(file, key);
      const first = firstPrevOfFile(file);
      const gap: GapRecord = {
        gap_from: oldest,
        gap_to: oldest,
        ts: Date.now(),
        ...(last ? { last } : {}),
        ...(first ? { first } : {}),
      };
      if (key) gap.mac = gapMac(gap, key);
      onStep?.("gap");
      appendDurable(files.gaps, JSON.stringify(gap));
    }
    onStep?.("evict");
    fs.rmSync(file, { force: true });
  }
  fsyncDir(path.dirname(files.live));
}

function isGap(v: unknown): v is GapRecord {
  const g = v as GapRecord;
  return (
    typeof g === "object" && g !== null && typeof g.gap_from === "number" && typeof g.gap_to === "number"
  );
}

/**
 * The gap records, read line by line (bounded memory whatever the file size).
 * A record whose bounds are out of range (audit-numbers.ts) is not a gap: it is listed in
 * `poisoned` for verify to report, and nobody loops over it.
 */
export function readGaps(live: string): { gaps: GapRecord[]; warnings: string[]; poisoned: string[] } {
  const files = auditFiles(live);
  const gaps: GapRecord[] = [];
  const warnings: string[] = [];
  const poisoned: string[] = [];
  for (const item of readJsonlSync(files.gaps, isGap)) {
    if (item.warning !== undefined) warnings.push(item.warning);
    else {
      const problem = gapBoundsProblem(item.record.gap_from, item.record.gap_to);
      if (problem) poisoned.push(`${path.basename(files.gaps)}: ${problem}`);
      else gaps.push(item.record);
    }
  }
  return { gaps, warnings, poisoned };
}

/** Every file of the log, oldest retired generation first, the live file last. */
export function auditSources(live: string): string[] {
  return [...retiredGenerations(live).map((g) => `${live}.${g}`), live];
}
