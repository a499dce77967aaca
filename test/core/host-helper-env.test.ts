import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hostHelperEnv } from "../../src/core/host-helper-env.js";

describe("host helper environment", () => {
  it("drops relative, empty and project PATH entries, sets the Python variables, drops NODE_PATH", () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-hh-"));
    const link = `${project}-link`;
    fs.symlinkSync(project, link);
    const env = hostHelperEnv(
      { PATH: `.::bin:${project}/bin:${link}/x:/usr/bin:/bin`, NODE_PATH: "/x", PYTHONPATH: `.:${project}` },
      project,
    );
    expect(env.PATH).toBe("/usr/bin:/bin");
    expect(env.PYTHONPATH).toBe("");
    expect(env.NODE_PATH).toBeUndefined();
    expect(env.PYTHONSAFEPATH).toBe("1");
    expect(env.PYTHONNOUSERSITE).toBe("1");
    fs.rmSync(link);
    fs.rmSync(project, { recursive: true });
  });
});
