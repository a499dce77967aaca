/**
 * `scoot doctor` on how stdio MCP servers start (docs/mcp.md "MCP client", "Slow first starts"):
 * a server that hangs at start FAILs with the last lines of its stderr, redacted; `npx -y
 * pkg@1.2.3` (the fix the launcher warning names) and `node -e <code>` are not warned about, an
 * unpinned `npx` is. The `npx` here is a stand-in that runs a real MCP server at once.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-doctor-mcp-" });
const HANG_SERVER = path.resolve("test/mcp/fixtures/hang-server.mjs");
const STDERR_HANG = path.resolve("test/mcp/fixtures/stderr-hang-server.mjs");

let binDir: string | undefined;
afterEach(() => {
  if (binDir) fs.rmSync(binDir, { recursive: true, force: true });
  binDir = undefined;
});

function fakeNpx(): string {
  binDir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-npx-"));
  const npx = path.join(binDir, "npx");
  fs.writeFileSync(
    npx,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(HANG_SERVER)}\n`,
    {
      mode: 0o755,
    },
  );
  return npx;
}

const entry = (name: string, command: string, args: string[], allowed: string[]) =>
  `[[mcp.servers]]\nname = "${name}"\ncommand = ${JSON.stringify(command)}\nargs = ${JSON.stringify(args)}\nallowed_tools = ${JSON.stringify(allowed)}\n`;

describe("doctor and stdio server starts", () => {
  it("a hung start quotes its stderr tail; pinned npx and node -e are not warned about, unpinned npx is", async () => {
    scene.server = await startScriptedServer([], { models: ["scripted-model"] });
    const npx = fakeNpx();
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      [
        "[tools]\ntimeout_ms = 5000\n",
        entry("stuck", process.execPath, [STDERR_HANG], ["t"]),
        entry(
          "inline",
          process.execPath,
          ["-e", `import(${JSON.stringify(pathToFileURL(HANG_SERVER).href)})`],
          ["ok"],
        ),
        entry("pinned", npx, ["-y", "fake-mcp-server@1.2.3"], ["ok"]),
        entry("loose", npx, ["-y", "fake-mcp-server"], ["ok"]),
      ].join("\n"),
    );
    const r = await runCli(["doctor"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_MODEL: "scripted-model" },
      timeoutMs: 60_000,
    });
    const mcp = r.stdout.split("\n").filter((l) => /^\S+\s+mcp\s/.test(l));
    const of = (name: string) => mcp.filter((l) => l.includes(`server ${name} `));
    expect(of("stuck")).toHaveLength(1);
    expect(of("stuck")[0]).toMatch(
      /^FAIL .*did not complete its connection: timed out after 5 s \(tools\.timeout_ms = 5000\); its stderr ends with: starting step 5 \| starting step 6 \| starting step 7 \| connecting with Authorization: \[REDACTED\] \| waiting for the database lock$/,
    );
    expect(r.stdout + r.stderr).not.toContain("abcdefghijklmnop123456");
    expect(of("inline")).toEqual([expect.stringMatching(/^OK .*connected, 3 tools listed/)]);
    expect(of("pinned")).toEqual([expect.stringMatching(/^OK .*connected, 3 tools listed/)]);
    expect(of("loose")).toHaveLength(2);
    expect(of("loose")[1]).toMatch(
      /^WARN .*npx resolves the package from its working directory and the registry \(fake-mcp-server is not pinned to one version\), .*pin the package: npx -y pkg@1\.2\.3/,
    );
    expect(r.code).toBe(1);
  });
});
