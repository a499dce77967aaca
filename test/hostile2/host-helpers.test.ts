/**
 * The token command runs on the host, outside the sandbox: a module the model planted in the
 * project (`mod.py`, a relative program) must not run when it is resolved.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";

let home: string;
let project: string;
let outside: string;
beforeEach(() => {
  home = tempDir("scoot-hh-home-");
  project = tempDir("scoot-hh-proj-");
  outside = tempDir("scoot-hh-out-");
});
afterEach(() => {
  for (const d of [home, project, outside]) removeDir(d);
});

function configure(cmd: string): void {
  fs.writeFileSync(
    path.join(home, "config.toml"),
    `[backend]\napi_key_env = ""\napi_key_cmd = ${JSON.stringify(cmd)}\n`,
  );
}

describe.skipIf(process.platform !== "linux")("host helpers start outside the project", () => {
  it("a planted mod.py is not imported by the token command, readonly included", async () => {
    const marker = path.join(outside, "hit");
    fs.writeFileSync(path.join(project, "mod.py"), `open(${JSON.stringify(marker)}, "w").write("x")\n`);
    configure('python3 -c "import mod"');
    await runCli(["config"], { home, cwd: project });
    await runCli(["--policy", "readonly", "-e", "hi"], { home, cwd: project, timeoutMs: 30_000 });
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("a relative program and a PATH entry . do not run the project's copy", async () => {
    const marker = path.join(outside, "hit");
    fs.writeFileSync(path.join(project, "tok"), `#!/bin/sh\necho x > ${marker}\necho tok\n`, { mode: 0o755 });
    configure("./tok; tok");
    await runCli(["config"], { home, cwd: project, env: { PATH: `.:${process.env.PATH}` } });
    expect(fs.existsSync(marker)).toBe(false);
  });
});
