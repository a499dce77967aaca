/**
 * Tampering with the audit logs as someone with write access to logs/ would (docs/sessions.md
 * "Sessions and audit"), for a SHA-256 and an HMAC chain: each forgery is caught and named,
 * each poisoned number ends every command within seconds with a message, and the writer
 * neither hangs nor deletes history it has not recorded. The tamperings that already held
 * before the chain record are kept alongside.
 */
import { createHash, createHmac } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { retiredGenerations } from "../../src/store/audit-rotation.js";
import { verifyAudit } from "../../src/store/audit-verify.js";
import { createAuditLog } from "../../src/store/audit-writer.js";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";

const scene = useScene({ home: "scoot-tamper-" });
let file: string;
let keyFile: string;
const KEY = "a-secret-key-for-the-chain-0123456789";
beforeEach(() => {
  fs.mkdirSync(path.join(scene.home, "logs"), { recursive: true });
  file = path.join(scene.home, "logs", "audit.jsonl");
  keyFile = path.join(scene.home, "audit.key");
  fs.writeFileSync(keyFile, KEY, { mode: 0o600 });
});

const CLI_TIMEOUT_MS = 20_000;

describe.each(["sha256", "hmac"] as const)("%s chain", (mode) => {
  const key = () => (mode === "hmac" ? Buffer.from(KEY) : undefined);
  const link = (line: string) =>
    (mode === "hmac" ? createHmac("sha256", KEY) : createHash("sha256")).update(line).digest("hex");
  const opts = (over: { maxFileBytes?: number; maxRetained?: number } = {}) => ({
    file,
    level: "info" as const,
    toFile: true,
    maxRetained: over.maxRetained ?? 100,
    maxFileBytes: over.maxFileBytes ?? 1 << 20,
    ...(mode === "hmac" ? { hmacKeyFile: keyFile } : {}),
  });
  const write = (n: number, over: { maxFileBytes?: number; maxRetained?: number } = {}) => {
    const log = createAuditLog(opts(over));
    for (let i = 0; i < n; i++) {
      const r = log.emit("sess", "tool_call", `event ${i}`);
      if (!r.ok) throw new Error(r.error);
    }
    log.close();
  };
  const lines = (f = file) => fs.readFileSync(f, "utf8").trimEnd().split("\n");
  const put = (ls: string[], f = file) => fs.writeFileSync(f, `${ls.join("\n")}\n`);
  const verify = () => verifyAudit(file, { key: key() });
  const cli = (args: string[]) =>
    runCli(args, {
      home: scene.home,
      timeoutMs: CLI_TIMEOUT_MS,
      env: mode === "hmac" ? { SCOOT_AUDIT_HMAC_KEY_FILE: keyFile } : {},
    });

  describe("already held", () => {
    it("an edited field", () => {
      write(10);
      const ls = lines();
      ls[4] = ls[4]!.replace('"event 4"', '"event 4 (honest)"');
      put(ls);
      expect(verify().break).toMatchObject({ file, line: 5, kind: "edited" });
    });
    it("a deleted line", () => {
      write(10);
      const ls = lines();
      ls.splice(4, 1);
      put(ls);
      expect(verify().ok).toBe(false);
    });
    it("the newest generation removed without a gap record", () => {
      write(40, { maxFileBytes: 600 });
      fs.rmSync(`${file}.${retiredGenerations(file).at(-1)}`);
      expect(verify().break?.kind).toBe("generation_missing");
    });
  });

  describe("forgeries that verified before", () => {
    it("every prev stripped: a break at line 1, and the next writer refuses to build on it", () => {
      write(10);
      put(
        lines().map((l) => {
          const { prev: _drop, ...rest } = JSON.parse(l) as Record<string, unknown>;
          return JSON.stringify(rest);
        }),
      );
      const r = verify();
      expect(r.ok).toBe(false);
      expect(r.break).toMatchObject({ file, line: 1, kind: "unchained" });
      expect(r.break!.detail).toMatch(/every line is chained: chain links were stripped/);
    });

    it("a hard link to the live file: verify refuses it; the writer refuses and deletes nothing", () => {
      write(10);
      const other = path.join(scene.home, "logs", "innocent.txt");
      fs.linkSync(file, other);
      const ls = lines();
      ls[2] = ls[2]!.replace('"event 2"', '"event two"');
      put(ls, other);
      const r = verify();
      expect(r.break).toMatchObject({ file, kind: "hard_link" });
      expect(r.break!.detail).toMatch(/2 hard links.*Fix: find the other name/);
      const log = createAuditLog(opts());
      const e = log.emit("sess", "tool_call", "after the link");
      log.close();
      expect(e.ok).toBe(false);
      if (!e.ok) expect(e.error).toMatch(/hard links, and no retired generation is one of them: refused/);
      // The live history is still there, under its own name.
      expect(lines()).toHaveLength(10);
    });

    it("a hard link to a retired generation is refused", () => {
      write(40, { maxFileBytes: 600 });
      const g = retiredGenerations(file)[0]!;
      fs.linkSync(`${file}.${g}`, path.join(scene.home, "logs", "copy"));
      expect(verify().break).toMatchObject({ file: `${file}.${g}`, kind: "hard_link" });
    });

    it("the newest retired generation and the live file both deleted: tail loss is reported", async () => {
      write(40, { maxFileBytes: 600 });
      const newest = retiredGenerations(file).at(-1)!;
      fs.rmSync(`${file}.${newest}`);
      fs.rmSync(file);
      const r = verify();
      expect(r.break).toMatchObject({ kind: "tail_lost" });
      expect(r.break!.detail).toContain(`audit.jsonl.${newest} and what followed it were removed`);
      const c = await cli(["audit", "verify"]);
      expect(c.code).toBe(1);
      expect(c.stdout).toMatch(/break: tail_lost/);
    });

    it("--head: a head recorded earlier must still be in the log", async () => {
      write(10);
      const head = verify().head!;
      expect((await cli(["audit", "verify", "--head", head])).code).toBe(0);
      put(lines().slice(0, 8));
      const c = await cli(["audit", "verify", "--head", head]);
      expect(c.code).toBe(1);
      expect(c.stdout).toMatch(/break: tail_lost.*is not the hash of any line/);
    });

    it("a sidecar poisoned with 2^53: the writer rotates on within seconds, verify names the file", () => {
      write(20, { maxFileBytes: 600 });
      fs.writeFileSync(`${file}.gen`, `${2 ** 53}\n${"0".repeat(64)}\n`);
      // Before: the writer spun forever on link() EEXIST holding the audit lock.
      write(20, { maxFileBytes: 600 });
      expect(retiredGenerations(file).every((g) => g < 1000)).toBe(true);
      // The writer's next rotation rewrote the sidecar with a sane number; poison it again.
      fs.writeFileSync(`${file}.gen`, `${2 ** 53}\n${"0".repeat(64)}\n`);
      const r = verify();
      expect(r.break).toMatchObject({ file: `${file}.gen`, kind: "bad_number" });
      expect(r.break!.detail).toMatch(/outside 1\.\.1000000001.*not obeyed\. Fix:/);
    });

    it("a huge generation number: verify ends within seconds with a message", async () => {
      write(20, { maxFileBytes: 600 });
      fs.copyFileSync(file, `${file}.999999999`);
      fs.writeFileSync(file, "");
      let c = await cli(["audit", "verify"]);
      expect(c.code).toBe(1);
      expect(c.stdout).toMatch(/break: generation_missing.*missing \(\d+ numbers\)/);
      fs.renameSync(`${file}.999999999`, `${file}.99999999999999`);
      c = await cli(["audit", "verify"]);
      expect(c.code).toBe(1);
      expect(c.stdout).toMatch(/break: bad_number.*99999999999999 is outside 1\.\.1000000000/);
    });

    it("gap_to = 10^12: later runs still write, verify names the record", async () => {
      write(20, { maxFileBytes: 600 });
      fs.appendFileSync(`${file}.gaps.jsonl`, `${JSON.stringify({ gap_from: 1, gap_to: 1e12, ts: 1 })}\n`);
      write(20, { maxFileBytes: 600, maxRetained: 2 });
      expect(retiredGenerations(file).length).toBe(2);
      const c = await cli(["audit", "verify"]);
      expect(c.code).toBe(1);
      expect(c.stdout).toMatch(/break: bad_number.*gap_to=1000000000000 is outside.*Fix: remove that record/);
    });

    it("a deleted chain record is named; a poisoned one stops the writer with the fix", () => {
      write(5);
      fs.rmSync(`${file}.chain`);
      expect(verify().break).toMatchObject({ kind: "chain_record" });
      fs.writeFileSync(`${file}.chain`, `${JSON.stringify({ mode, legacy: 1e15 })}\n`);
      expect(verify().break).toMatchObject({ kind: "chain_record" });
      const log = createAuditLog(opts());
      const e = log.emit("sess", "tool_call", "x");
      log.close();
      expect(e.ok).toBe(false);
      if (!e.ok) expect(e.error).toMatch(/legacy=1000000000000000 is outside.*Fix:/);
    });

    it("the chain recomputed in the other mode, with config.toml edited to match", async () => {
      // As the user configured it.
      write(8);
      // The attacker edits a line and recomputes the whole chain in the other mode, then
      // edits config.toml (here: the key setting) to match that mode.
      const ls = lines();
      ls[3] = ls[3]!.replace('"event 3"', '"event 3 forged"');
      let prev = "0".repeat(64);
      const other = (line: string) =>
        (mode === "hmac" ? createHash("sha256") : createHmac("sha256", KEY)).update(line).digest("hex");
      const forged = ls.map((l) => {
        const ev = JSON.parse(l) as Record<string, unknown>;
        ev.prev = prev;
        const out = JSON.stringify(ev);
        prev = other(out);
        return out;
      });
      put(forged);
      const forgedEnv = mode === "hmac" ? {} : { SCOOT_AUDIT_HMAC_KEY_FILE: keyFile };
      const c = await runCli(["audit", "verify"], {
        home: scene.home,
        timeoutMs: CLI_TIMEOUT_MS,
        env: forgedEnv,
      });
      expect(c.code).toBe(1);
      expect(c.stdout).toMatch(
        mode === "hmac"
          ? /break: chain_record.*is an HMAC chain.*no audit\.hmac_key_file is configured/
          : /break: chain_record.*is a SHA-256 chain.*audit\.hmac_key_file is set/,
      );
      // Forged consistently: in the other mode every link holds.
      expect(JSON.parse(forged[1]!).prev).toBe(other(forged[0]!));
      expect(JSON.parse(forged[1]!).prev).not.toBe(link(forged[0]!));
    });
  });
});

