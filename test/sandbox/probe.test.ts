/**
 * The bwrap probe (issue 11) against stand-in programs on PATH: a bwrap whose trial fails the
 * way a kernel without unprivileged user namespaces makes it fail, then the real one.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { PROBE_RETRY_MS, probeSandbox, USERNS_FIX } from "../../src/sandbox/probe.js";

let dir: string;
const realBwrap = (() => {
  try {
    return execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
})();

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-probe-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

function standIn(body: string): void {
  fs.writeFileSync(path.join(dir, "bwrap"), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
}

describe("probeSandbox", () => {
  it("reports no bwrap on PATH with the install fix", async () => {
    const p = await probeSandbox("/nonexistent-scoot-bin");
    expect(p).toMatchObject({ ok: false, reason: "bwrap (bubblewrap) is not on PATH" });
    expect(!p.ok && p.fix).toContain("apt-get install bubblewrap");
  });

  it.skipIf(!realBwrap)(
    "a trial that cannot create namespaces names the kernel fix; a failure is retried later",
    async () => {
      standIn(
        'if [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi\n' +
          'echo "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1',
      );
      vi.useFakeTimers({ toFake: ["Date"] });
      const failed = await probeSandbox(dir);
      expect(failed.ok).toBe(false);
      expect(!failed.ok && failed.reason).toMatch(
        /^bwrap cannot create its namespaces here: bwrap: No permissions/,
      );
      expect(!failed.ok && failed.fix).toBe(USERNS_FIX);
      // The machine is fixed (here: the stand-in now runs the real bwrap).
      standIn(`exec ${realBwrap} "$@"`);
      expect((await probeSandbox(dir)).ok, "still the cached failure within the retry interval").toBe(false);
      vi.setSystemTime(Date.now() + PROBE_RETRY_MS + 1);
      expect(await probeSandbox(dir)).toMatchObject({
        ok: true,
        version: expect.stringMatching(/^\d+\.\d+/),
      });
    },
  );
});
