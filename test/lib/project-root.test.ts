/** The library refuses a dangerous project root when a run starts (docs/safety.md "Dangerous project roots"). */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createScoot } from "../../src/lib/scoot.js";

let home: string;
beforeAll(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-lib-root-")));
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

it.each([["/"], ["home"]])(
  "createScoot({cwd: %s}).run() rejects naming the directory and the fix",
  async (which) => {
    const cwd = which === "/" ? "/" : home;
    const scoot = createScoot({ home, cwd, policy: "guarded" });
    try {
      await expect(scoot.run("go")).rejects.toThrow(
        new RegExp(`refusing to run in ${cwd}.*Fix: start Scoot`),
      );
    } finally {
      await scoot.close();
    }
  },
);
