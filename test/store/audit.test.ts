import { createHash, createHmac } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AuditLevel } from "../../src/config/schema.js";
import { registerSecret, resetSecretsForTest } from "../../src/core/redact.js";
import { GENESIS } from "../../src/store/audit-chain.js";
import { readAuditEvents } from "../../src/store/audit-readers.js";
import { readGaps, retiredGenerations } from "../../src/store/audit-rotation.js";
import { verifyAudit } from "../../src/store/audit-verify.js";
import { type AuditKind, createAuditLog, openAuditLog } from "../../src/store/audit-writer.js";
import { removeDir, tempDir } from "../helpers/cli.js";

let dir: string;
let file: string;
beforeEach(() => {
  dir = tempDir();
  file = path.join(dir, "audit.jsonl");
  resetSecretsForTest();
});
afterEach(() => removeDir(dir));

function log(
  over: Partial<{ level: AuditLevel; toFile: boolean; maxRetained: number; maxFileBytes: number }> = {},
) {
  return createAuditLog({
    file,
    level: "info",
    toFile: true,
    maxRetained: 8,
    maxFileBytes: 1 << 20,
    ...over,
  });
}
function lines(f = file): Record<string, unknown>[] {
  return fs
    .readFileSync(f, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe("event format", () => {
  it("writes {seq, ts, session_id, run_id?, kind, msg, prev} in that order, seq from 0", () => {
    const a = log();
    a.emit("cli-1-2", "run", "goal: count files", "r1");
    a.emit("cli-1-2", "thought", "look");
    const [first, second] = lines();
    expect(Object.keys(first!)).toEqual(["seq", "ts", "session_id", "run_id", "kind", "msg", "prev"]);
    expect(Object.keys(second!)).toEqual(["seq", "ts", "session_id", "kind", "msg", "prev"]);
    // The chain: the first event starts from GENESIS, the next names the first line's hash.
    expect(first!.prev).toBe(GENESIS);
    const firstLine = fs.readFileSync(file, "utf8").split("\n")[0]!;
    expect(second!.prev).toBe(createHash("sha256").update(firstLine).digest("hex"));
    expect(first).toMatchObject({
      seq: 0,
      session_id: "cli-1-2",
      run_id: "r1",
      kind: "run",
      msg: "goal: count files",
    });
    expect(second!.seq).toBe(1);
    expect(typeof first!.ts).toBe("number");
    expect(Math.abs((first!.ts as number) - Date.now())).toBeLessThan(60_000);
  });
  it("redacts msg", () => {
    registerSecret("tok-abcdef-123456");
    log().emit("s", "tool_call", "curl -H 'Authorization: Bearer tok-abcdef-123456' and sk-1234567890abcdef");
    const msg = lines()[0]!.msg as string;
    expect(msg).not.toContain("tok-abcdef-123456");
    expect(msg).not.toContain("sk-1234567890abcdef");
  });
});

describe("level filter", () => {
  const all: AuditKind[] = [
    "backend",
    "run",
    "thought",
    "tool_call",
    "observation",
    "final",
    "policy_deny",
    "system_error",
    "mode",
  ];
  it.each([
    ["debug", all],
    ["info", all.filter((k) => k !== "backend")],
    // The security record is written whatever the level says: on main, "warn"
    // dropped tool_call and "error" dropped tool_call and policy_deny.
    // A policy mode change (ACP set_mode) belongs to that record too.
    ["warn", ["tool_call", "policy_deny", "system_error", "mode"]],
    ["error", ["tool_call", "policy_deny", "system_error", "mode"]],
  ] as const)("level %s keeps %j", (level, kept) => {
    const a = log({ level });
    for (const k of all) a.emit("s", k, k);
    expect(lines().map((l) => l.kind)).toEqual(kept);
    expect(lines().map((l) => l.seq)).toEqual(kept.map((_, i) => i));
  });
  it("to_file = false writes nothing", () => {
    log({ toFile: false }).emit("s", "run", "x");
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("rotation into generations", () => {
  it("retires the live file as audit.jsonl.<gen> and records the next gen durably", () => {
    const a = log({ maxFileBytes: 300, maxRetained: 100 });
    for (let i = 0; i < 30; i++) a.emit("s", "observation", `event ${i} ${"x".repeat(40)}`);
    const gens = retiredGenerations(file);
    expect(gens.length).toBeGreaterThan(3);
    expect(gens).toEqual(gens.map((_, i) => i + 1));
    const [next, head] = fs.readFileSync(`${file}.gen`, "utf8").split("\n");
    expect(Number(next)).toBe(gens[gens.length - 1]! + 1);
    // The sidecar carries the chain head of the file it retired last.
    const retiredLast = fs
      .readFileSync(`${file}.${gens.at(-1)}`, "utf8")
      .trimEnd()
      .split("\n")
      .at(-1)!;
    expect(head).toBe(createHash("sha256").update(retiredLast).digest("hex"));
    for (const g of gens) expect(fs.statSync(`${file}.${g}`).size).toBeLessThanOrEqual(300);
    const { events } = readAuditEvents(file);
    expect(events.map((e) => e.msg.split(" ")[1])).toEqual(Array.from({ length: 30 }, (_, i) => String(i)));
  });
  it("a new process continues the numbering from the sidecar (numbers never reused)", () => {
    const a = log({ maxFileBytes: 200, maxRetained: 100 });
    for (let i = 0; i < 10; i++) a.emit("s", "observation", "x".repeat(80));
    const before = retiredGenerations(file);
    const b = log({ maxFileBytes: 200, maxRetained: 100 });
    for (let i = 0; i < 10; i++) b.emit("s", "observation", "y".repeat(80));
    const after = retiredGenerations(file);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(new Set(after).size).toBe(after.length);
  });
  it("a lost sidecar does not cause reuse: numbering resumes above what is on disk and in gaps", () => {
    const a = log({ maxFileBytes: 200, maxRetained: 2 });
    for (let i = 0; i < 20; i++) a.emit("s", "observation", "x".repeat(80));
    const maxBefore = Math.max(...retiredGenerations(file));
    fs.rmSync(`${file}.gen`);
    const b = log({ maxFileBytes: 200, maxRetained: 2 });
    for (let i = 0; i < 5; i++) b.emit("s", "observation", "y".repeat(80));
    expect(Math.min(...retiredGenerations(file).filter((g) => g > maxBefore - 2))).toBeGreaterThanOrEqual(
      maxBefore - 1,
    );
    const all = [...retiredGenerations(file), ...readGaps(file).gaps.map((g) => g.gap_from)];
    expect(new Set(all).size).toBe(all.length);
  });
  it("keeps at most max_retained_generations and records each eviction as a gap", () => {
    const a = log({ maxFileBytes: 200, maxRetained: 3 });
    for (let i = 0; i < 40; i++) a.emit("s", "observation", "z".repeat(80));
    const gens = retiredGenerations(file);
    expect(gens).toHaveLength(3);
    const { gaps } = readGaps(file);
    expect(gaps.length).toBeGreaterThan(0);
    expect(gaps.map((g) => g.gap_from)).toEqual(Array.from({ length: gaps.length }, (_, i) => i + 1));
    for (const g of gaps) {
      expect(g.gap_to).toBe(g.gap_from);
      expect(typeof g.ts).toBe("number");
    }
    // Every number from 1 to the newest is either on disk or in a gap.
    expect([...gaps.map((g) => g.gap_from), ...gens]).toEqual(
      Array.from({ length: gens[2]! }, (_, i) => i + 1),
    );
  });
});

describe("an eviction interrupted after its gap record", () => {
  it("is finished by the next rotation, without a second gap record", () => {
    const killed = createAuditLog({
      file,
      level: "info",
      toFile: true,
      maxRetained: 2,
      maxFileBytes: 200,
      // Stands in for a SIGKILL between the durable gap record and the unlink.
      onRotationStep: (step) => {
        if (step === "evict") throw new Error("killed before the unlink");
      },
    });
    let failed = false;
    for (let i = 0; i < 40 && !failed; i++) failed = !killed.emit("s", "observation", "x".repeat(80)).ok;
    expect(failed).toBe(true);
    killed.close();
    const recorded = () => readGaps(file).gaps.map((g) => g.gap_from);
    const both = () => retiredGenerations(file).filter((g) => recorded().includes(g));
    expect(both()).toHaveLength(1);

    // Even when the next writer keeps more generations (nothing else to evict), it finishes it.
    const next = log({ maxFileBytes: 200, maxRetained: 10 });
    const before = retiredGenerations(file).join(",");
    for (let i = 0; i < 40 && retiredGenerations(file).join(",") === before; i++)
      expect(next.emit("s", "observation", "y".repeat(80)).ok).toBe(true);
    expect(both()).toEqual([]);
    expect(new Set(recorded()).size).toBe(recorded().length);
    expect(verifyAudit(file).ok).toBe(true);
  });
});

describe("readers", () => {
  it("filter by session and read generations oldest first", () => {
    const a = log({ maxFileBytes: 250, maxRetained: 100 });
    for (let i = 0; i < 12; i++) a.emit(i % 2 ? "odd" : "even", "observation", `n${i} ${"x".repeat(50)}`);
    const odd = readAuditEvents(file, "odd").events.map((e) => e.msg.split(" ")[0]);
    expect(odd).toEqual(["n1", "n3", "n5", "n7", "n9", "n11"]);
  });
  it("skip a torn last line with a warning, and the next writer starts on a fresh line", () => {
    const a = log();
    a.emit("s", "run", "one");
    fs.appendFileSync(file, '{"seq":1,"ts":1,"session_id":"s","ki');
    let r = readAuditEvents(file);
    expect(r.events).toHaveLength(1);
    expect(r.warnings.join()).toMatch(/torn last line/);
    log().emit("s", "final", "two");
    r = readAuditEvents(file);
    expect(r.events.map((e) => e.msg)).toEqual(["one", "two"]);
  });
  it("a write failure is returned as an error (the caller fails closed)", () => {
    fs.mkdirSync(file); // the log path is a directory: appends fail
    const r = log().emit("s", "run", "x");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/cannot write the audit log/);
  });
});

function openFdsTo(target: string): number {
  let n = 0;
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === target) n += 1;
    } catch {
      // closed between readdir and readlink
    }
  }
  return n;
}

describe("durability", () => {
  it("keeps one descriptor open between events and reopens it after a rotation", () => {
    const a = log({ maxFileBytes: 400, maxRetained: 100 });
    a.emit("s", "run", "one");
    expect(openFdsTo(file)).toBe(1);
    a.emit("s", "thought", "two");
    expect(openFdsTo(file)).toBe(1);
    for (let i = 0; i < 10; i++) a.emit("s", "observation", "x".repeat(60));
    expect(retiredGenerations(file).length).toBeGreaterThan(0);
    // The descriptor follows the live file, not the retired one.
    expect(openFdsTo(file)).toBe(1);
    a.close();
    expect(openFdsTo(file)).toBe(0);
  });

  it("writes and flushes the gap record before it deletes the generation", () => {
    const seen: { step: string; gapRecorded: boolean; fileThere: boolean }[] = [];
    const a = createAuditLog({
      file,
      level: "info",
      toFile: true,
      maxRetained: 1,
      maxFileBytes: 200,
      onRotationStep: (step) => {
        if (step !== "evict") return;
        const gaps = readGaps(file).gaps;
        const oldest = retiredGenerations(file)[0]!;
        seen.push({
          step,
          gapRecorded: gaps.some((g) => g.gap_from === oldest),
          fileThere: fs.existsSync(`${file}.${oldest}`),
        });
      },
    });
    for (let i = 0; i < 20; i++) a.emit("s", "observation", "y".repeat(80));
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) expect(s).toEqual({ step: "evict", gapRecorded: true, fileThere: true });
    // Each gap record carries the evicted file's last chain hash, where the next file resumes.
    for (const g of readGaps(file).gaps) expect(g.last).toMatch(/^[0-9a-f]{64}$/);
  });

  it("the chain continues across rotation: each generation's first prev is the last hash before it", () => {
    const a = log({ maxFileBytes: 300, maxRetained: 100 });
    for (let i = 0; i < 30; i++) a.emit("s", "observation", `e${i} ${"z".repeat(40)}`);
    const files = [...retiredGenerations(file).map((g) => `${file}.${g}`), file];
    let prevLine: string | undefined;
    for (const f of files) {
      for (const line of fs.readFileSync(f, "utf8").trimEnd().split("\n")) {
        const expected =
          prevLine === undefined ? GENESIS : createHash("sha256").update(prevLine).digest("hex");
        expect(JSON.parse(line).prev, `${f}: ${line.slice(0, 40)}`).toBe(expected);
        prevLine = line;
      }
    }
  });

  it("a torn last line is chained over: the next record names the fragment's hash", () => {
    const a = log();
    a.emit("s", "run", "one");
    const fragment = '{"seq":1,"ts":1,"session_id":"s","ki';
    fs.appendFileSync(file, fragment);
    log().emit("s", "final", "two");
    const last = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").at(-1)!);
    expect(last.prev).toBe(createHash("sha256").update(fragment).digest("hex"));
  });

  it("an HMAC key file must be mode 0600; with it the chain is an HMAC chain", () => {
    const keyFile = path.join(dir, "audit.key");
    fs.writeFileSync(keyFile, "k".repeat(32), { mode: 0o644 });
    fs.chmodSync(keyFile, 0o644);
    const bad = createAuditLog({ ...baseOpts(), hmacKeyFile: keyFile }).emit("s", "run", "x");
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatch(/mode 0644; it must be 0600.*chmod 600/);
    expect(fs.existsSync(file)).toBe(false);
    fs.chmodSync(keyFile, 0o600);
    const good = createAuditLog({ ...baseOpts(), hmacKeyFile: keyFile });
    good.emit("s", "run", "x");
    good.emit("s", "run", "y");
    const [l1, l2] = fs.readFileSync(file, "utf8").trimEnd().split("\n");
    expect(JSON.parse(l2!).prev).toBe(createHmac("sha256", "k".repeat(32)).update(l1!).digest("hex"));
  });

  it("openAuditLog loads the key once, before any write: a bad key is refused there, a good one is not read again", () => {
    const keyFile = path.join(dir, "audit.key");
    const missing = openAuditLog({ ...baseOpts(), hmacKeyFile: keyFile });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.error).toMatch(/audit\.hmac_key_file .*audit\.key: .*Fix: create it/);
    expect(fs.existsSync(file)).toBe(false);
    fs.writeFileSync(keyFile, "k".repeat(32), { mode: 0o600 });
    const opened = openAuditLog({ ...baseOpts(), hmacKeyFile: keyFile });
    if (!opened.ok) throw new Error(opened.error);
    // The key is the one loaded at open: a key file gone since then does not stop the log.
    fs.rmSync(keyFile);
    expect(opened.value.emit("s", "run", "x").ok).toBe(true);
    expect(opened.value.emit("s", "run", "y").ok).toBe(true);
    const [l1, l2] = fs.readFileSync(file, "utf8").trimEnd().split("\n");
    expect(JSON.parse(l2!).prev).toBe(createHmac("sha256", "k".repeat(32)).update(l1!).digest("hex"));
  });
});