describe("the key file removed from config.toml beside the logs", () => {
  it("an HMAC log re-chained with SHA-256 and the config edited does not verify", async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), `[audit]\nhmac_key_file = "${keyFile}"\n`);
    const log = createAuditLog({
      file,
      level: "info",
      toFile: true,
      maxRetained: 10,
      maxFileBytes: 1 << 20,
      hmacKeyFile: keyFile,
    });
    for (let i = 0; i < 6; i++) log.emit("sess", "tool_call", `event ${i}`);
    log.close();
    expect((await runCli(["audit", "verify"], { home: scene.home, timeoutMs: CLI_TIMEOUT_MS })).code).toBe(0);
    const ls = fs.readFileSync(file, "utf8").trimEnd().split("\n");
    let prev = "0".repeat(64);
    const forged = ls.map((l, i) => {
      const ev = JSON.parse(l) as Record<string, unknown>;
      if (i === 2) ev.msg = "nothing happened here";
      ev.prev = prev;
      const out = JSON.stringify(ev);
      prev = createHash("sha256").update(out).digest("hex");
      return out;
    });
    fs.writeFileSync(file, `${forged.join("\n")}\n`);
    fs.writeFileSync(path.join(scene.home, "config.toml"), "[audit]\n");
    const r = await runCli(["audit", "verify"], { home: scene.home, timeoutMs: CLI_TIMEOUT_MS });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/break: chain_record.*HMAC chain.*Fix: set audit\.hmac_key_file back/);
    // And a run with the edited config does not chain SHA-256 links onto the HMAC log.
    const before = fs.readFileSync(file, "utf8");
    const log2 = createAuditLog({
      file,
      level: "info",
      toFile: true,
      maxRetained: 10,
      maxFileBytes: 1 << 20,
    });
    const e = log2.emit("sess", "tool_call", "x");
    log2.close();
    expect(e.ok).toBe(false);
    expect(fs.readFileSync(file, "utf8")).toBe(before);
  });
});
