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

function configureServer(command: string, args: string[]): void {
  fs.writeFileSync(
    path.join(home, "config.toml"),
    [
      "[backend]",
      'api_key_env = ""',
      "[[mcp.servers]]",
      'name = "planted"',
      'transport = "stdio"',
      `command = ${JSON.stringify(command)}`,
      `args = ${JSON.stringify(args)}`,
      'allowed_tools = ["echo"]',
      "",
    ].join("\n"),
  );
}

describe.skipIf(process.platform !== "linux")("stdio MCP servers start outside the project", () => {
  it("npx does not run a package the model planted in the project's node_modules", async () => {
    const marker = path.join(outside, "hit");
    const bin = path.join(project, "node_modules", ".bin");
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, "planted-mcp"), `#!/bin/sh\necho x > ${marker}\n`, { mode: 0o755 });
    // --offline --no: nothing is fetched; without a planted copy npx fails at once.
    configureServer("npx", ["--offline", "--no", "planted-mcp"]);
    const r = await runCli(["doctor"], { home, cwd: project, timeoutMs: 60_000 });
    expect(r.stdout + r.stderr).toMatch(/npx resolves the package from its working directory/);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("python3 -m does not import a module the model planted in the project", async () => {
    const marker = path.join(outside, "hit");
    fs.writeFileSync(
      path.join(project, "plantedmod.py"),
      `open(${JSON.stringify(marker)}, "w").write("x")\n`,
    );
    configureServer("python3", ["-m", "plantedmod"]);
    const r = await runCli(["doctor"], { home, cwd: project, timeoutMs: 60_000 });
    expect(r.stdout + r.stderr).toMatch(/python3 -m imports the module from its search path/);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("a server starts in Scoot's home, with no project, relative or empty PATH entry and the Python guards", async () => {
    const dump = path.join(outside, "env");
    configureServer("/bin/sh", ["-c", `pwd > ${dump}; env >> ${dump}`]);
    await runCli(["doctor"], {
      home,
      cwd: project,
      timeoutMs: 60_000,
      env: { PATH: `.::${project}/bin:${process.env.PATH}`, NODE_PATH: project },
    });
    const lines = fs.readFileSync(dump, "utf8").split("\n");
    expect(fs.realpathSync(lines[0]!)).toBe(fs.realpathSync(home));
    const env = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
    const entries = (env.get("PATH") ?? "").split(":");
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) {
      expect(path.isAbsolute(e)).toBe(true);
      expect(e.startsWith(project)).toBe(false);
    }
    expect(env.get("PYTHONSAFEPATH")).toBe("1");
    expect(env.get("PYTHONNOUSERSITE")).toBe("1");
    expect(env.has("NODE_PATH")).toBe(false);
  });
});