function baseOpts() {
  return { file, level: "info" as const, toFile: true, maxRetained: 8, maxFileBytes: 1 << 20 };
}

describe("a rotation that died between link and unlink", () => {
  it("is finished by the next writer, even one whose descriptor was already open on that file", () => {
    const opts = { ...baseOpts(), maxFileBytes: 600, maxRetained: 100 };
    const survivor = createAuditLog(opts);
    survivor.emit("a", "observation", "survivor opens its descriptor");
    // The other writer dies right after linking the live file as a generation.
    const dying = createAuditLog({
      ...opts,
      onRotationStep: (step) => {
        if (step === "unlink") throw new Error("killed between link and unlink");
      },
    });
    let r: ReturnType<typeof dying.emit> = { ok: true, value: undefined };
    for (let i = 0; i < 20 && r.ok; i++) r = dying.emit("b", "observation", `b ${i} ${"x".repeat(40)}`);
    expect(r.ok).toBe(false);
    expect(fs.statSync(file).nlink).toBe(2);
    for (let i = 0; i < 20; i++) survivor.emit("a", "observation", `a ${i} ${"y".repeat(40)}`);
    // No inode retired under two numbers (main's writer would link it again: events twice).
    const inodes = retiredGenerations(file).map((g) => fs.statSync(`${file}.${g}`).ino);
    expect(new Set(inodes).size).toBe(inodes.length);
    expect(verifyAudit(file).ok).toBe(true);
    survivor.close();
    dying.close();
  });
});
