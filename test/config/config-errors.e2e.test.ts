/**
 * Configuration errors through the built CLI (docs/configuration.md "Bad input"): every problem
 * of the file and the environment at once, exit 2, and a bad `backend.base_url` quoted whole with
 * the URL probably meant; nothing reaches the model server.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-config-errors-", project: "scoot-config-errors-project-" });

const lines = (text: string) => text.split("\n").filter((l) => l !== "");

describe("configuration errors exit 2", () => {
  it("three problems in the file are three lines, then exit 2, for a run and for scoot config", async () => {
    const file = path.join(scene.home, "config.toml");
    fs.writeFileSync(
      file,
      [
        "[backend]",
        'base_url = "localhost:8080"',
        "[tools]",
        'policy = "gaurded"',
        "[agent]",
        "max_turns = 0",
        "",
      ].join("\n"),
    );
    scene.server = await startScriptedServer([step("final", "never asked")]);
    for (const args of [["-e", "hello"], ["config"]]) {
      const r = await runCli(args, { home: scene.home, cwd: scene.project });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      expect(lines(r.stderr)).toEqual([
        `scoot: warning: ${file}: tools.policy: unknown policy "gaurded"; using "readonly" (valid: readonly, guarded, unrestricted, yolo)`,
        `scoot: configuration error: ${file}: backend.base_url: "localhost:8080" does not start with http:// or https://; write it as http://localhost:8080/v1`,
        `scoot: configuration error: ${file}: agent.max_turns: must be in 1..100000, got 0`,
      ]);
    }
    expect(scene.server.requests).toEqual([]);
  });

  it.each([
    ["localhost:8080", "does not start with http:// or https://; write it as http://localhost:8080/v1"],
    ["localhost:", "does not start with http:// or https://; write it as http://localhost:<port>/v1"],
    ["http//x", 'is not a URL: the ":" after http is missing; write it as http://x/v1'],
    ["ftp://x", "uses ftp://; model servers are reached over http:// or https://, e.g. http://x/v1"],
  ])("SCOOT_BACKEND_BASE_URL=%s: exit 2, the whole value quoted, the URL meant", async (value, said) => {
    const r = await runCli(["-e", "hello"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: value },
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `scoot: configuration error: SCOOT_BACKEND_BASE_URL: ${JSON.stringify(value)} ${said}\n`,
    );
  });

  it("--base-url gets the same check and hint (a usage error, exit 2)", async () => {
    const r = await runCli(["--base-url", "localhost:8080", "-e", "hello"], {
      home: scene.home,
      cwd: scene.project,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'scoot: --base-url: "localhost:8080" does not start with http:// or https://; write it as http://localhost:8080/v1\n',
    );
  });

  it("a backend.ca_file that cannot be read stops a run before any request: exit 2, not a backend failure", async () => {
    scene.server = await startScriptedServer([step("final", "never asked")]);
    const missing = path.join(scene.home, "missing.pem");
    const r = await runCli(["-e", "hello"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_CA_FILE: missing },
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `scoot: configuration error: backend.ca_file ${missing}: cannot read: no such file\n`,
    );
    expect(scene.server.requests).toEqual([]);
  });

  it("doctor lists every problem as its own FAIL line", async () => {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      ["[backend]", 'base_url = "http//x"', "[agent]", "max_turns = 0", ""].join("\n"),
    );
    const r = await runCli(["doctor"], { home: scene.home, cwd: scene.project });
    expect(r.code).toBe(1);
    const fails = lines(r.stdout).filter((l) => l.includes("FAIL") && l.includes("config"));
    expect(fails).toHaveLength(2);
    expect(fails[0]).toContain('backend.base_url: "http//x" is not a URL');
    expect(fails[1]).toContain("agent.max_turns: must be in 1..100000, got 0");
  });
});
