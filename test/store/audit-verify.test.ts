/**
 * `audit verify`: each kind of tampering is caught and named by file, line and kind;
 * legitimate history (retention gaps, a torn last line, a crash-repaired tear) is reported, not
 * failed. The last block drives the built CLI.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { readGaps, retiredGenerations } from "../../src/store/audit-rotation.js";
import { verifyAudit } from "../../src/store/audit-verify.js";
import { createAuditLog } from "../../src/store/audit-writer.js";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";

const scene = useScene({ home: "scoot-test-" });
let file: string;
beforeEach(() => {
  fs.mkdirSync(path.join(scene.home, "logs"), { recursive: true });
  file = path.join(scene.home, "logs", "audit.jsonl");
});

function write(n: number, over: { maxFileBytes?: number; maxRetained?: number; hmacKeyFile?: string } = {}) {
  const log = createAuditLog({
    file,
    level: "info",
    toFile: true,
    maxRetained: over.maxRetained ?? 100,
    maxFileBytes: over.maxFileBytes ?? 1 << 20,
    ...(over.hmacKeyFile ? { hmacKeyFile: over.hmacKeyFile } : {}),
  });
  for (let i = 0; i < n; i++) {
    const r = log.emit("sess", i % 3 === 0 ? "tool_call" : "observation", `event ${i}`);
    if (!r.ok) throw new Error(r.error);
  }
  log.close();
}

function lines(f = file): string[] {
  return fs.readFileSync(f, "utf8").trimEnd().split("\n");
}
function put(ls: string[], f = file): void {
  fs.writeFileSync(f, `${ls.join("\n")}\n`);
}
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

describe("an intact log", () => {
  it("verifies, with the head hash of the last line", () => {
    write(12);
    const r = verifyAudit(file);
    expect(r.ok).toBe(true);
    expect(r.events).toBe(12);
    expect(r.head).toBe(sha(lines().at(-1)!));
  });
  it("across many generations", () => {
    write(60, { maxFileBytes: 600 });
    expect(retiredGenerations(file).length).toBeGreaterThan(5);
    const r = verifyAudit(file);
    expect(r.ok, JSON.stringify(r.break)).toBe(true);
    expect(r.events).toBe(60);
  });
});

describe("tampering is caught and named", () => {
  it("an edited field", () => {
    write(10);
    const ls = lines();
    ls[4] = ls[4]!.replace('"event 4"', '"event 4 (harmless, honest)"');
    put(ls);
    const r = verifyAudit(file);
    expect(r.ok).toBe(false);
    expect(r.break).toMatchObject({ file, line: 5, kind: "edited" });
  });
  it("a deleted line", () => {
    write(10);
    const ls = lines();
    ls.splice(4, 1);
    put(ls);
    expect(verifyAudit(file).break).toMatchObject({ file, line: 5, kind: "deleted" });
  });
  it("an inserted line (a copy of a real event)", () => {
    write(10);
    const ls = lines();
    ls.splice(6, 0, ls[2]!);
    put(ls);
    expect(verifyAudit(file).break).toMatchObject({ file, line: 7, kind: "inserted" });
  });
  it("an inserted line chained to the one before it", () => {
    write(10);
    const ls = lines();
    const forged = JSON.stringify({
      seq: 99,
      ts: 1,
      session_id: "sess",
      kind: "final",
      msg: "x",
      prev: sha(ls[5]!),
    });
    ls.splice(6, 0, forged);
    put(ls);
    expect(verifyAudit(file).break).toMatchObject({ file, line: 7, kind: "inserted" });
  });
  it("two swapped lines", () => {
    write(10);
    const ls = lines();
    [ls[3], ls[4]] = [ls[4]!, ls[3]!];
    put(ls);
    expect(verifyAudit(file).break).toMatchObject({ file, line: 4, kind: "reordered" });
  });
  it("a generation removed without a gap record", () => {
    write(60, { maxFileBytes: 600 });
    const gens = retiredGenerations(file);
    fs.rmSync(`${file}.${gens[2]}`);
    const r = verifyAudit(file);
    expect(r.break).toMatchObject({ file: `${file}.${gens[3]}`, line: 1, kind: "generation_missing" });
    expect(r.break!.detail).toContain(`audit.jsonl.${gens[2]}`);
  });
  it("the newest generation removed without a gap record", () => {
    write(60, { maxFileBytes: 600 });
    const gens = retiredGenerations(file);
    fs.rmSync(`${file}.${gens.at(-1)}`);
    expect(verifyAudit(file).break).toMatchObject({ file, line: 1, kind: "generation_missing" });
  });
  it("the oldest generation removed without a gap record", () => {
    write(60, { maxFileBytes: 600 });
    fs.rmSync(`${file}.1`);
    expect(verifyAudit(file).break).toMatchObject({ file: `${file}.2`, line: 1, kind: "generation_missing" });
  });
  it("a retained generation deleted without a record, later followed by real evictions", () => {
    write(30, { maxFileBytes: 600, maxRetained: 3 });
    const gens = retiredGenerations(file);
    fs.rmSync(`${file}.${gens[1]}`);
    // Writing on evicts the generations around the hole, each with its gap record.
    write(60, { maxFileBytes: 600, maxRetained: 3 });
    expect(readGaps(file).gaps.map((g) => g.gap_from)).not.toContain(gens[1]);
    const r = verifyAudit(file);
    expect(r.break).toMatchObject({ kind: "generation_missing" });
    expect(r.break!.detail).toContain(`audit.jsonl.${gens[1]} is missing`);
  });
  it("a torn line that is not the last", () => {
    write(10);
    const ls = lines();
    ls[3] = ls[3]!.slice(0, 30);
    put(ls);
    expect(verifyAudit(file).break).toMatchObject({ file, line: 4, kind: "torn" });
  });
  it("with an HMAC key, a chain recomputed with plain SHA-256 after an edit is caught", () => {
    const key = path.join(scene.home, "audit.key");
    fs.writeFileSync(key, "a-secret-key-for-the-chain-0123456789", { mode: 0o600 });
    write(10, { hmacKeyFile: key });
    const keyBytes = Buffer.from(fs.readFileSync(key, "utf8").trimEnd());
    expect(verifyAudit(file, { key: keyBytes }).ok).toBe(true);
    // The attacker edits line 5 and recomputes every later prev without the key.
    const ls = lines();
    ls[4] = ls[4]!.replace('"event 4"', '"event 4 edited"');
    for (let i = 5; i < ls.length; i++) {
      const ev = JSON.parse(ls[i]!);
      ev.prev = sha(ls[i - 1]!);
      ls[i] = JSON.stringify(ev);
    }
    put(ls);
    // Without the key the forgery passes from line 5 on; with it, it cannot.
    const r = verifyAudit(file, { key: keyBytes });
    expect(r.ok).toBe(false);
    expect(r.break!.line).toBeLessThanOrEqual(6);
  });
  it("with an HMAC key, a forged gap record covering a deleted generation is caught", () => {
    const key = path.join(scene.home, "audit.key");
    fs.writeFileSync(key, "a-secret-key-for-the-chain-0123456789", { mode: 0o600 });
    const keyBytes = Buffer.from(fs.readFileSync(key, "utf8").trimEnd());
    write(60, { maxFileBytes: 600, hmacKeyFile: key });
    const first = lines(`${file}.2`)[0]!;
    fs.rmSync(`${file}.1`);
    fs.writeFileSync(
      `${file}.gaps.jsonl`,
      `${JSON.stringify({ gap_from: 1, gap_to: 1, ts: 1, last: JSON.parse(first).prev })}\n`,
    );
    expect(verifyAudit(file, { key: keyBytes }).break).toMatchObject({ kind: "gap_not_authentic" });
  });
});

describe("legitimate history is reported, not failed", () => {
  it("generations removed by retention with gap records", () => {
    write(80, { maxFileBytes: 600, maxRetained: 3 });
    expect(readGaps(file).gaps.length).toBeGreaterThan(2);
    const r = verifyAudit(file);
    expect(r.ok, JSON.stringify(r.break)).toBe(true);
    expect(r.gaps.length).toBe(readGaps(file).gaps.length);
    expect(r.notes.join("\n")).toMatch(/removed by retention/);
  });
  it("retention keeping no generation at all (max_retained_generations = 0)", () => {
    write(40, { maxFileBytes: 600, maxRetained: 0 });
    expect(retiredGenerations(file)).toEqual([]);
    expect(verifyAudit(file).ok).toBe(true);
  });
  it("a torn last line, and a tear the next writer chained over", () => {
    write(5);
    fs.appendFileSync(file, '{"seq":5,"ts":1,"session_id":"sess","ki');
    let r = verifyAudit(file);
    expect(r.ok).toBe(true);
    expect(r.notes.join()).toMatch(/torn last line/);
    write(3);
    r = verifyAudit(file);
    expect(r.ok, JSON.stringify(r.break)).toBe(true);
    expect(r.notes.join()).toMatch(/repaired by the next writer/);
  });
  it("lines written before the chain existed", () => {
    fs.writeFileSync(
      file,
      `${JSON.stringify({ seq: 0, ts: 1, session_id: "old", kind: "run", msg: "old" })}\n`,
    );
    write(4);
    const r = verifyAudit(file);
    expect(r.ok, JSON.stringify(r.break)).toBe(true);
    expect(r.unchained).toBe(1);
  });
  it("reads with bounded memory: a line longer than a read chunk still verifies", () => {
    const log = createAuditLog({ file, level: "info", toFile: true, maxRetained: 8, maxFileBytes: 1 << 22 });
    log.emit("s", "observation", "x".repeat(200_000));
    log.emit("s", "observation", "y");
    log.close();
    expect(verifyAudit(file).ok).toBe(true);
  });
});

describe("scoot audit verify (built CLI)", () => {
  it("exit 0 when intact, exit 1 naming file, line and kind; --json; doctor checks the live file", async () => {
    write(8);
    let r = await runCli(["audit", "verify"], { home: scene.home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^intact: 8 chained event/);
    const ls = lines();
    ls[2] = ls[2]!.replace('"event 2"', '"event two"');
    put(ls);
    r = await runCli(["audit", "verify"], { home: scene.home });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`break: edited at ${file}:3`);
    r = await runCli(["audit", "verify", "--json"], { home: scene.home });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).break).toMatchObject({ file, line: 3, kind: "edited" });
    const d = await runCli(["doctor", "--json"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    const chain = JSON.parse(d.stdout).checks.find((c: { name: string }) => c.name === "audit.chain");
    expect(chain).toMatchObject({ status: "FAIL" });
    expect(chain.detail).toMatch(/edited at .*audit\.jsonl:3/);
  });
  it("a key file with a loose mode is a configuration error (exit 2) naming the fix", async () => {
    const key = path.join(scene.home, "audit.key");
    fs.writeFileSync(key, "k".repeat(32), { mode: 0o644 });
    fs.chmodSync(key, 0o644);
    const r = await runCli(["audit", "verify"], {
      home: scene.home,
      env: { SCOOT_AUDIT_HMAC_KEY_FILE: key },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/mode 0644; it must be 0600.*Fix: chmod 600/);
  });

  it("a run with a loose key file mode exits 2 before any effect; doctor warns about level=warn", async () => {
    const key = path.join(scene.home, "audit.key");
    fs.writeFileSync(key, "k".repeat(32), { mode: 0o640 });
    fs.chmodSync(key, 0o640);
    const run = await runCli(["-e", "anything"], {
      home: scene.home,
      env: { SCOOT_AUDIT_HMAC_KEY_FILE: key, SCOOT_BACKEND_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/audit\.hmac_key_file .* has mode 0640; it must be 0600/);
    expect(fs.existsSync(file)).toBe(false);
    const d = await runCli(["doctor", "--json"], {
      home: scene.home,
      env: { SCOOT_AUDIT_LEVEL: "warn", SCOOT_BACKEND_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    const level = JSON.parse(d.stdout).checks.find((c: { name: string }) => c.name === "audit.level");
    expect(level).toMatchObject({ status: "WARN" });
    expect(level.detail).toMatch(/tool_call, policy_deny and system_error are always written/);
  });
});
