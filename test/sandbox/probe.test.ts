/**
 * The bwrap probe against stand-in programs: where the binary is looked for (never PATH), a
 * bwrap whose trial fails the way a kernel without unprivileged user namespaces makes it
 * fail, the real one, and the pin that refuses a binary swapped after its trial.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  checkPinned,
  locateBwrap,
  PROBE_RETRY_MS,
  probeSandbox,
  TRUSTED_BWRAP_LOCATIONS,
  USERNS_FIX,
} from "../../src/sandbox/probe.js";

let dir: string;
const realBwrap = TRUSTED_BWRAP_LOCATIONS.find((p) => fs.existsSync(p));
const bwrapRuns = (() => {
  if (!realBwrap) return false;
  try {
    execFileSync(realBwrap, ["--ro-bind", "/", "/", "--unshare-all", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-probe-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

function standIn(name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

describe("locating bwrap", () => {
  it("uses only fixed system locations or tools.sandbox_bwrap_path, never PATH", () => {
    const onPath = standIn("bwrap", "exit 0");
    const old = process.env.PATH;
    process.env.PATH = `${dir}:${old}`;
    try {
      const found = locateBwrap(undefined);
      expect(found.ok && found.bwrap).not.toBe(onPath);
      expect(locateBwrap(undefined, ["/nonexistent/bwrap"])).toMatchObject({
        ok: false,
        reason: "bwrap (bubblewrap) is not installed in /nonexistent/bwrap",
      });
    } finally {
      process.env.PATH = old;
    }
    expect(locateBwrap(onPath)).toEqual({ ok: true, bwrap: onPath });
  });
  it.each([
    ["bin/bwrap", /is not an absolute path/],
    ["/nonexistent/bwrap", /is not an executable file/],
  ])("refuses tools.sandbox_bwrap_path = %s with the fix", (configured, reason) => {
    const r = locateBwrap(configured);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
    expect(!r.ok && r.fix).toMatch(/tools.sandbox_bwrap_path|bubblewrap/);
  });
});

describe("probeSandbox", () => {
  it("reports a missing bwrap with the install fix", async () => {
    const p = await probeSandbox(undefined, ["/nonexistent-scoot-bin/bwrap"]);
    expect(p.ok).toBe(false);
    expect(!p.ok && p.fix).toContain("apt-get install bubblewrap");
  });

  it.skipIf(!bwrapRuns)(
    "a trial that cannot create namespaces names the kernel fix; a failure is retried later",
    async () => {
      const file = standIn(
        "bwrap-userns",
        'if [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi\n' +
          'echo "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1',
      );
      vi.useFakeTimers({ toFake: ["Date"] });
      const failed = await probeSandbox(file);
      expect(failed.ok).toBe(false);
      expect(!failed.ok && failed.reason).toMatch(
        /^bwrap cannot create its namespaces here: bwrap: No permissions/,
      );
      expect(!failed.ok && failed.fix).toBe(USERNS_FIX);
      // The machine is fixed (here: the stand-in now runs the real bwrap).
      standIn("bwrap-userns", `exec ${realBwrap} "$@"`);
      expect((await probeSandbox(file)).ok, "still the cached failure within the retry interval").toBe(false);
      vi.setSystemTime(Date.now() + PROBE_RETRY_MS + 1);
      const ok = await probeSandbox(file);
      expect(ok).toMatchObject({
        ok: true,
        version: expect.stringMatching(/^\d+\.\d+/),
        seccomp: { ok: true },
      });
    },
  );

  it.skipIf(!bwrapRuns)(
    "a bwrap that refuses the seccomp filter still runs, and says what it lacks",
    async () => {
      const file = standIn(
        "bwrap-noseccomp",
        `for a in "$@"; do [ "$a" = --seccomp ] && { echo "bwrap: seccomp not supported" >&2; exit 1; }; done\nexec ${realBwrap} "$@"`,
      );
      const p = await probeSandbox(file);
      expect(p).toMatchObject({ ok: true, seccomp: { ok: false } });
      expect(p.ok && !p.seccomp.ok && p.seccomp.reason).toMatch(
        /refused the seccomp filter: bwrap: seccomp not supported/,
      );
    },
  );

  it.skipIf(!bwrapRuns)(
    "probes --disable-userns: used where bwrap has it, not where it is refused",
    async () => {
      const has = await probeSandbox(standIn("bwrap-userns-lock", `exec ${realBwrap} "$@"`));
      const helpText = execFileSync(realBwrap!, ["--help"], { encoding: "utf8" });
      expect(has).toMatchObject({ ok: true, disableUserns: helpText.includes("--disable-userns") });
      const old = standIn(
        "bwrap-no-userns-lock",
        `for a in "$@"; do [ "$a" = --disable-userns ] && { echo "bwrap: Unknown option --disable-userns" >&2; exit 1; }; done\nexec ${realBwrap} "$@"`,
      );
      expect(await probeSandbox(old)).toMatchObject({
        ok: true,
        seccomp: { ok: true },
        disableUserns: false,
      });
    },
  );

  it.skipIf(!bwrapRuns)("pins the binary by device and inode: a replaced one is refused", async () => {
    const file = standIn("bwrap-pinned", `exec ${realBwrap} "$@"`);
    const p = await probeSandbox(file);
    if (!p.ok) throw new Error(p.reason);
    expect(checkPinned(p)).toBeUndefined();
    // Replaced by rename, as an attacker with write access to the directory would do it.
    const swap = path.join(dir, "swap");
    fs.writeFileSync(swap, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    fs.renameSync(swap, file);
    expect(checkPinned(p)).toMatch(/was replaced since it was checked/);
    fs.rmSync(file);
    expect(checkPinned(p)).toMatch(/is gone since it was checked/);
  });

  it.skipIf(!bwrapRuns)(
    "pins the content too: a copy rewritten in place (same inode, size and mtime) is refused",
    async () => {
      const file = path.join(dir, "bwrap-copy");
      fs.copyFileSync(realBwrap!, file);
      fs.chmodSync(file, 0o755);
      const p = await probeSandbox(file);
      if (!p.ok) throw new Error(p.reason);
      expect(checkPinned(p)).toBeUndefined();
      // A touch alone (same content) is not a change.
      const before = fs.statSync(file);
      fs.utimesSync(file, before.atime, new Date(before.mtimeMs + 1000));
      expect(checkPinned(p)).toBeUndefined();
      const st = fs.statSync(file);
      const fd = fs.openSync(file, "r+");
      fs.writeSync(fd, Buffer.from("#!/bin/sh\nexit 0\n"), 0, 17, 0);
      fs.closeSync(fd);
      fs.utimesSync(file, st.atime, st.mtime);
      const after = fs.statSync(file);
      expect([after.ino, after.size, after.mtimeMs]).toEqual([st.ino, st.size, st.mtimeMs]);
      expect(checkPinned(p)).toMatch(/bwrap-copy was rewritten in place since it was checked \(SHA-256/);
    },
  );
});
